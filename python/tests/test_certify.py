"""memcert.certify: the files it hands the command hold exactly the model's and the data's numbers, the
command's output becomes a CertifyResult (verdicts, margins, certificate, errors as elsewhere in the
package), temporary files go, and a certificate's model and data files stay. Three groups:

- input files (no command needed): state_dict / array conversion, exactness (bfloat16 widened, nothing
  rounded), the data keys of each architecture;
- the wrapper against a stand-in command (memcert._memcert._run replaced by a float64 numpy evaluation
  that follows the `certify` output contract): result mapping, clean-up, out= / model_out= / data_out=;
- the real `memcert certify` (skipped while this build has none): parity with the command line's --json
  and --margins-out on the same files, and the certified enclosures against a float64 numpy forward pass
  of the same weights."""
import json
import math
import os
import subprocess

import numpy as np
import pytest

import memcert
from memcert import _certify

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (python3-torch) is not installed")
needs_command = pytest.mark.skipif(not memcert.has_command("certify"),
                                   reason="this build of memcert has no `certify` command")
EXE = memcert.executable()
VOLATILE = {"seconds", "certificate", "verified", "margins_out", "out"}  # present with out= only; paths and times differ


# ---- mahdavi24's BaselineAttention in numpy (float64), the second method -----------------------------

def random_state_dict(d_in=5, d_model=6, H=3, dh=4, C=4, max_len=16, seed=0, dtype=np.float32):
    """A state_dict with BaselineAttention's keys and shapes (dv = 1, d_o = d_model)."""
    rng = np.random.default_rng(seed)
    f = lambda *s: (rng.standard_normal(s) / math.sqrt(s[-1])).astype(dtype)
    pos = np.arange(max_len)[:, None] * np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos), np.cos(pos)
    return {"embedding.weight": f(d_model, d_in), "embedding.bias": f(d_model), "pos_enc.pe": pe.astype(dtype),
            "attention.Wq": f(H, d_model, dh), "attention.Wk": f(H, d_model, dh), "attention.Wv": f(H, d_model, 1),
            "attention.Wo": f(H, d_model), "decoder.weight": f(C, d_model), "decoder.bias": f(C)}


def random_data(T=12, n=3, d_in=5, C=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(T, n + 1, d_in)).astype(np.float32), rng.integers(0, C, size=T).astype(np.int64)


def mahdavi24_logits(sd, X):
    """float64 logits at token 0 (the query), as BaselineAttention.forward computes them."""
    g = {k: np.asarray(v, dtype=np.float64) for k, v in sd.items()}
    X = np.asarray(X, dtype=np.float64)
    x = X @ g["embedding.weight"].T + g["embedding.bias"] + g["pos_enc.pe"][:X.shape[1]]
    d_model = x.shape[-1]
    heads = []
    for h in range(g["attention.Wq"].shape[0]):
        q = x[:, 0, :] @ g["attention.Wq"][h]                       # (T, dh)
        k = x[:, 1:, :] @ g["attention.Wk"][h]                      # (T, n, dh): column 0 is masked
        s = np.einsum("td,tnd->tn", q, k) / math.sqrt(d_model)
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        heads.append(np.einsum("tn,tnv->tv", a, x[:, 1:, :] @ g["attention.Wv"][h]))
    out = np.concatenate(heads, axis=1) @ g["attention.Wo"]
    return out @ g["decoder.weight"].T + g["decoder.bias"]


def margins_of(logits, y):
    own = logits[np.arange(len(y)), y]
    other = logits.copy()
    other[np.arange(len(y)), y] = -np.inf
    return own - other.max(axis=1)


# ---- input files ---------------------------------------------------------------------------------------

