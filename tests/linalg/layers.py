#!/usr/bin/env python3
"""The linalg type folders include each other in one order only:

    numeric <- nmod <- zmat <- qmat <- fmat

(word-size modular kernels, then integer matrices, then rationals through them, then certified floating
point, which uses all three). A file of a folder may include files of the folders before it, never after
it; includes through the shared linalg headers (linalg/*.hpp) count as the includes they lead to. Fails,
naming the include chain, when an include goes the other way (and so when a cycle between the folders
reappears).

    python3 tests/linalg/layers.py SOURCE_DIR
"""
import os
import re
import sys

ORDER = ["numeric", "nmod", "zmat", "qmat", "fmat"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """The layer of a file (path relative to the source root), or None for a shared linalg file."""
    parts = rel.split("/")
    if parts[:2] == ["include", "memcert"]:
        parts = parts[2:]
    elif parts[0] == "src":
        parts = parts[1:]
    else:
        return None
    if parts[0] == "numeric":
        return "numeric"
    if parts[0] == "linalg" and len(parts) > 2 and parts[1] in ORDER:
        return parts[1]
    return None


def main(root):
    files = []
    for top in ("include/memcert/linalg", "src/linalg", "include/memcert/numeric", "src/numeric"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".hpp", ".cpp", ".h")):
                    files.append(os.path.relpath(os.path.join(d, n), root))
    known = set(files)
    edges = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        out = []
        for inc in INCLUDE.findall(text):
            for cand in ("include/" + inc, os.path.normpath(os.path.join(os.path.dirname(f), inc))):
                if cand in known:
                    out.append(cand)
                    break
        edges[f] = out

    errors = []
    for f in files:
        lf = layer_of(f)
        if lf is None:
            continue
        # Everything f reaches through shared (layer-less) files, stopping at the first file with a layer.
        stack = [(g, [f, g]) for g in edges[f]]
        seen = set()
        while stack:
            g, chain = stack.pop()
            if g in seen:
                continue
            seen.add(g)
            lg = layer_of(g)
            if lg is None:
                stack.extend((h, chain + [h]) for h in edges[g])
            elif ORDER.index(lg) > ORDER.index(lf):
                errors.append(f"{lf} includes {lg}: " + " -> ".join(chain))
    if errors:
        print(f"linalg layers ({' <- '.join(ORDER)}): {len(errors)} include(s) against the order", file=sys.stderr)
        for e in sorted(errors):
            print("  " + e, file=sys.stderr)
        return 1
    print(f"linalg layers: {len(files)} files, every include follows {' <- '.join(ORDER)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: layers.py SOURCE_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
