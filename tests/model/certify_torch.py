#!/usr/bin/env python3
"""`memcert certify` against PyTorch itself: tiny models of mahdavi24's BaselineAttention (the authors'
classes replicated below) and nn.MultiheadAttention are trained here, saved with torch.save, and every
verdict memcert certifies is compared with torch's float64 forward pass (the sign of the margin, and the
margin inside memcert's enclosure) and its float32 one (every example whose float32 margin exceeds 1e-3 in
size has the same verdict; the float32 margin lies within memcert's a-priori float32 bound of the exact
one). Hostile model files are refused (exit 2, one line, nothing written). A theorem1 construction's
--weights-out certified with --arch mha reproduces every label. Under mpirun (when given) the merged run
equals the single-process one.

    certify_torch.py MEMCERT [--mpi MPIEXEC]

Needs Debian's python3-torch and python3-numpy; exits 77 (skipped) without them."""
import json
import math
import os
import subprocess
import sys
import tempfile
import zipfile

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"model_certify: skipped ({e}; Debian: python3-torch)")
    sys.exit(77)

MEMCERT = sys.argv[1]
MPI = sys.argv[sys.argv.index("--mpi") + 1] if "--mpi" in sys.argv else None
FAILURES = []
WORK = tempfile.mkdtemp(prefix="memcert_certify_")
torch.manual_seed(1)
np.random.seed(1)


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


# ---- the authors' classes (smahdavi4/attention-memorization, src/attn_models.py) ----------------------
class CustomAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, batch_first, dh=None, dv=None, do=None, linear_attention=True):
        super().__init__()
        self.dv = dv if dv is not None else embed_dim // num_heads
        self.do = do if do is not None else embed_dim
        self.dh = dh if dh is not None else embed_dim
        self.num_heads = num_heads
        self.linear_attention = linear_attention
        self.Wq = nn.Parameter(torch.empty((num_heads, embed_dim, self.dh)))
        self.Wk = nn.Parameter(torch.empty((num_heads, embed_dim, self.dh)))
        self.Wv = nn.Parameter(torch.empty((num_heads, embed_dim, self.dv)))
        self.Wo = nn.Parameter(torch.empty((num_heads * self.dv, self.do)))
        for h in range(num_heads):
            nn.init.xavier_uniform_(self.Wq[h])
            nn.init.xavier_uniform_(self.Wk[h])
            nn.init.xavier_uniform_(self.Wv[h])
        nn.init.xavier_uniform_(self.Wo)

    def forward(self, query, key, value, attn_mask=None):
        b, n, d = query.shape
        attn_mask = attn_mask[None, None, :, :].bool()
        Q = query[:, None, ...] @ self.Wq[None, ...]
        K = key[:, None, ...] @ self.Wk[None, ...]
        V = value[:, None, ...] @ self.Wv[None, ...]
        QKT = (Q @ torch.transpose(K, 2, 3)) / math.sqrt(d)
        mask = torch.zeros_like(attn_mask, dtype=QKT.dtype).masked_fill(attn_mask, float('-inf'))
        attn_weights = torch.softmax(QKT + mask, dim=-1)
        QKV = attn_weights @ V
        output = torch.transpose(QKV, 1, 2).reshape(b, n, self.num_heads * self.dv)
        return output @ self.Wo, attn_weights


class SinPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        return x + self.pe[:x.size(1)][None, ...]


class BaselineAttention(nn.Module):
    def __init__(self, input_dim, n_classes, d_model, num_heads, dh, max_len=64):
        super().__init__()
        self.embedding = nn.Linear(input_dim, d_model)
        self.pos_enc = SinPositionalEncoding(d_model, max_len=max_len)
        self.attention = CustomAttention(embed_dim=d_model, num_heads=num_heads, batch_first=True, dv=1, dh=dh,
                                         do=d_model, linear_attention=False)
        self.decoder = nn.Linear(d_model, n_classes)

    def forward(self, X):
        b, np_, d = X.shape
        mask = torch.zeros((np_, np_), device=X.device)
        mask[:, 0] = 1
        out = self.pos_enc(self.embedding(X))
        out, _ = self.attention(out, out, out, attn_mask=mask)
        return self.decoder(out)[:, 0, :]


# ---- helpers --------------------------------------------------------------------------------------------
def certify(model, data, *extra, launcher=()):
    r = subprocess.run([*launcher, MEMCERT, "certify", model, data, *extra, "--json", "--quiet"],
                       capture_output=True, text=True, timeout=900)
    out = None
    if r.stdout.strip():
        try:
            out = json.loads(r.stdout)
        except ValueError:
            pass
    return r.returncode, out, r.stderr