def test_numpy_state_dict_kept_in_its_dtypes(tmp_path):
    sd = {"a": np.array([1.5, -2.25], dtype=np.float16), "b": np.arange(6, dtype=np.float32).reshape(2, 3) / 3,
          "c": np.array([0.1], dtype=np.float64), "mask": np.array([True, False]), "n": np.array(7, dtype=np.int64),
          "be": np.array([1.0, 2.5], dtype=">f4")}
    arrays = _certify.state_dict_arrays(sd)
    for k, v in sd.items():
        assert arrays[k].dtype.kind == v.dtype.kind and arrays[k].dtype.itemsize == v.dtype.itemsize
        assert arrays[k].dtype.isnative and np.array_equal(arrays[k], v)
    # Written and read back: the same bits.
    p = _certify.model_file(sd, None, dest=str(tmp_path / "m.npz"))
    with np.load(p) as z:
        assert sorted(z.files) == sorted(sd)
        for k in sd:
            assert z[k].tobytes() == arrays[k].tobytes()
    # A checkpoint dict's "state_dict" entry is the state_dict (mahdavi24's Trainer, PyTorch Lightning).
    assert sorted(_certify.state_dict_arrays({"state_dict": sd, "epoch": 3})) == sorted(sd)


@pytest.mark.parametrize("bad, message", [
    ({"w": np.zeros(2, dtype=np.complex64)}, "model: w: expected float16, bfloat16, float32"),
    ({"w": np.array([object()])}, "model: w: expected"),
    ({"w": np.zeros(2, dtype=np.longdouble)}, "model: w: expected"),
    ({"w": "text"}, "model: w: expected a torch tensor or a numpy array"),
    ({}, "model: the state_dict is empty"),
    ({3: np.zeros(2)}, "model: expected str keys"),
    (42, "model: expected a torch.nn.Module"),
])
def test_state_dict_refusals(bad, message):
    if isinstance(bad, dict) and bad.get("w") is not None and getattr(bad["w"], "dtype", None) == np.longdouble \
            and np.dtype(np.longdouble).itemsize == 8:
        pytest.skip("long double is float64 here")
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        _certify.state_dict_arrays(bad)


@needs_torch
def test_torch_module_exact_bfloat16_widened():
    lin = torch.nn.Linear(3, 4)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(4, 3) * 1e-3)
    m = torch.nn.Sequential(lin, torch.nn.Linear(4, 2).to(torch.bfloat16), torch.nn.Linear(2, 2).half())
    m.register_buffer("steps", torch.tensor([3], dtype=torch.int64))
    arrays = _certify.state_dict_arrays(m)
    sd = m.state_dict()
    assert sorted(arrays) == sorted(sd)
    for k, t in sd.items():
        a = arrays[k]
        if t.dtype == torch.bfloat16:
            assert a.dtype == np.float32
            # Exact: the float32 holds the bfloat16's bits in its upper half, the lower half zero.
            assert np.all(a.view(np.uint32) & 0xFFFF == 0)
            assert torch.equal(torch.from_numpy(a).to(torch.bfloat16), t)
            assert torch.equal(torch.from_numpy(a), t.float())
        else:
            assert str(a.dtype) == str(t.dtype).replace("torch.", "")
            assert torch.equal(torch.from_numpy(a), t)
    # A tensor that requires grad, lives in a view or is non-contiguous is taken as its values.
    w = torch.randn(4, 6, requires_grad=True)
    a = _certify.state_dict_arrays({"w": w[:, ::2]})["w"]
    assert a.flags.c_contiguous and np.array_equal(a, w.detach().numpy()[:, ::2])
    with pytest.raises(ValueError, match="model: w: expected a real tensor"):
        _certify.state_dict_arrays({"w": torch.zeros(2, dtype=torch.complex64)})
    with pytest.raises(ValueError, match="model: w: expected a dense tensor"):
        _certify.state_dict_arrays({"w": torch.zeros(2, 2).to_sparse()})


