#!/usr/bin/env python3
"""Counts the public functions of the safe crate (hip/src) that can fail (they return a `Result`), and of
those how many have an example (a fenced code block) and an `# Errors` section in their doc comment.

Read from the sources: a `pub fn` (also `pub unsafe fn`, `pub async fn`, `pub const fn`), or a `fn` of a
`pub trait`, outside test files and `#[cfg(test)]` modules, whose signature up to its body names `Result<`
or `hip::Result`. `pub(crate)` and narrower are not counted.
Usage: scripts/doc-coverage.py [--list] [SRC_DIR (default hip/src)]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "hip" / "src"
FN = re.compile(r"^\s*pub\s+(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")
TRAIT_FN = re.compile(r"^    (?:unsafe\s+)?fn\s+(\w+)")


def functions(path):
    lines = path.read_text().splitlines()
    doc, attrs_test, skip_depth, depth = [], False, None, 0
    in_trait = False
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if skip_depth is None and s.startswith("#[cfg(test)]"):
            attrs_test = True
        if s.startswith("///"):
            doc.append(s[3:])
        elif s.startswith("#[") or s == "":
            pass
        else:
            if re.match(r"^pub (?:unsafe )?trait\s", line):
                in_trait = True
            elif line.startswith("}"):
                in_trait = False
            m = FN.match(line) or (TRAIT_FN.match(line) if in_trait else None)
            if m and skip_depth is None:
                sig = line
                j = i
                while "{" not in sig and ";" not in sig and j + 1 < len(lines):
                    j += 1
                    sig += " " + lines[j].strip()
                sig = sig.split("{")[0]
                if "Result<" in sig or re.search(r"->\s*(?:crate::|hip::)?Result\b", sig):
                    text = "\n".join(doc)
                    yield m.group(1), "```" in text, re.search(r"^\s*#\s*Errors\b", text, re.M) is not None
            if attrs_test and skip_depth is None and re.match(r"^\s*(pub\s+)?mod\s+\w+\s*\{", line):
                skip_depth = depth
            doc = []
            attrs_test = False if not s.startswith("#[") else attrs_test
        depth += line.count("{") - line.count("}")
        if skip_depth is not None and depth <= skip_depth:
            skip_depth = None
        i += 1


def main():
    total = ex = err = 0
    rows = []
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = pathlib.Path(args[0]) if args else ROOT
    for p in sorted(root.rglob("*.rs")):
        if "test" in p.name or "fuzz" in p.name:
            continue
        for name, has_ex, has_err in functions(p):
            total += 1
            ex += has_ex
            err += has_err
            rows.append(f"{'E' if has_ex else '-'}{'R' if has_err else '-'} {p.relative_to(root)}::{name}")
    if "--list" in sys.argv:
        print("\n".join(rows))
    print(f"public functions that can fail: {total}; with an example: {ex}; with `# Errors`: {err}")


main()
