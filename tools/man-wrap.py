#!/usr/bin/env python3
"""Wrap the text lines (not requests) of a roff page at 78 columns; used when editing man pages."""
import sys, textwrap
for path in sys.argv[1:]:
    out = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith((".", "'")) or len(line) <= 78:
            out.append(line)
        else:
            out.extend(textwrap.wrap(line, 78, break_long_words=False, break_on_hyphens=False))
    open(path, "w", encoding="utf-8").write("\n".join(out))