def test_data_keys_per_architecture():
    X, y = random_data()
    assert sorted(_certify.data_arrays("mahdavi24-baseline", X, y)) == ["X", "y"]
    assert sorted(_certify.data_arrays("dana24-aot", X[:, :, 0], y)) == ["next", "sequences"]
    assert _certify.data_arrays("mha", data="d.npz") == "d.npz"
    with pytest.raises(TypeError, match="reads its data set from data="):
        _certify.data_arrays("mha", X, y)
    with pytest.raises(TypeError, match="not both"):
        _certify.data_arrays("mahdavi24-baseline", X, y, data="d.npz")
    with pytest.raises(TypeError, match="needs y"):
        _certify.data_arrays("mahdavi24-baseline", X)
    with pytest.raises(TypeError, match="needs the data set"):
        _certify.data_arrays("mahdavi24-baseline")


def test_data_file_exact(tmp_path):
    X, y = random_data()
    X16 = X.astype(np.float16)
    p = _certify.data_file("mahdavi24-baseline", X16, y, None, None, dest=str(tmp_path / "d.npz"))
    with np.load(p) as z:
        assert z["X"].dtype == np.float16 and z["X"].tobytes() == X16.tobytes()
        assert z["y"].dtype == np.int64 and np.array_equal(z["y"], y)
    # mha: exact Python numbers as the JSON data set.
    from fractions import Fraction
    p = _certify.data_file("mha", None, None, {"contexts": [[[Fraction(1, 3), 1]]], "queries": [[1, 0]],
                                               "class_labels": [0]}, None, dest=str(tmp_path / "m.npz"))
    assert p.endswith("m.json") and json.load(open(p))["contexts"] == [[["1/3", "1"]]]


# ---- the wrapper, against a stand-in command -----------------------------------------------------------

HELP = """certify: certified predictions of a trained model
Usage: memcert certify [OPTIONS] MODEL DATA

Options:
  -h,--help                   Print this help message and exit
  --arch TEXT REQUIRED        architecture
  --heads UINT                sub-heads
  --tolerance TEXT            regression tolerance
  --out TEXT                  certificate
  --margins-out TEXT          per-example margins (.npz)
  --max-seconds FLOAT         budget
  --json                      JSON
"""


class StandIn:
    """`memcert certify` as its contract says, for mahdavi24-baseline only, from a float64 evaluation with
    a pretend error bound `eps` (examples with |margin| <= eps undecided). Records what it was given."""

    def __init__(self, monkeypatch, eps=1e-9, bad_input=None):
        self.calls, self.eps, self.bad_input = [], eps, bad_input
        self.real_run = memcert._memcert._run
        monkeypatch.setattr(memcert._memcert, "_run", self)
        monkeypatch.setattr(_certify, "_commands", {})
        memcert._core._help_cache.pop(("certify",), None)
        monkeypatch.setattr(memcert._core, "_help_cache", dict(memcert._core._help_cache))

    def __call__(self, argv, progress=None, max_seconds=0.0, exe=""):
        if argv[0] != "certify":
            return self.real_run(argv, progress, max_seconds, exe)
        if "--help" in argv:
            return 0, "", HELP, ""
        words, opts, i = [], {}, 1
        while i < len(argv):
            if argv[i] == "--json":
                i += 1
            elif argv[i].startswith("--"):
                opts[argv[i][2:]] = argv[i + 1]
                i += 2
            else:
                words.append(argv[i])
                i += 1
        model, data = words
        self.calls.append({"model": model, "data": data, "opts": opts, "argv": list(argv),
                           "model_arrays": dict(np.load(model)), "data_arrays": dict(np.load(data))})
        if self.bad_input:
            return 2, "", "", "memcert: %s: %s\n" % (model, self.bad_input)
        sd, d = self.calls[-1]["model_arrays"], self.calls[-1]["data_arrays"]
        m = margins_of(mahdavi24_logits(sd, d["X"]), d["y"])
        verdict = np.where(m > self.eps, 1, np.where(m < -self.eps, -1, 0)).astype(np.int8)
        np.savez(opts["margins-out"], verdict=verdict, margin_lo=m - self.eps, margin_hi=m + self.eps,
                 float32_margin=m, float32_error_bound=np.full(len(m), 1e-5),
                 bits=np.where(verdict != 0, 53, 0).astype(np.int16))
        T = len(m)
        wrong, und = np.flatnonzero(verdict < 0).tolist(), np.flatnonzero(verdict == 0).tolist()
        j = {"arch": opts["arch"], "task": "classification", "T": T, "certified_correct": int((verdict > 0).sum()),
             "certified_wrong": len(wrong), "undecided": len(und), "wrong": wrong, "undecided_examples": und,
             "float32_disagreements": np.flatnonzero(np.abs(m) < 1e-5).tolist(), "seconds": 0.01}
        if (verdict > 0).any():
            j["min_margin"] = "%.6g" % float(m[verdict > 0].min() - self.eps)
        if "out" in opts:
            cert = {"kind": "model", "version": 1, "claim": "certified predictions of a trained model",
                    "arch": opts["arch"], "task": "classification", "model": {"file": model, "digest": "sha256:0"},
                    "data": {"file": data, "digest": "sha256:0"}, "T": T, "wrong": wrong, "undecided": und,
                    "float32_disagreements": j["float32_disagreements"]}
            with open(opts["out"], "w") as f:
                json.dump(cert, f)
        code = 1 if wrong else (3 if und else 0)
        return code, json.dumps(j), "certify: %d correct" % j["certified_correct"], ""


