"""Helper server for tests/cli/run.sh: one python process answers every request, so the shell test
doesn't pay python's start-up per check. Requests are single lines of tab-separated fields; each
answer is one line, "1" (success) or "0 <why>".

  stdout PATH EXPR          PATH holds exactly one JSON object on one line and EXPR (bound to j) is true
  file PATH EXPR            PATH is a JSON file and EXPR (bound to j) is true
  npy PATH DESCR SHAPE VALUES            write a .npy (v1, C order) with struct: npy m.npy <f8 2,3 0.1,2,...
  npz PATH stored|deflated NAME=DESCR:SHAPE:VALUES...   write an .npz as numpy.savez does (zip64 headers)
  alter IN OUT STATEMENT    load JSON IN as j, exec STATEMENT, write OUT
  pt PATH KEY NUMEL         a torch.save archive (written by hand) whose state_dict holds KEY: a float32
                            view of NUMEL elements, stride 0, over a storage of one element
  npzadd PATH NAME NUMEL    append to the .npz PATH a deflated member NAME.npy of NUMEL float64 zeros
  twins A B                 `verify --json` outputs A (default) and B (portable): both empty, or their last
                            lines equal but for "portable" (false in A, true in B) and "seconds"
EXPR and STATEMENT may call digest(PATH, T): the digest of the first T examples of the JSON attention
data set at PATH, computed here from its layout in docs/CERTIFICATES.md ("Data by reference"); EXPR may
call lowest_terms(v): every "p/q" string in v is in lowest terms.
Only the standard library is used (no numpy)."""
import fractions
import hashlib
import json
import struct
import sys
import zipfile


def npy_bytes(descr, shape, values):
    shape = tuple(int(s) for s in shape.split(",") if s)
    vals = [float(v) if descr[1] == "f" else int(v) for v in values.split(",") if v]
    shape_txt = "(%s,)" % shape[0] if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"f8": "d", "f4": "f", "i8": "q", "i4": "i", "i2": "h", "i1": "b", "u8": "Q", "u4": "I", "u2": "H", "u1": "B"}[descr[1:]]
    data = b"".join(struct.pack(descr[0].replace("|", "<") + fmt, v) for v in vals)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def digest(path, T, version=2):
    """sha256 of "memcert-attention-v2 T n d", the little-endian binary64 values of the first T
    contexts (row-major) then queries (-0 counts as +0; the values must be exactly doubles), then the
    labels' text: "labels none", "labels classes" + " c" per example, or "labels real d_out" + " p/q"
    per entry in lowest terms. version=1: the older digest, contexts and queries only."""
    data = json.load(open(path))
    ctx, qs = data["contexts"][:T], data["queries"][:T]
    n, d = len(ctx[0]), len(ctx[0][0])

    def exact(v):
        q = fractions.Fraction(str(v))
        x = float(q)
        assert fractions.Fraction(x) == q, "not a double: %s" % v
        return x + 0.0

    h = hashlib.sha256(("memcert-attention-v%d %d %d %d" % (version, T, n, d)).encode())
    h.update(b"".join(struct.pack("<d", exact(v)) for e in ctx for row in e for v in row))
    h.update(b"".join(struct.pack("<d", exact(v)) for q in qs for v in q))
    if version >= 2:
        if data.get("class_labels") is not None:
            text = "labels classes" + "".join(" %d" % int(c) for c in data["class_labels"][:T])
        elif data.get("labels") is not None:
            rows = [r if isinstance(r, list) else [r] for r in data["labels"][:T]]
            text = "labels real %d" % len(rows[0]) + "".join(" " + str(fractions.Fraction(str(v))) for r in rows for v in r)
        else:
            text = "labels none"
        h.update(text.encode())
    return "sha256:" + h.hexdigest()


def ks_digest(path):
    """sha256 of a ks sequence file's canonical content (JSON with "sequences" [N][n][d]): "memcert-ks-v1
    N n d\n", the distinct token vectors in order of first use (each "p/q" numbers in lowest terms joined by
    spaces, then "\n"), "ids\n" and every position's index in that list as 4-byte little-endian, then
    "labels sequence" + " c" per sequence or "labels token" + " c" per token (or "labels none")."""
    data = json.load(open(path))
    seqs = data["sequences"]
    N, n, d = len(seqs), len(seqs[0]), len(seqs[0][0])
    first, rows, ids = {}, [], []
    for s in seqs:
        for tok in s:
            key = " ".join(str(fractions.Fraction(str(v))) for v in tok) + "\n"
            if key not in first:
                first[key] = len(rows)
                rows.append(key)
            ids.append(first[key])
    h = hashlib.sha256(("memcert-ks-v1 %d %d %d\n" % (N, n, d)).encode())
    h.update("".join(rows).encode())
    h.update(b"ids\n" + b"".join(struct.pack("<I", i) for i in ids))
    if data.get("token_labels") is not None:
        text = "labels token" + "".join(" %d" % int(c) for r in data["token_labels"] for c in r)
    elif data.get("labels") is not None:
        text = "labels sequence" + "".join(" %d" % int(c) for c in data["labels"])
    else:
        text = "labels none"
    h.update(text.encode())
    return "sha256:" + h.hexdigest()


