#!/usr/bin/env python3
"""Model files written by PyTorch itself, read by memcert's state_dict readers (through the
state_dict_dump test tool) and compared bit for bit with torch's own values; hostile files refused
(exit 2, one line) without anything in them being run.

    torch_files.py STATE_DICT_DUMP

Needs Debian's python3-torch (and python3-numpy); run with the system interpreter. Exits 0 when every
check passes, 1 otherwise (each failure printed), 77 (skipped) without torch."""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as e:  # scripts/install-deps.sh installs python3-torch; without it the test is skipped
    print(f"model_torch: skipped ({e}; Debian: python3-torch)")
    sys.exit(77)

DUMP = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def dump(path, *extra):
    r = subprocess.run([DUMP, path, *extra], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def same_value(mine, theirs):
    """mine: the dump's decimal string; theirs: a Python float (torch's value widened to double)."""
    v = float(mine)
    if math.isnan(theirs):
        return math.isnan(v)
    return v == theirs and math.copysign(1.0, v) == math.copysign(1.0, theirs)


def compare(path, expected, what):
    """expected: ordered dict key -> tensor (torch's own values); the dump must list the same keys in
    the same order (unless sorted_keys), dtypes and shapes, and every value bit for bit."""
    rc, out, err = dump(path)
    check(rc == 0, f"{what}: exit {rc}, stderr {err.strip()}")
    if rc != 0:
        return
    got = json.loads(out)
    check(list(got) == list(expected), f"{what}: keys {list(got)} != {list(expected)}")
    for key, t in expected.items():
        if key not in got:
            continue
        g = got[key]
        want_dtype = str(t.dtype).replace("torch.", "")
        check(g["dtype"] == want_dtype, f"{what}: {key} dtype {g['dtype']} != {want_dtype}")
        check(g["shape"] == list(t.shape), f"{what}: {key} shape {g['shape']} != {list(t.shape)}")
        flat = t.contiguous().reshape(-1)
        if t.dtype.is_floating_point:
            theirs = flat.double().tolist()
            bad = [i for i, (a, b) in enumerate(zip(g["values"], theirs)) if not same_value(a, b)]
        else:
            theirs = flat.long().tolist()
            bad = [i for i, (a, b) in enumerate(zip(g["values"], theirs)) if a != b]
        check(len(g["values"]) == len(theirs) and not bad,
              f"{what}: {key}: {len(g['values'])} values vs {len(theirs)}, first differing at {bad[:3]}")


def refused(path, what, needle=None):
    rc, out, err = dump(path)
    lines = err.strip().splitlines()
    check(rc == 2, f"{what}: expected exit 2, got {rc} ({err.strip()[:200]})")
    check(len(lines) == 1, f"{what}: expected one line on stderr, got {lines}")
    if needle is not None:
        check(needle in err, f"{what}: expected '{needle}' in the message, got {err.strip()}")


def safetensors_bytes(tensors, metadata=None):
    """The safetensors format written by hand (Debian has no safetensors package): 8-byte LE header
    length, JSON header, then the tensors' raw little-endian bytes in order."""
    names = {torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32", torch.float64: "F64",
             torch.int8: "I8", torch.int16: "I16", torch.int32: "I32", torch.int64: "I64", torch.uint8: "U8",
             torch.bool: "BOOL"}
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for k, t in tensors.items():
        t = t.contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


class Buffered(torch.nn.Module):
    """A module with parameters of several dtypes and registered buffers (a bool mask, an int64 count)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.f16 = torch.nn.Parameter(torch.randn(2, 3).half())
        self.bf16 = torch.nn.Parameter(torch.randn(3, 2).bfloat16())
        self.f64 = torch.nn.Parameter(torch.randn(5, dtype=torch.float64))
        self.register_buffer("mask", torch.tril(torch.ones(4, 4, dtype=torch.bool)))
        self.register_buffer("count", torch.tensor([3, -2**62, 2**40], dtype=torch.int64))
        self.register_buffer("u8", torch.arange(250, 256, dtype=torch.uint8))
        self.register_buffer("ints", torch.tensor([-2**31, 7], dtype=torch.int32))


def main():
    torch.manual_seed(0)
    tmp = tempfile.mkdtemp(prefix="memcert_model_")
    p = lambda name: os.path.join(tmp, name)

    # 1. State dicts of real modules, as torch.save writes them (default protocol 2 and protocol 4).
    mha = torch.nn.MultiheadAttention(8, 2)
    mha_kdim = torch.nn.MultiheadAttention(8, 2, kdim=6, vdim=5, bias=False)
    buffered = Buffered()
    for name, sd in [("mha", mha.state_dict()), ("mha_kdim", mha_kdim.state_dict()), ("buffered", buffered.state_dict())]:
        torch.save(sd, p(name + ".pt"))
        loaded = torch.load(p(name + ".pt"), weights_only=True)  # torch's own restricted reader agrees
        compare(p(name + ".pt"), loaded, name + ".pt")
        torch.save(sd, p(name + "_p4.pth"), pickle_protocol=4)
        compare(p(name + "_p4.pth"), sd, name + "_p4.pth (protocol 4)")
        with open(p(name + ".safetensors"), "wb") as f:
            f.write(safetensors_bytes(sd, {"format": "pt"}))
        compare(p(name + ".safetensors"), sd, name + ".safetensors")

    # 2. Views saved directly: a transposed (non-contiguous) view sharing its storage with the original,
    #    a slice at an offset, a stride-0 expansion, a scalar, an empty tensor, every float16 and
    #    bfloat16 bit pattern (NaNs, infinities, subnormals, -0 included), NaN and infinite float32.
    base = torch.randn(5, 7)
    bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    views = {
        "base": base,
        "transposed": base.t(),
        "slice": base[1:4, 2:6],
        "column": base[:, 3],
        "expanded": torch.randn(3, 1).expand(3, 4),
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        "empty": torch.zeros(0, 3),
        "all_float16": bits.clone().view(torch.float16),
        "all_bfloat16": bits.clone().view(torch.bfloat16),
        "nonfinite": torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-45]),
        "permuted": torch.randn(2, 3, 4, dtype=torch.float64).permute(2, 0, 1),
    }
    torch.save(views, p("views.pt"))
    compare(p("views.pt"), torch.load(p("views.pt"), weights_only=True), "views.pt")
    check(not views["transposed"].is_contiguous(), "the transposed view is non-contiguous")
    # The same views as parameters (torch._utils._rebuild_parameter).
    params = {k: torch.nn.Parameter(v.contiguous(), requires_grad=False) for k, v in views.items() if v.dtype.is_floating_point}
    torch.save(params, p("params.pt"))
    compare(p("params.pt"), {k: v.detach() for k, v in params.items()}, "params.pt")

    # 3. A PyTorch Lightning-style checkpoint: the state_dict among plain entries (ints, floats,
    #    strings, lists, tuples, None, nested dicts, optimizer state with tensors).
    opt = torch.optim.Adam(mha.parameters(), lr=1e-3)
    mha(torch.randn(3, 1, 8), torch.randn(3, 1, 8), torch.randn(3, 1, 8))[0].sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "global_step": 120, "pytorch-lightning_version": "1.9.0",
            "state_dict": mha.state_dict(), "optimizer_states": [opt.state_dict()],
            "lr_schedulers": [], "callbacks": {"EarlyStopping{'monitor': 'val'}": {"wait_count": 0, "best_score": torch.tensor(0.5)}},
            "hparams_name": "kwargs", "hyper_parameters": {"lr": 1e-3, "betas": (0.9, 0.999), "name": None, "big": 2**70}}
    torch.save(ckpt, p("lightning.ckpt"))
    compare(p("lightning.ckpt"), mha.state_dict(), "lightning.ckpt")

    # 4. .npz state dicts (float32 stays float32; float16 and float64 read as float64; ints as int64).
    arrays = {"w.weight": torch.randn(3, 4), "w.bias": torch.randn(3, dtype=torch.float64),
              "h": torch.randn(2, 2).half(), "mask": torch.tensor([1, 0, 1], dtype=torch.int32)}
    np.savez(p("sd.npz"), **{k: v.numpy() for k, v in arrays.items()})
    rc, out, err = dump(p("sd.npz"))
    check(rc == 0, f"sd.npz: exit {rc} {err}")
    if rc == 0:
        got = json.loads(out)
        check(sorted(got) == sorted(arrays), f"sd.npz keys {list(got)}")
        for k, t in arrays.items():
            want = t.reshape(-1).double().tolist() if t.dtype.is_floating_point else t.reshape(-1).tolist()
            vals = got[k]["values"]
            check(len(vals) == len(want) and all((float(a) == b) if isinstance(b, float) else a == b for a, b in zip(vals, want)),
                  f"sd.npz: {k} values")
        check(got["w.weight"]["dtype"] == "float32" and got["h"]["dtype"] == "float64" and got["mask"]["dtype"] == "int64",
              f"sd.npz dtypes {[(k, v['dtype']) for k, v in got.items()]}")

    # 5. Hostile files.
    # 5a. A pickle whose object would run os.system on load: refused, and the command never runs.
    marker = p("pwned")

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save({"weight": torch.zeros(2), "evil": Payload()}, p("evil.pt"))
    check(not os.path.exists(marker), "torch.save itself ran nothing")
    refused(p("evil.pt"), "evil.pt (os.system)", "posix.system")
    check(not os.path.exists(marker), "evil.pt: the os.system payload ran")
    torch.save({"weight": torch.zeros(2), "evil": Payload()}, p("evil_p4.pt"), pickle_protocol=4)
    refused(p("evil_p4.pt"), "evil_p4.pt (os.system via STACK_GLOBAL)", "posix.system")
    check(not os.path.exists(marker), "evil_p4.pt: the os.system payload ran")
    # ... inside a Lightning checkpoint's other entries too.
    torch.save({"state_dict": {"w": torch.zeros(1)}, "hyper_parameters": Payload()}, p("evil.ckpt"))
    refused(p("evil.ckpt"), "evil.ckpt", "posix.system")
    check(not os.path.exists(marker), "evil.ckpt: the os.system payload ran")
    # 5b. Non-whitelisted classes in plain data (argparse.Namespace, a set): refused.
    import argparse
    torch.save({"state_dict": {"w": torch.zeros(1)}, "hparams": argparse.Namespace(lr=1)}, p("namespace.ckpt"))
    refused(p("namespace.ckpt"), "namespace.ckpt", "argparse.Namespace")
    torch.save({"w": torch.zeros(1), "s": {1, 2}}, p("set.pt"))
    refused(p("set.pt"), "set.pt", "__builtin__.set")
    # 5b'. Tensors the readers do not take: complex (its storage type is no whitelisted global), sparse
    #      (torch._utils._rebuild_sparse_tensor), quantized.
    torch.save({"c": torch.randn(2, dtype=torch.complex64)}, p("complex.pt"))
    refused(p("complex.pt"), "complex.pt", "torch.ComplexFloatStorage")
    torch.save({"s": torch.eye(3).to_sparse()}, p("sparse.pt"))
    refused(p("sparse.pt"), "sparse.pt", "_rebuild_sparse_tensor")
    torch.save({"q": torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.quint8)}, p("quant.pt"))
    refused(p("quant.pt"), "quant.pt")
    # 5c. The legacy format and TorchScript archives: refused with what they are.
    torch.save(mha.state_dict(), p("legacy.pt"), _use_new_zipfile_serialization=False)
    refused(p("legacy.pt"), "legacy.pt", "legacy format")
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), p("script.pt"))
    refused(p("script.pt"), "script.pt", "TorchScript")
    # 5d. Truncations of a valid archive and of a safetensors file: every one refused cleanly.
    for src in ["buffered.pt", "buffered.safetensors"]:
        data = open(p(src), "rb").read()
        for cut in sorted({0, 1, 7, 8, 21, 22, 64, len(data) // 3, len(data) // 2, len(data) - 23, len(data) - 22,
                           len(data) - 1}):
            ext = os.path.splitext(src)[1]
            with open(p("cut" + ext), "wb") as f:
                f.write(data[:cut])
            refused(p("cut" + ext), f"{src} cut at {cut}")
    # 5e. A storage too small for its view: one byte of a float32 storage removed (the zip rewritten
    #     with correct CRCs, so only the size is wrong).
    import zipfile
    torch.save({"w": torch.randn(4, 4)}, p("small.pt"))
    with zipfile.ZipFile(p("small.pt")) as z:
        members = {i.filename: z.read(i.filename) for i in z.infolist()}
    storage = [k for k in members if "/data/" in k][0]
    members[storage] = members[storage][:-4]
    with zipfile.ZipFile(p("small2.pt"), "w", zipfile.ZIP_STORED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    refused(p("small2.pt"), "small2.pt (storage shorter than numel)", "storage")
    # 5f. A flipped data byte: the CRC-32 catches it.
    data = bytearray(open(p("small.pt"), "rb").read())
    with zipfile.ZipFile(p("small.pt")) as z:
        info = z.getinfo(storage)
    # the data follow the local header, whose extra field (alignment padding) has its own length
    n_len, x_len = struct.unpack("<HH", bytes(data[info.header_offset + 26:info.header_offset + 30]))
    off = info.header_offset + 30 + n_len + x_len
    data[off] ^= 0x40
    open(p("crc.pt"), "wb").write(bytes(data))
    refused(p("crc.pt"), "crc.pt (corrupt storage)", "CRC")
    # 5g. An element bound: a stride-0 view of a huge declared size over a one-element storage.
    torch.save({"e": torch.zeros(1).expand(10**6)}, p("expand.pt"))
    rc, _, err = dump(p("expand.pt"), "1000")
    check(rc == 2 and "at most 1000" in err, f"expand.pt under a 1000-element bound: {rc} {err}")
    # 5h. NaN weights are read (the forward pass decides about them), in .pt and .safetensors.
    nan_sd = {"w": torch.tensor([float("nan"), 1.0])}
    torch.save(nan_sd, p("nan.pt"))
    compare(p("nan.pt"), nan_sd, "nan.pt")
    with open(p("nan.safetensors"), "wb") as f:
        f.write(safetensors_bytes(nan_sd))
    compare(p("nan.safetensors"), nan_sd, "nan.safetensors")

    shutil.rmtree(tmp)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("model_torch: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
