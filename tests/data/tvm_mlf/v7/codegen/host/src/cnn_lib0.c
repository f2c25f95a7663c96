// generated operator code (stub)
