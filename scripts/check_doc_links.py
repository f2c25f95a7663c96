#!/usr/bin/env python3
"""Checks that every link to a docs page and heading resolves: `docs/<page>.md#<anchor>` written
anywhere in the sources, configs, scripts and docs, and `(<page>.md#<anchor>)` / `(#<anchor>)`
links inside docs/*.md and README.md. A heading's anchor is GitHub's: lower case, punctuation
dropped, spaces to hyphens, -1, -2 ... for repeats; `{#name}` after a heading names it too.

Usage: scripts/check_doc_links.py [ROOT]   (exit 1 listing every broken link, 0 when all resolve)
Python standard library only.
"""
import os
import re
import sys

SOURCE_DIRS = ("sim", "models", "frontends", "configs", "docs", "scripts", "python", "tests", "fuzz", "sweeps", "examples")
SOURCE_EXT = (".cpp", ".h", ".py", ".yaml", ".md", ".txt", ".sh", ".cmake")


def slug(title):
    s = title.strip().lower()
    s = re.sub(r"[`*_~]", lambda m: "_" if m.group(0) == "_" else "", s)
    s = re.sub(r"[^\w\- ]", "", s, flags=re.UNICODE)
    return s.replace(" ", "-")


def anchors_of(path):
    out, seen, fence = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
            if fence or not m:
                continue
            title = m.group(2)
            explicit = re.search(r"\{#([A-Za-z0-9_-]+)\}\s*$", title)
            if explicit:
                out.add(explicit.group(1))
                title = title[:explicit.start()]
            base = slug(title)
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    docs = os.path.join(root, "docs")
    pages = {p: anchors_of(os.path.join(docs, p)) for p in os.listdir(docs) if p.endswith(".md")}
    files = [os.path.join(root, "README.md")]
    for d in SOURCE_DIRS:
        for base, dirs, names in os.walk(os.path.join(root, d)):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            files += [os.path.join(base, n) for n in names if n.endswith(SOURCE_EXT)]
    broken = []
    for path in sorted(files):
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        rel = os.path.relpath(path, root)
        links = [(m.group(1), m.group(2)) for m in re.finditer(r"docs/([A-Za-z0-9_]+\.md)#([A-Za-z0-9_-]+)", text)]
        if path.endswith(".md"):
            here = os.path.basename(path) if os.path.dirname(path) == docs else None
            for m in re.finditer(r"\]\(([A-Za-z0-9_]*\.md)?#([A-Za-z0-9_-]+)\)", text):
                page = m.group(1) or here
                if page and (m.group(1) is None or os.path.dirname(path) == docs):
                    links.append((page, m.group(2)))
        for page, anchor in links:
            if page not in pages:
                broken.append("%s: docs/%s#%s: no such page" % (rel, page, anchor))
            elif anchor not in pages[page]:
                broken.append("%s: docs/%s#%s: no such heading" % (rel, page, anchor))
    for b in sorted(set(broken)):
        print(b)
    print("%d broken link(s)" % len(set(broken)) if broken else "every docs link resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