def margins(logits, y, regression_tol=None):
    if regression_tol is not None:
        return regression_tol - (logits[:, 0] - y).abs()
    top = logits.gather(1, y[:, None])[:, 0]
    other = logits.clone()
    other.scatter_(1, y[:, None], float('-inf'))
    return top - other.max(dim=1).values


def compare(name, code, out, m64, m32, mfile, classification=True):
    """memcert's verdicts against torch's float64 and float32 margins."""
    check(out is not None, f"{name}: JSON output (exit {code})")
    if out is None:
        return
    T = len(m64)
    wrong, und = set(out["wrong"]), set(out["undecided_examples"])
    z = np.load(mfile)
    check(len(z["verdict"]) == T, f"{name}: margins-out length")
    thr = (lambda m: m > 0) if classification else (lambda m: m >= 0)
    for t in range(T):
        v = z["verdict"][t]
        mine = "undecided" if t in und else "wrong" if t in wrong else "correct"
        check({1: "correct", -1: "wrong", 0: "undecided"}[int(v)] == mine, f"{name}: example {t}: margins-out verdict")
        lo, hi = z["margin_lo"][t], z["margin_hi"][t]
        scale = 1e-9 * max(1.0, abs(m64[t]))
        check(lo - scale <= m64[t] <= hi + scale, f"{name}: example {t}: float64 margin {m64[t]} outside [{lo}, {hi}]")
        if abs(m64[t]) > 1e-9:
            want = "correct" if thr(m64[t]) else "wrong"
            check(mine == want, f"{name}: example {t}: memcert {mine}, torch float64 margin {m64[t]}")
        if abs(m32[t]) > 1e-3:
            want = "correct" if thr(m32[t]) else "wrong"
            check(mine == want, f"{name}: example {t}: memcert {mine}, torch float32 margin {m32[t]}")
        beta = z["float32_error_bound"][t]
        check(abs(m32[t] - m64[t]) <= beta + scale,
              f"{name}: example {t}: |float32 - float64 margin| = {abs(m32[t] - m64[t])} > float32 bound {beta}")
        check(abs(z["float32_margin"][t] - m32[t]) <= 2 * beta + scale,
              f"{name}: example {t}: float32 estimate {z['float32_margin'][t]} vs torch {m32[t]} (bound {beta})")
    check(out["certified_correct"] + out["certified_wrong"] + out["undecided"] == T, f"{name}: counts add up to T")
    want_code = 1 if wrong else 3 if und else 0
    check(code == want_code, f"{name}: exit {code}, expected {want_code}")


def train(model, X, target, loss_fn, steps=60):
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(X), target)
        loss.backward()
        opt.step()


# ---- mahdavi24-baseline, classification ------------------------------------------------------------------
T, n, d_in, D, H, dh, C = 300, 6, 8, 8, 3, 4, 5
X = torch.randn(T, n + 1, d_in)
y = torch.randint(0, C, (T,))
model = BaselineAttention(d_in, C, D, H, dh)
train(model, X, y, nn.CrossEntropyLoss())
pt = os.path.join(WORK, "baseline.pt")
torch.save(model.state_dict(), pt)
data = os.path.join(WORK, "data.npz")
np.savez(data, X=X.numpy(), y=y.numpy().astype(np.int64))
with torch.no_grad():
    m32 = margins(model(X), y).double().numpy()
    m64 = margins(model.double()(X.double()), y).numpy()
    model.float()
mfile = os.path.join(WORK, "m.npz")
cert = os.path.join(WORK, "cert.json")
code, out, err = certify(pt, data, "--arch", "mahdavi24-baseline", "--margins-out", mfile, "--out", cert)
compare("baseline", code, out, m64, m32, mfile)
check(out is not None and out.get("arch") == "mahdavi24-baseline" and "min_margin" in out, "baseline: JSON keys")
if os.path.exists(cert):
    c = json.load(open(cert))
    check(c["kind"] == "model" and c["T"] == T and c["wrong"] == (out or {}).get("wrong"), "baseline: certificate fields")
    check(c["model"]["digest"].startswith("sha256:") and c["data"]["digest"].startswith("sha256:"), "baseline: digests")
else:
    check(False, f"baseline: certificate written ({err.strip()})")
# The same model as .safetensors-free .npz of its state_dict: the same verdicts.
npz_model = os.path.join(WORK, "baseline_sd.npz")
np.savez(npz_model, **{k: v.numpy() for k, v in model.state_dict().items()})
code2, out2, _ = certify(npz_model, data, "--arch", "mahdavi24-baseline")
check(out2 is not None and out is not None and out2["wrong"] == out["wrong"], "baseline: .npz state_dict gives the same verdicts")