def test_result_and_cleanup(monkeypatch):
    stand_in = StandIn(monkeypatch)
    sd = random_state_dict()
    X, y = random_data()
    logits = mahdavi24_logits(sd, X)
    y = logits.argmax(axis=1)  # every example correct
    r = memcert.certify(sd, X, y, arch="mahdavi24-baseline", threads=1)
    call = stand_in.calls[-1]
    # The files handed over hold the numbers given, in their dtypes.
    assert sorted(call["model_arrays"]) == sorted(sd)
    assert all(call["model_arrays"][k].tobytes() == sd[k].tobytes() for k in sd)
    assert call["data_arrays"]["X"].tobytes() == X.tobytes() and np.array_equal(call["data_arrays"]["y"], y)
    assert call["opts"]["arch"] == "mahdavi24-baseline" and "--json" in call["argv"] and "--threads" in call["argv"]
    # Nothing stays behind: model, data, margins were in a private directory now gone.
    assert not os.path.exists(os.path.dirname(call["model"]))
    assert isinstance(r, memcert.CertifyResult) and r.verdict is True and r.exit_code == 0
    assert r.certified_correct == r.T == 12 and r.certificate is None
    m = r.margins
    assert isinstance(m, memcert.Margins) and len(m) == 12 and m.verdict.dtype == np.int8
    assert np.all(m.margin_lo <= margins_of(logits, y)) and np.array_equal(m["bits"], np.full(12, 53))
    assert "all 12 certified correct" in repr(r) and "margins=<12 examples>" in repr(r)
    html = r._repr_html_()
    assert "certified_correct" in html and "min_margin" in html and "float32 disagreements" in html
    assert r.to_json()["T"] == 12


def test_wrong_and_undecided(monkeypatch):
    sd = random_state_dict()
    X, y = random_data(T=300, seed=5)
    m = margins_of(mahdavi24_logits(sd, X), y)
    eps = float(np.quantile(np.abs(m), 0.05))
    StandIn(monkeypatch, eps=eps)
    assert (m < -eps).any() and (np.abs(m) <= eps).any()
    r = memcert.certify(sd, X, y, arch="mahdavi24-baseline")
    assert r.verdict is False and r.wrong == np.flatnonzero(m < -eps).tolist()
    assert r.undecided_examples == np.flatnonzero(np.abs(m) <= eps).tolist()
    assert "certified WRONG" in repr(r) and len(repr(r)) <= 1500
    # None wrong, some undecided: exit 3 is memcert.Undecided, whose .result is the whole result.
    keep = np.flatnonzero(m > -eps)
    with pytest.raises(memcert.Undecided) as e:
        memcert.certify(sd, X[keep], y[keep], arch="mahdavi24-baseline")
    r = e.value.result
    assert isinstance(r, memcert.CertifyResult) and r.verdict is None and r.undecided == len(r.undecided_examples) > 0
    assert len(r.margins) == len(keep) and set(np.flatnonzero(r.margins.verdict == 0)) == set(r.undecided_examples)


