#!/usr/bin/env python3
"""Finds rustdoc links that lead nowhere in built HTML (rustdoc does not warn on them):

- an intra-doc link whose target rustdoc would not link to (a `#[doc(hidden)]` or private item) renders
  as literal text, `[<code>Name</code>]`;
- a relative `href` to a page that was not generated (an item hidden since the link was written).

Usage: scripts/check-doc-links.py DOC_DIR CRATE... (e.g. target/doc hip hip_sys). Exit status 1 on any.
"""
import html
import pathlib
import re
import sys

LITERAL = re.compile(r"\[<code>([^<]{1,80})</code>\]")
HREF = re.compile(r'href="([^"#?:]+\.html)(?:#[^"]*)?"')
PRE = re.compile(r"<pre[^>]*>.*?</pre>", re.S)


def main():
    root = pathlib.Path(sys.argv[1])
    bad = []
    for crate in sys.argv[2:]:
        for page in sorted((root / crate).rglob("*.html")):
            text = PRE.sub("", page.read_text(errors="replace"))
            for m in LITERAL.finditer(text):
                bad.append(f"{page.relative_to(root)}: unresolved link [{html.unescape(m.group(1))}]")
            for m in HREF.finditer(text):
                if "src/" in m.group(1):
                    continue  # a [src] link: rustdoc's source pages, not a doc link
                target = (page.parent / m.group(1)).resolve()
                if not target.exists():
                    bad.append(f"{page.relative_to(root)}: link to missing page {m.group(1)}")
    for line in sorted(set(bad)):
        print(line)
    if bad:
        print(f"{len(set(bad))} links lead nowhere (a hidden or private item?)", file=sys.stderr)
        return 1
    print(f"doc links: every link of {', '.join(sys.argv[2:])} leads to a page")
    return 0


sys.exit(main())