# float64 data: the same verdicts as from float32 data of the same values.
data64 = os.path.join(WORK, "data64.npz")
np.savez(data64, X=X.numpy().astype(np.float64), y=y.numpy().astype(np.int64))
code3, out3, _ = certify(pt, data64, "--arch", "mahdavi24-baseline")
check(out3 is not None and out is not None and out3["wrong"] == out["wrong"], "baseline: float64 data gives the same verdicts")

# ---- ties: identical decoder rows give a margin of exactly 0 (wrong, proved), never guessed -------------------
tie = BaselineAttention(d_in, C, D, H, dh)
with torch.no_grad():
    tie.decoder.weight[1] = tie.decoder.weight[0]
    tie.decoder.bias[1] = tie.decoder.bias[0]
    tie.decoder.bias[0] += 100.0  # rows 0 and 1 win, tied
    tie.decoder.bias[1] += 100.0
tie_pt = os.path.join(WORK, "tie.pt")
torch.save(tie.state_dict(), tie_pt)
tie_data = os.path.join(WORK, "tie.npz")
np.savez(tie_data, X=X.numpy()[:20], y=np.zeros(20, dtype=np.int64))
code, out, err = certify(tie_pt, tie_data, "--arch", "mahdavi24-baseline")
check(code == 1 and out is not None and out["certified_wrong"] == 20, f"tie: every tied example certified wrong ({code}, {err.strip()})")

# ---- mahdavi24-baseline, regression (C = 1) --------------------------------------------------------------
yr = torch.randn(T)
reg = BaselineAttention(d_in, 1, D, H, dh)
train(reg, X, yr[:, None], nn.MSELoss())
reg_pt = os.path.join(WORK, "reg.pt")
torch.save(reg.state_dict(), reg_pt)
reg_data = os.path.join(WORK, "reg.npz")
np.savez(reg_data, X=X.numpy(), y=yr.numpy())
tol = 0.5
with torch.no_grad():
    r32 = margins(reg(X), yr, tol).double().numpy()
    r64 = margins(reg.double()(X.double()), yr.double(), tol).numpy()
rfile = os.path.join(WORK, "r.npz")
code, out, err = certify(reg_pt, reg_data, "--arch", "mahdavi24-baseline", "--tolerance", "0.5", "--margins-out", rfile)
compare("regression", code, out, r64, r32, rfile, classification=False)
check(out is not None and "max_error" in out, "regression: max_error reported")
code, out, err = certify(reg_pt, reg_data, "--arch", "mahdavi24-baseline")
check(code == 2 and "--tolerance" in err, "regression without --tolerance: exit 2")

# ---- mha: nn.MultiheadAttention + readout ---------------------------------------------------------------
E, K, nc = 8, 2, 4
mha = nn.MultiheadAttention(E, K, batch_first=True)
readout = nn.Linear(E, nc)
ctx = torch.randn(T, n, E)
qry = torch.randn(T, E)
cls = torch.randint(0, nc, (T,))


def mha_forward(q, c):
    o, _ = mha(q[:, None, :], c, c)
    return readout(o[:, 0, :])


opt = torch.optim.Adam(list(mha.parameters()) + list(readout.parameters()), lr=0.03)
for _ in range(60):
    opt.zero_grad()
    nn.CrossEntropyLoss()(mha_forward(qry, ctx), cls).backward()
    opt.step()
sd = dict(mha.state_dict())
sd.update({"readout." + k: v for k, v in readout.state_dict().items()})
mha_pt = os.path.join(WORK, "mha.pt")
torch.save(sd, mha_pt)
mha_data = os.path.join(WORK, "mha_data.npz")
np.savez(mha_data, contexts=ctx.numpy(), queries=qry.numpy().astype(np.float64), class_labels=cls.numpy().astype(np.int64))
with torch.no_grad():
    a32 = margins(mha_forward(qry, ctx), cls).double().numpy()
    mha.double(), readout.double()
    a64 = margins(mha_forward(qry.double(), ctx.double()), cls).numpy()
afile = os.path.join(WORK, "a.npz")
code, out, err = certify(mha_pt, mha_data, "--arch", "mha", "--heads", str(K), "--margins-out", afile)
compare("mha", code, out, a64, a32, afile)
code, out, err = certify(mha_pt, mha_data, "--arch", "mha")
check(code == 2 and "--heads" in err, "mha without --heads: exit 2")

# ---- theorem1's --weights-out, certified as mha: every label within tolerance -----------------------------
gen = os.path.join(WORK, "t1.npz")
subprocess.run([MEMCERT, "generate", "theorem1", "--T", "13", "--n", "4", "--d", "6", "--out", gen, "--quiet"], check=True)
w = os.path.join(WORK, "w.npz")
r = subprocess.run([MEMCERT, "construct", "theorem1", gen, "--heads", "4", "--dh", "4", "--out", os.path.join(WORK, "t1cert.json"),
                    "--weights-out", w, "--quiet"], capture_output=True, text=True)
