#!/usr/bin/env python3
"""docs/CERTIFICATES.md against the checker: every kind the checker registers
(src/checker/kernel/verify.cpp) has a section there with a "not checked" table, and for honest
certificates of every kind (written here by the CLI at small sizes, two enclosure certificates by hand)
`memcert verify --json` lists under not_checked exactly what that table says:
  - every entry verify reports is a row of the kind's table (a new entry without a row fails);
  - every row is reported by at least one of the certificates below (a row without an entry fails);
  - a row whose "reported when" starts with "not read by the checker" is a field the check never read (at
    any depth), reported as "PATH (not read by the checker)", and no other row is.
An entry is matched by its key: its text up to the first ": " or " (", with every [index] written [h].
Also, for every kind, a field added at the top level of a valid certificate is reported as not read, and
so is one added inside every nested object, by its path.
    spec_fields.py MEMCERT SOURCE_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MEMCERT, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
WORK = tempfile.mkdtemp(prefix="memcert_spec_fields_")
FAILURES = []
NOT_READ = "(not read by the checker)"


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def run(*args):
    return subprocess.run([MEMCERT, "--quiet", *args], capture_output=True, text=True, cwd=WORK)


def path(name):
    return os.path.join(WORK, name)


def produce(*args):
    r = run(*args)
    if r.returncode not in (0, 1):  # 1: a construction that memorizes fewer than all examples still writes
        fail(f"memcert {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")


def edit(src, dst, change):
    with open(path(src)) as f:
        j = json.load(f)
    change(j)
    with open(path(dst), "w") as f:
        json.dump(j, f)


def registered_kinds():
    with open(os.path.join(SRC, "src", "checker", "kernel", "verify.cpp")) as f:
        return re.findall(r'^\s*X\("([a-z0-9-]+)", check_\w+\)', f.read(), re.M)


def doc_tables():
    """{kind: {key: when}} from the sections '## kind `X` ...' of docs/CERTIFICATES.md."""
    with open(os.path.join(SRC, "docs", "CERTIFICATES.md")) as f:
        lines = f.read().splitlines()
    tables, kind, i = {}, None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            m = re.match(r"## kind `([a-z0-9-]+)`", line)
            kind = m.group(1) if m else None
        elif kind and re.match(r"^\| not checked \| reported when \|$", line):
            if kind in tables:
                fail(f"CERTIFICATES.md: kind {kind} has two not-checked tables")
            rows = {}
            i += 2  # the header and its |---| line
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                m = re.fullmatch(r"`([^`]+)`", cells[0])
                if cells[0] != "(none)":
                    if not m:
                        fail(f"CERTIFICATES.md: kind {kind}: row {lines[i]!r}: expected `KEY` or (none)")
                    else:
                        rows[m.group(1)] = cells[1] if len(cells) > 1 else ""
                i += 1
            tables[kind] = rows
            continue
        i += 1
    return tables


def key_of(entry):
    cut = min([k for k in (entry.find(": "), entry.find(" (")) if k >= 0], default=len(entry))
    return re.sub(r"\[\d+\]", "[h]", entry[:cut])


def verify(name, *extra):
    r = run("verify", path(name), "--json", *extra)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        fail(f"verify {name}: exit {r.returncode}, no JSON: {r.stderr.strip()}")
        return None
    if r.returncode != 0 or not j.get("valid"):
        fail(f"verify {name} {' '.join(extra)}: expected valid, got exit {r.returncode}: {j.get('reason')}")
        return None
    return j


# ---- honest certificates of every kind -------------------------------------------------------------
B = produce
with open(path("m.json"), "w") as f:  # rank 2: a kernel and a minor
    json.dump([[1, 2, 3], [2, 4, 6], [1, 0, 1]], f)
with open(path("v.json"), "w") as f:
    json.dump([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], f)
B("rank", path("m.json"), "--cert", path("rank.json"))
B("kruskal", path("v.json"), "--cert", path("kruskal.json"))
ENCLOSURE = ('{"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":{"rows":2,"cols":3,"data":'
             '[["2","0","0"],["0","3","0"]]},"radius":{"rows":2,"cols":3,"data":[["0.7","0.7","0.7"],'
             '["0.7","0.7","0.7"]]},"rows":[0,1],"mu":"3","rank_lower":2%s}')
with open(path("enclosure.json"), "w") as f:
    f.write(ENCLOSURE % "")
with open(path("enclosure_rump.json"), "w") as f:
    f.write((ENCLOSURE % ',"method":"double-rump"').replace('"enclosure-rank"', '"enclosure-rank-rump"'))
# theorem1: T = 7 = H(r-1)+1 with H = 3, r = 3 (the theorem's weights), and the variants each "not checked"
# row needs.
B("generate", "theorem1", "--T", "7", "--n", "4", "--d", "6", "--seed", "1", "--out", path("t7.json"))
B("construct", "theorem1", path("t7.json"), "--heads", "3", "--dh", "3", "--beyond", "off", "--out", path("t1.json"))
B("generate", "theorem1", "--T", "10", "--n", "4", "--d", "6", "--seed", "1", "--out", path("t10.json"))
B("construct", "theorem1", path("t10.json"), "--heads", "3", "--dh", "3", "--out", path("t1_generic.json"))
B("construct", "theorem1", path("t7.json"), "--heads", "3", "--dh", "3", "--beyond", "off", "--c", "1000",
  "--out", path("t1_chosen_c.json"))
B("generate", "theorem1", "--T", "20", "--n", "4", "--d", "8", "--seed", "1", "--out", path("t20.json"))
B("construct", "theorem1", path("t20.json"), "--heads", "7", "--dh", "4", "--beyond", "off", "--out", path("t1_b2.json"))
B("generate", "theorem1", "--T", "10", "--n", "4", "--d", "6", "--C", "3", "--seed", "1", "--out", path("tc.json"))
B("construct", "theorem1", path("tc.json"), "--heads", "4", "--dh", "4", "--out", path("t1_classes.json"))
edit("t1_classes.json", "t1_classes_and_labels.json",
     lambda j: j["data"].__setitem__("labels", [[0]] * len(j["data"]["class_labels"])))
edit("t7.json", "t7_nolabels.json", lambda j: j.pop("labels"))
B("construct", "theorem1", path("t7_nolabels.json"), "--heads", "3", "--dh", "3", "--beyond", "off", "--data-ref", "on",
  "--out", path("t1_ref.json"))
# Against a DATA holding exactly the certificate's examples (here the 18 rows of 22 that generic weights
# with H d = 18 memorize) "examples" is compared in order and said to be not tied.
B("generate", "theorem1", "--T", "22", "--n", "4", "--d", "6", "--seed", "1", "--out", path("t22.json"))
B("construct", "theorem1", path("t22.json"), "--heads", "3", "--dh", "3", "--out", path("t1_subset.json"))


def examples_only(j):
    with open(path("t1_subset.json")) as f:
        rows = json.load(f)["examples"]
    for key in ("contexts", "queries", "labels"):
        j[key] = [j[key][r] for r in rows]
edit("t22.json", "t22_examples.json", examples_only)
B("generate", "ks", "--N", "20", "--n", "4", "--d", "3", "--seed", "1", "--out", path("ks_data.json"))
B("construct", "ks", path("ks_data.json"), "--out", path("ks.json"))
B("construct", "ks", path("ks_data.json"), "--deep-sets", "--out", path("ks_d1.json"))
edit("ks_data.json", "ks_nolabels.json", lambda j: j.pop("labels"))
B("claims", "run", "mahdavi24/lemma-2", "--instances", "1", "--cert-dir", path("claims"))
B("claims", "run", "dana24/lemma-2", "--instances", "1", "--cert-dir", path("dclaims"))
B("generate", "dana24", "--N", "5", "--S", "2", "--T", "12", "--seed", "7", "--out", path("d_data.json"))
B("construct", "dana24", path("d_data.json"), "--heads", "4", "--dh", "2", "--d", "4", "--out", path("dana24.json"))
B("generate", "theorem1", "--T", "13", "--n", "4", "--d", "6", "--seed", "1", "--out", path("m_data.npz"))
B("construct", "theorem1", path("m_data.npz"), "--heads", "4", "--dh", "4", "--out", path("t13.json"),
  "--weights-out", path("w.npz"))
B("certify", path("w.npz"), path("m_data.npz"), "--arch", "mha", "--tolerance", "1e-6", "--out", path("model.json"))

claims = sorted(os.listdir(path("claims"))) if os.path.isdir(path("claims")) else []
dclaims = sorted(os.listdir(path("dclaims"))) if os.path.isdir(path("dclaims")) else []
CASES = [  # (kind, certificate, verify's extra arguments)
    ("rank", "rank.json", ()),
    ("kruskal", "kruskal.json", ()),
    ("enclosure-rank", "enclosure.json", ()),
    ("enclosure-rank-rump", "enclosure_rump.json", ()),
    ("theorem1", "t1.json", ()),
    ("theorem1", "t1_generic.json", ()),
    ("theorem1", "t1_chosen_c.json", ()),
    ("theorem1", "t1_b2.json", ()),
    ("theorem1", "t1_classes_and_labels.json", ()),
    ("theorem1", "t1_ref.json", ()),
    ("theorem1", "t1.json", ("--data", path("t7_nolabels.json"))),
    ("theorem1", "t1_subset.json", ("--data", path("t22_examples.json"))),
    ("ks", "ks.json", ()),
    ("ks", "ks_d1.json", ()),
    ("ks", "ks.json", ("--data", path("ks_data.json"))),
    ("ks", "ks.json", ("--data", path("ks_nolabels.json"))),
    ("claim", os.path.join("claims", claims[0]) if claims else "claims/missing.json", ()),
    ("dana24-claim", os.path.join("dclaims", dclaims[0]) if dclaims else "dclaims/missing.json", ()),
    ("dana24", "dana24.json", ()),
    ("dana24", "dana24.json", ("--data", path("d_data.json"))),
    ("model", "model.json", ()),
]

# ---- the comparison ------------------------------------------------------------------------------
tables = doc_tables()
kinds = registered_kinds()
if len(kinds) < 10:
    fail(f"verify.cpp: found only {len(kinds)} registered kinds ({kinds})")
for k in kinds:
    if k not in tables:
        fail(f"CERTIFICATES.md: kind {k} (registered in verify.cpp) has no section with a not-checked table")
for k in tables:
    if k not in kinds:
        fail(f"CERTIFICATES.md: a not-checked table for kind {k}, which the checker does not register")
observed = {k: {} for k in kinds}  # kind -> key -> (entry, not-read flag)
for kind, name, extra in CASES:
    if kind not in observed:
        continue
    j = verify(name, *extra)
    if j is None:
        continue
    if j.get("kind") != kind:
        fail(f"verify {name}: kind {j.get('kind')}, expected {kind}")
        continue
    for entry in j.get("not_checked", []):
        observed[kind].setdefault(key_of(entry), (entry, entry.endswith(NOT_READ)))
for kind in kinds:
    rows = tables.get(kind, {})
    if not any(c[0] == kind for c in CASES):
        fail(f"kind {kind}: no certificate of it in this test")
    for key, (entry, not_read) in observed[kind].items():
        if key not in rows:
            fail(f"kind {kind}: verify lists {entry!r} under not_checked; CERTIFICATES.md's table has no row `{key}`")
        elif rows[key].startswith("not read by the checker") != not_read:
            fail(f"kind {kind}: `{key}`: verify says {entry!r}, the table says {rows[key]!r}")
    for key in rows:
        if key not in observed[kind]:
            fail(f"kind {kind}: CERTIFICATES.md lists `{key}` as not checked; no certificate here made verify list it")

# A field the check never reads, added to a valid certificate of every kind, is listed as not read.
seen = set()
for kind, name, extra in CASES:
    if kind in seen or extra:
        continue
    seen.add(kind)
    extra_name = "extra_" + os.path.basename(name)
    try:
        edit(name, extra_name, lambda j: j.__setitem__("zz_unknown_field", "x"))
    except (OSError, ValueError) as e:
        fail(f"{name}: {e}")
        continue
    j = verify(extra_name)
    if j is not None and "zz_unknown_field " + NOT_READ not in j.get("not_checked", []):
        fail(f"kind {kind}: an added top-level field is not listed as not read: {j.get('not_checked')}")


# A key added inside every nested object of a valid certificate (objects in objects and in arrays, at any
# depth, except inside a field already reported whole) is listed with its path: `outer.key`, `list[i].key`,
# and once as `list[*].key` when it stands at every index of the list (two or more).
def objects_below(value, path, starred, out):
    """(concrete path, starred path, object) of every object below `value` (not `value` itself)."""
    if isinstance(value, dict):
        for k, v in value.items():
            p, q = (f"{path}.{k}" if path else k), (f"{starred}.{k}" if starred else k)
            if isinstance(v, dict):
                out.append((p, q, v))
            objects_below(v, p, q, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            p, q = f"{path}[{i}]", f"{starred}[*]"
            if isinstance(v, dict):
                out.append((p, q, v))
            objects_below(v, p, q, out)


def inside(path, reported):
    return any(path == r or path.startswith(r + ".") or path.startswith(r + "[") for r in reported)


NESTED = "zz_nested_field"
nested_checked = 0
seen = set()
for kind, name, extra in CASES:
    if kind in seen or extra:
        continue
    seen.add(kind)
    honest = verify(name)
    if honest is None:
        continue
    whole = {e[: -len(NOT_READ) - 1] for e in honest.get("not_checked", []) if e.endswith(NOT_READ)}
    with open(path(name)) as f:
        cert = json.load(f)
    found = []
    objects_below(cert, "", "", found)
    targets = [(p, q, o) for p, q, o in found if not inside(p, whole)]
    if not targets:
        continue
    for _, _, o in targets:
        o[NESTED] = 1
    nested_name = "nested_" + os.path.basename(name)
    with open(path(nested_name), "w") as f:
        json.dump(cert, f)
    per_starred = {}
    for p, q, _ in targets:
        per_starred.setdefault(q, []).append(p)
    want = set()
    for q, ps in per_starred.items():
        # Every object at a starred path got the key, so it is unread at every index: [*] when two or more.
        want |= {f"{q}.{NESTED}"} if len(ps) > 1 else {f"{ps[0]}.{NESTED}"}
    j = verify(nested_name)
    if j is None:
        continue
    got = {e[: -len(NOT_READ) - 1] for e in j.get("not_checked", []) if e.endswith(NOT_READ)} - whole
    nested_checked += len(targets)
    if got != want:
        fail(f"kind {kind}: keys added in nested objects: missing {sorted(want - got)}, unexpected {sorted(got - want)}")
    if j.get("applied") != honest.get("applied"):
        fail(f"kind {kind}: keys added in nested objects changed what the check applied")

if not os.environ.get("SPEC_FIELDS_KEEP"): shutil.rmtree(WORK, ignore_errors=True)
print(f"spec_fields: {len(CASES)} certificates of {len(kinds)} kinds against CERTIFICATES.md, {nested_checked} keys "
      f"added in nested objects; {len(FAILURES)} failure(s)")
sys.exit(1 if FAILURES else 0)