def test_out_keeps_the_files_the_certificate_names(monkeypatch, tmp_path):
    stand_in = StandIn(monkeypatch)
    sd = random_state_dict()
    X, y = random_data()
    out = tmp_path / "runs" / "cert.json"
    out.parent.mkdir()
    r = memcert.certify(sd, X, y, arch="mahdavi24-baseline", out=out)
    cert = r.certificate
    assert cert["kind"] == "model"
    assert cert["model"]["file"] == str(tmp_path / "runs" / "cert.model.npz")
    assert cert["data"]["file"] == str(tmp_path / "runs" / "cert.data.npz")
    with np.load(cert["model"]["file"]) as z:
        assert all(z[k].tobytes() == sd[k].tobytes() for k in sd)
    # Paths given: passed as absolute paths; model_out / data_out name the copies of objects in memory.
    np.savez(tmp_path / "sd.npz", **sd)
    monkeypatch.chdir(tmp_path)
    memcert.certify("sd.npz", X, y, arch="mahdavi24-baseline", out="c2.json", data_out=tmp_path / "mine.npz")
    assert stand_in.calls[-1]["model"] == str(tmp_path / "sd.npz")
    assert stand_in.calls[-1]["data"] == str(tmp_path / "mine.npz") and (tmp_path / "mine.npz").exists()
    assert not (tmp_path / "c2.model.npz").exists()
    # Without out=, model_out / data_out mean nothing: refused rather than ignored.
    with pytest.raises(TypeError, match="give out= too"):
        memcert.certify(sd, X, y, arch="mahdavi24-baseline", model_out="m.npz")
    # margins_out keeps the margins file.
    memcert.certify(sd, X, y, arch="mahdavi24-baseline", margins_out=tmp_path / "mg.npz")
    with np.load(tmp_path / "mg.npz") as z:
        assert z["verdict"].shape == (12,)


def test_bad_input_leaves_nothing(monkeypatch, tmp_path):
    StandIn(monkeypatch, bad_input="attention.Wq: expected shape (H, d_model, dh)")
    sd = random_state_dict()
    X, y = random_data()
    with pytest.raises(ValueError) as e:
        memcert.certify(sd, X, y, arch="mahdavi24-baseline", out=tmp_path / "c.json")
    # The temporary file's name is the argument's, and nothing was left beside the certificate.
    assert str(e.value) == "model: attention.Wq: expected shape (H, d_model, dh)"
    assert sorted(os.listdir(tmp_path)) == []
    with pytest.raises(ValueError) as e:
        memcert.certify(sd, X, y, arch="mahdavi24-baseline")
    assert str(e.value) == "model: attention.Wq: expected shape (H, d_model, dh)"


def test_keywords_checked(monkeypatch):
    StandIn(monkeypatch)
    with pytest.raises(TypeError, match="did you mean 'heads'"):
        memcert.certify(random_state_dict(), *random_data(), arch="mahdavi24-baseline", head=2)


def test_without_the_command(monkeypatch):
    monkeypatch.setattr(_certify, "_commands", {("certify",): False})
    with pytest.raises(RuntimeError, match="no `certify` command"):
        memcert.certify(random_state_dict(), *random_data(), arch="mahdavi24-baseline")


# ---- the real command ----------------------------------------------------------------------------------

