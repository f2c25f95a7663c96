#!/usr/bin/env python3
"""Checks the docs pages and every link to them, as GitHub renders them.

Links checked:
- `docs/<page>.md` and `docs/<page>.md#<anchor>` written anywhere in README.md and the sources,
  configs, scripts, tests and docs (or `docs/<folder>/<page>.md`): the page must exist and, with
  an anchor, have a heading of that anchor;
- `[text](<target>)` links in README.md, docs/ and every other Markdown file: `(#anchor)` names a
  heading of the same file; `(<path>.md)` and `(<path>.md#anchor)`, relative to the file's folder,
  must name an existing Markdown file of the checkout and one of its headings.

A heading's anchor is GitHub's slug (`{#id}` names none: GitHub ignores it): the heading text
without its leading #s and surrounding spaces, inline markup reduced to its text (backticks
dropped, `[text](url)` to text, `*` and `_` emphasis markers dropped; `_` inside a word or a code
span stays), lower-cased; every character that is not a letter, digit, space, hyphen or
underscore removed (Unicode letters stay); each space replaced by a hyphen (runs are not
collapsed: "a + b" is `a--b`); the second heading of the same slug on a page gets `-1`, the third
`-2`, and so on. Headings inside ``` fences do not count.

Rules for the pages (docs/**/*.md):
- no `{#id}` attribute after a heading: GitHub shows it as text and links to `#id` go nowhere;
- at most 500 lines: split a longer page by subject;
- line 1 is the page's `# Title`; then, after at most one blank line, the first paragraph starts
  with "The reference for " and says what the page is the reference for
  ("The reference for the ONNX reader: ...").

Usage: scripts/check_doc_links.py [ROOT]   (prints one line per problem, `FILE:LINE: what`, and
exits 1; prints "every docs link resolves" and exits 0 when there is none). Standard library only.
"""
import os
import re
import sys

SOURCE_DIRS = ("sim", "models", "frontends", "configs", "docs", "scripts", "python", "tests", "fuzz", "sweeps",
               "examples", ".ci")
SOURCE_EXT = (".cpp", ".h", ".py", ".yaml", ".md", ".txt", ".sh", ".cmake", ".json", ".tsv")
SKIP_DIRS = ("build", "build-asan", "build-fuzz")
MAX_LINES = 500
MAX_BYTES = 4 << 20
FIRST_SENTENCE = "The reference for "

HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
ATTRIBUTE = re.compile(r"\{#[^}]*\}\s*$")
DOCS_MENTION = re.compile(r"(?<![A-Za-z0-9_./-])docs/([A-Za-z0-9_/-]+\.md)(?:#([A-Za-z0-9_-]+))?")
MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")


def slug(title):
    """GitHub's anchor of a heading's text (without the -N suffix of repeats)."""
    out = []
    for i, part in enumerate(re.split(r"(`+[^`]*`+)", title)):
        if i % 2:  # a code span: its text as is
            out.append(part.strip("`"))
            continue
        part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)  # links and images: their text
        part = re.sub(r"<[^>]+>", "", part)  # inline HTML tags
        part = part.replace("*", "")
        part = re.sub(r"(?<![^\W_])_+|_+(?![^\W_])", "", part)  # emphasis underscores, not a_b
        out.append(part)
    s = "".join(out).strip().lower()
    s = re.sub(r"[^\w\- ]", "", s, flags=re.UNICODE)
    return s.replace(" ", "-")


def headings(lines):
    """(line number, level, text) of each heading outside ``` fences."""
    fence = False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = HEADING.match(line)
        if not fence and m:
            yield n, len(m.group(1)), m.group(2)


def anchors_of(lines):
    out, seen = set(), {}
    for _, _, title in headings(lines):
        base = slug(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def read_lines(path):
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")
    except (UnicodeDecodeError, OSError):
        return None


def page_problems(rel, lines):
    problems = []
    for n, _, title in headings(lines):
        m = ATTRIBUTE.search(title)
        if m:
            problems.append((n, "heading attribute %s: GitHub shows it as text; link to the heading's own "
                                "anchor #%s instead" % (m.group(0).strip(), slug(title[:m.start()]))))
    count = len(lines) - (1 if lines and lines[-1] == "" else 0)
    if count > MAX_LINES:
        problems.append((1, "%d lines, at most %d: split the page by subject" % (count, MAX_LINES)))
    if not lines or not re.match(r"^# \S", lines[0]):
        problems.append((1, "the page must start with its `# Title`"))
    else:
        i = 2 if len(lines) > 2 and lines[1].strip() == "" else 1
        if i >= len(lines) or not lines[i].startswith(FIRST_SENTENCE):
            problems.append((i + 1, "after the title (and at most one blank line) the first paragraph must start "
                                    "with \"%s\" and say what the page is the reference for" % FIRST_SENTENCE))
    return [(rel, n, what) for n, what in problems]


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    docs = os.path.join(root, "docs")
    problems = []

    files = [os.path.join(root, "README.md")]
    for d in SOURCE_DIRS:
        for base, dirs, names in os.walk(os.path.join(root, d)):
            dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x not in SKIP_DIRS)
            for n in sorted(names):
                p = os.path.join(base, n)
                if n.endswith(SOURCE_EXT) or ("." not in n and d in ("scripts", ".ci")):
                    files.append(p)
    texts = {}
    for p in files:
        lines = read_lines(p)
        if lines is not None:
            texts[p] = lines

    anchor_cache = {}

    def anchors(path):
        if path not in anchor_cache:
            lines = texts.get(path)
            if lines is None:
                lines = read_lines(path) or []
            anchor_cache[path] = anchors_of(lines)
        return anchor_cache[path]

    for path in sorted(p for p in texts if p.startswith(docs + os.sep) and p.endswith(".md")):
        problems += page_problems(os.path.relpath(path, root), texts[path])

    def check(rel, n, shown, target, anchor):
        if not os.path.isfile(target):
            problems.append((rel, n, "%s: no such page" % shown))
        elif anchor and anchor not in anchors(target):
            problems.append((rel, n, "%s: no such heading" % shown))

    for path in sorted(texts):
        rel = os.path.relpath(path, root)
        lines = texts[path]
        for n, line in enumerate(lines, 1):
            for m in DOCS_MENTION.finditer(line):
                if path.endswith(".md") and re.search(r"\]\(\s*<?$", line[:m.start()]):
                    continue  # a Markdown link's target: checked below, relative to the file
                page, anchor = m.group(1), m.group(2)
                check(rel, n, m.group(0), os.path.join(docs, page), anchor)
            if not path.endswith(".md"):
                continue
            for m in MD_LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                    continue  # a URL or an absolute path
                page, _, anchor = target.partition("#")
                if page and not page.endswith(".md"):
                    continue
                if not page and not anchor:
                    continue
                dest = os.path.normpath(os.path.join(os.path.dirname(path), page)) if page else path
                if page and not (dest + os.sep).startswith(root + os.sep):
                    continue  # outside the checkout (../shared/...)
                check(rel, n, "(%s)" % target, dest, anchor)

    problems = sorted(set(problems))
    for rel, n, what in problems:
        print("%s:%d: %s" % (rel, n, what))
    print("%d problem(s)" % len(problems) if problems else "every docs link resolves")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