def t1_checksum(j):
    """A theorem1 certificate's trace_checksum recomputed (FNV-1a 64 over its descriptive fields), so a
    test can edit a field it covers as an adversary would: the checksum is never evidence."""
    def text(v):
        if isinstance(v, str):
            return v
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return ",".join(json.dumps(x, separators=(",", ":")) for x in v)
        return json.dumps(v, separators=(",", ":"))
    s = ""
    for e in j["trace"]:
        for k in ["lemma3_attempts", "target_attempts", "eps_b2_estimate", "sigma_lower", "c_weyl", "step_sigma_lower"]:
            s += k + "=" + (text(e[k]) if k in e else "missing") + ";"
    for k in ["hypotheses", "notes", "labels_generated", "examples"]:
        s += k + "=" + (text(j[k]) if k in j else "missing") + ";"
    h = 1469598103934665603
    for ch in s.encode():
        h = ((h ^ ch) * 1099511628211) % (1 << 64)
    return "%016x" % h
def lowest_terms(v):
    """Every exact number "p/q" in the JSON value v is in lowest terms with q > 1 (docs/FORMATS.md)."""
    if isinstance(v, dict):
        return all(lowest_terms(x) for x in v.values())
    if isinstance(v, list):
        return all(lowest_terms(x) for x in v)
    if isinstance(v, str) and "/" in v:
        p, q = v.split("/", 1)
        try:
            p, q = int(p), int(q)
        except ValueError:
            return True  # not a number (a path, a name)
        if q <= 1 or fractions.Fraction(p, q).denominator != q:
            raise ValueError("not in lowest terms: %r" % v)
    return True


HELPERS = {"digest": digest, "ks_digest": ks_digest, "t1_checksum": t1_checksum, "lowest_terms": lowest_terms}


def op_stdout(path, expr):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    if len(lines) != 1:
        return "expected one line of JSON, got %d lines" % len(lines)
    j = json.loads(lines[0])
    if not isinstance(j, dict):
        return "expected a JSON object"
    return None if eval(expr, HELPERS | {"j": j}) else "false"


def op_file(path, expr):
    j = json.load(open(path))
    return None if eval(expr, HELPERS | {"j": j}) else "false"


def op_npy(path, descr, shape, values):
    with open(path, "wb") as f:
        f.write(npy_bytes(descr, shape, values))


def op_npz(path, mode, *specs):
    comp = zipfile.ZIP_DEFLATED if mode == "deflated" else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=comp, allowZip64=True) as z:
        for spec in specs:
            name, rest = spec.split("=", 1)
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(npy_bytes(*rest.split(":")))


def op_bomb(path, shape, total):
    """An .npz written as numpy.savez_compressed does (zipfile, zip64 headers) whose one deflated member
    "a.npy" has a .npy header declaring float64 `shape` but holds `total` bytes in all (zeros after the
    header): a zip bomb, small on disk, whose zip headers state its true size."""
    head = npy_bytes("<f8", shape, "")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        with z.open("a.npy", "w", force_zip64=True) as f:
            f.write(head)
            left, zero = int(total) - len(head), bytes(1 << 20)
            while left > 0:
                n = min(left, len(zero))
                f.write(zero[:n])
                left -= n


def op_pt(path, key, numel):
    """torch.save's zip layout: archive/data.pkl (pickle protocol 2: {key: _rebuild_tensor_v2(storage,
    0, (numel,), (0,), False, OrderedDict())}), archive/data/0 (one float32), archive/version."""
    def uni(s):
        b = s.encode()
        return b"X" + struct.pack("<I", len(b)) + b
    pkl = (b"\x80\x02}" + uni(key) + b"ctorch._utils\n_rebuild_tensor_v2\n(" +
           b"(" + uni("storage") + b"ctorch\nFloatStorage\n" + uni("0") + uni("cpu") + b"K\x01tQ" +
           b"K\x00" + b"(J" + struct.pack("<i", int(numel)) + b"t" + b"(K\x00t" + b"\x89" +
           b"ccollections\nOrderedDict\n)R" + b"tRs.")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/data/0", struct.pack("<f", 1.0))
        z.writestr("archive/version", "3\n")


def op_npzadd(path, name, numel):
    head = npy_bytes("<f8", numel + ",", "")
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, allowZip64=True, compresslevel=1) as z:
        with z.open(name + ".npy", "w", force_zip64=True) as f:
            f.write(head)
            left, zero = 8 * int(numel), bytes(1 << 20)
            while left > 0:
                n = min(left, len(zero))
                f.write(zero[:n])
                left -= n


def op_alter(src, dst, statement):
    j = json.load(open(src))
    exec(statement, HELPERS | {"j": j})
    json.dump(j, open(dst, "w"))


def op_twins(path_a, path_b):
    def load(p):
        t = open(p).read().strip()
        return json.loads(t.splitlines()[-1]) if t else None
    a, b = load(path_a), load(path_b)
    if a is None and b is None:
        return None
    ok = a is not None and b is not None and a.pop("portable") is False and b.pop("portable") is True
    a.pop("seconds", None)
    b.pop("seconds", None)
    return None if ok and a == b else "the verdicts differ"


OPS = {"stdout": op_stdout, "file": op_file, "npy": op_npy, "npz": op_npz, "alter": op_alter, "bomb": op_bomb,
       "pt": op_pt, "npzadd": op_npzadd, "twins": op_twins}

for line in sys.stdin:
    op, *args = line.rstrip("\n").split("\t")
    try:
        why = OPS[op](*args)
    except Exception as e:  # a failed check, not a crash of the server
        why = "%s: %s" % (type(e).__name__, e)
    print("1" if why is None else "0 " + str(why).replace("\n", " "), flush=True)