def cli(*args):
    p = subprocess.run([EXE, *map(str, args), "--json"], capture_output=True, text=True, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    return p.returncode, (json.loads(lines[-1]) if lines else None), p.stderr


def stable(j):
    return {k: v for k, v in j.items() if k not in VOLATILE and not k.endswith("seconds")}


def certify_or_undecided(*args, **kwargs):
    try:
        return memcert.certify(*args, **kwargs)
    except memcert.Undecided as e:
        assert e.result is not None
        return e.result


@needs_command
@pytest.mark.skipif(not EXE, reason="the memcert executable is needed for the parity tests")
def test_parity_with_the_command_line(tmp_path):
    sd = random_state_dict(seed=3)
    X, y = random_data(T=40, seed=4)
    np.savez(tmp_path / "m.npz", **sd)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, want, err = cli("certify", tmp_path / "m.npz", tmp_path / "d.npz", "--arch", "mahdavi24-baseline",
                          "--margins-out", tmp_path / "margins.npz")
    assert code in (0, 1, 3), err
    for model, data in (((tmp_path / "m.npz"), dict(data=tmp_path / "d.npz")), (sd, dict(X=X, y=y))):
        r = certify_or_undecided(model, arch="mahdavi24-baseline", **data)
        assert r.exit_code == code and stable(r.to_json()) == stable(want)
        with np.load(tmp_path / "margins.npz") as z:
            assert sorted(z.files) == sorted(r.margins.keys())
            for k in z.files:
                assert np.array_equal(z[k], r.margins[k]), k


@needs_command
def test_enclosures_hold_the_float64_margins(tmp_path):
    sd = random_state_dict(seed=7)
    X, y = random_data(T=60, seed=8)
    r = certify_or_undecided(sd, X, y, arch="mahdavi24-baseline")
    m64 = margins_of(mahdavi24_logits(sd, X), y)
    g = r.margins
    slack = 1e-9 * (1 + np.abs(m64))  # float64's own error on these small shapes
    assert np.all(g.margin_lo <= g.margin_hi)
    assert np.all(g.margin_lo - slack <= m64) and np.all(m64 <= g.margin_hi + slack)
    assert set(np.flatnonzero(g.verdict < 0)) == set(r.wrong) <= set(np.flatnonzero(m64 <= slack))
    assert np.all(m64[g.verdict > 0] > -slack[g.verdict > 0])
    assert r.certified_correct + r.certified_wrong + r.undecided == r.T == 60
    if r.certified_correct:
        assert float(r.min_margin) <= m64[g.verdict > 0].min() + 1e-9


@needs_command
@needs_torch
def test_torch_module_bfloat16_certificate_verifies(tmp_path):
    sd = {k: torch.from_numpy(v).to(torch.bfloat16) for k, v in random_state_dict(seed=9).items()}
    X, y = random_data(T=20, seed=10)
    torch.save(sd, tmp_path / "m.pt")  # the reader keeps bfloat16: the same numbers as the widened copy
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, want, err = cli("certify", tmp_path / "m.pt", tmp_path / "d.npz", "--arch", "mahdavi24-baseline")
    assert code in (0, 1, 3), err
    r = certify_or_undecided(sd, torch.from_numpy(X), torch.from_numpy(y), arch="mahdavi24-baseline",
                             out=tmp_path / "c.json")
    assert stable(r.to_json()) == stable(want)
    assert memcert.verify(tmp_path / "c.json").valid
    # The certificate holds wherever it is verified from, and an altered verdict is rejected.
    cert = r.certificate
    if cert["wrong"]:
        cert["wrong"] = cert["wrong"][1:]
    else:
        cert["wrong"] = [0]
    assert not memcert.verify(cert).valid


def dana24_aot(d, N, nb_layers, parallel_heads, d_head, nb_head, context_window):
    """Dana et al.'s AoT (github.com/leodana2000/Transformer_Attentional_Memory, models.py: Transformer
    with width 0), its modules and forward() as their code has them."""

    class AoT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.d, self.d_head = d, d_head
            self.word_emb = torch.nn.Linear(d, N, bias=False)
            self.pos_emb = torch.nn.Linear(d_head, context_window, bias=False)
            self.attn_seq = torch.nn.Sequential(*[torch.nn.Sequential(*[
                torch.nn.MultiheadAttention(d_head, nb_head, batch_first=True, bias=False)
                for _ in range(parallel_heads)]) for _ in range(nb_layers)])
            self.linear_compress = torch.nn.Linear(d, d_head, bias=False)
            self.linear_decompress = torch.nn.Linear(d_head, d, bias=False)
            self.mlp_seq = torch.nn.Sequential(*[torch.nn.Sequential()] * len(self.attn_seq))
            self.unemb = torch.nn.Linear(d, N, bias=False)
            self.register_buffer("attn_mask", torch.tril(torch.ones((context_window - 1, context_window - 1))) == 0)

        def forward(self, x):
            res = self.word_emb.weight[x]
            pos = self.pos_emb.weight[:x.shape[1]].unsqueeze(0)
            for para_attn, mlp in zip(self.attn_seq, self.mlp_seq):
                compressed_res = self.linear_compress(res) + pos if self.d != self.d_head else res + pos
                para_res = sum(attn(compressed_res, compressed_res, compressed_res, attn_mask=self.attn_mask)[0]
                               for attn in para_attn)
                decompressed_res = self.linear_decompress(para_res) if self.d != self.d_head else para_res
                res = decompressed_res.add_(res)
            return self.unemb(res)

    return AoT()


@needs_command
@needs_torch
@pytest.mark.parametrize("d, d_head", [(8, 4), (6, 6)])
def test_dana24_aot_sequences_and_next(d, d_head, tmp_path):
    torch.manual_seed(d)
    S, N, heads = 5, 7, 2
    model = dana24_aot(d=d, N=N, nb_layers=2, parallel_heads=2, d_head=d_head, nb_head=heads, context_window=S + 1)
    seqs = torch.randint(0, N, (30, S))
    nxt = torch.randint(0, N, (30,))
    r = certify_or_undecided(model, seqs, nxt, arch="dana24-aot", heads=heads)
    # The same as the command line on the same files (the checkpoint as torch.save writes it).
    torch.save(model.state_dict(), tmp_path / "m.pt")
    np.savez(tmp_path / "d.npz", sequences=seqs.numpy(), next=nxt.numpy())
    code, want, err = cli("certify", tmp_path / "m.pt", tmp_path / "d.npz", "--arch", "dana24-aot", "--heads", heads)
    assert code == r.exit_code and stable(r.to_json()) == stable(want), err
    # Their forward() in float64 on the same weights: inside the enclosures, up to float64's own error.
    with torch.no_grad():
        logits = model.double()(seqs)[:, -1, :].numpy()
    m64 = margins_of(logits, nxt.numpy())
    g = r.margins
    slack = 1e-9 * (1 + np.abs(m64))
    assert np.all(g.margin_lo - slack <= m64) and np.all(m64 <= g.margin_hi + slack)
    assert r.certified_correct + r.certified_wrong + r.undecided == 30


@needs_command
@pytest.mark.parametrize("change, key", [
    (lambda sd: sd.update({"attention.Wq": sd["attention.Wq"][:, :, :-1]}), "attention"),  # Wq and Wk disagree
    (lambda sd: sd.pop("decoder.bias"), "decoder.bias"),                                     # missing
    (lambda sd: sd.update({"extra.weight": np.zeros(2, dtype=np.float32)}), "extra.weight"),  # not BaselineAttention's
    (lambda sd: sd["embedding.weight"].__setitem__((0, 0), np.nan), "embedding.weight"),     # not a number
])
def test_bad_model_is_value_error_and_leaves_nothing(change, key, tmp_path):
    sd = random_state_dict(seed=11)
    change(sd)
    X, y = random_data(T=5)
    with pytest.raises(ValueError) as e:
        memcert.certify(sd, X, y, arch="mahdavi24-baseline", out=tmp_path / "c.json")
    assert key in str(e.value) and str(tmp_path) not in str(e.value)
    assert os.listdir(tmp_path) == []