check(r.returncode == 0, f"theorem1 construction ({r.stderr.strip()})")
if r.returncode == 0:
    code, out, err = certify(w, gen, "--arch", "mha", "--tolerance", "1e-6")
    check(code == 0 and out is not None and out["certified_correct"] == 13, f"theorem1 weights-out round trip: exit {code} {err.strip()} {out}")

# ---- hostile model files: exit 2, one line, nothing written ---------------------------------------------
good = model.state_dict()


def hostile(name, path, needle=None):
    o = os.path.join(WORK, "h_cert.json")
    mo = os.path.join(WORK, "h_m.npz")
    for f in (o, mo):
        if os.path.exists(f):
            os.remove(f)
    code, out, err = certify(path, data, "--arch", "mahdavi24-baseline", "--out", o, "--margins-out", mo)
    lines = err.strip().splitlines()
    check(code == 2, f"hostile {name}: exit {code}, expected 2 ({err.strip()[:200]})")
    check(len(lines) == 1, f"hostile {name}: one line on stderr, got {lines}")
    check(not os.path.exists(o) and not os.path.exists(mo), f"hostile {name}: nothing written")
    if needle:
        check(needle in err, f"hostile {name}: message names {needle!r}: {err.strip()}")


class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + os.path.join(WORK, "pwned"),))


p = os.path.join(WORK, "evil.pt")
torch.save({"embedding.weight": Evil()}, p)
hostile("code-carrying pickle", p)
check(not os.path.exists(os.path.join(WORK, "pwned")), "hostile pickle: nothing was run")
raw = open(pt, "rb").read()
p = os.path.join(WORK, "trunc.pt")
open(p, "wb").write(raw[: len(raw) // 2])
hostile("truncated zip", p)


def variant(name, edit, needle):
    sd2 = {k: v.clone() for k, v in good.items()}
    edit(sd2)
    p = os.path.join(WORK, name + ".pt")
    torch.save(sd2, p)
    hostile(name, p, needle)


variant("wrong dtype", lambda s: s.__setitem__("embedding.weight", s["embedding.weight"].long()), "embedding.weight")
variant("shape mismatch", lambda s: s.__setitem__("attention.Wk", torch.zeros(H, D, dh + 1)), "attention.Wk")
variant("missing key", lambda s: s.pop("decoder.bias"), "decoder.bias")
variant("extra key", lambda s: s.__setitem__("extra.weight", torch.zeros(2)), "extra.weight")
variant("NaN weight", lambda s: s["attention.Wq"].view(-1).__setitem__(3, float("nan")), "attention.Wq")

# Integer class labels of shape (T, 1): (T, 1) is for regression targets only; bad input before any output
# (the checker, which digests y with its shape, would refuse the certificate otherwise).
y_col = os.path.join(WORK, "y_column.npz")
with np.load(data) as z:
    np.savez(y_col, X=z["X"], y=z["y"].reshape(-1, 1))
o, mo = os.path.join(WORK, "yc_cert.json"), os.path.join(WORK, "yc_m.npz")
code, out, err = certify(pt, y_col, "--arch", "mahdavi24-baseline", "--out", o, "--margins-out", mo)
check(code == 2 and "y" in err and not os.path.exists(o) and not os.path.exists(mo),
      f"integer y of shape (T, 1): exit {code}, expected 2 with nothing written ({err.strip()[:200]})")

# ---- mpirun: the merged run equals the single-process one ------------------------------------------------
if MPI:
    launcher = (MPI, "-n", "2", "--oversubscribe", "--allow-run-as-root")
    c1, c2 = os.path.join(WORK, "single.json"), os.path.join(WORK, "multi.json")
    code1, o1, e1 = certify(pt, data, "--arch", "mahdavi24-baseline", "--out", c1)
    code2, o2, e2 = certify(pt, data, "--arch", "mahdavi24-baseline", "--out", c2, launcher=launcher)
    check(code1 == code2, f"mpi: exit {code2} vs single {code1} ({e2.strip()[:300]})")
    if o1 and o2:
        for o in (o1, o2):
            o.pop("seconds", None)
            o.pop("certificate", None)
        check(o1 == o2, "mpi: merged JSON equals the single-process JSON")
    check(os.path.exists(c2) and open(c1).read() == open(c2).read(), "mpi: the same certificate")

print(f"model_certify: {len(FAILURES)} failure(s)")
sys.exit(1 if FAILURES else 0)
