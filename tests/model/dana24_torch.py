#!/usr/bin/env python3
"""dana24-aot verdicts against PyTorch's own forward pass of the authors' classes (models.py of
leodana2000/Transformer_Attentional_Memory, `Transformer` and `AoT`, replicated below): tiny models,
random or briefly trained, saved with torch.save(state_dict), data written with numpy.savez, certified by
dana24_aot_run (dana24_aot_certify), and compared with

  * torch float64 (the model .double()): verdicts agree wherever |float64 margin| > 1e-9, and the float64
    margin lies in the certified enclosure (up to float64's own rounding);
  * torch float32: verdicts agree wherever |float32 margin| > 1e-3; |torch float32 margin - exact| is
    within the reported float32 error bound; a float32 disagreement is flagged wherever the bound does
    not separate the float32 margin from 0.

A near tie (two unembedding rows one float32 ulp apart) and an exact tie (two identical rows: never
certified correct) are among the cases.

    dana24_torch.py DANA24_AOT_RUN

Exits 0 when every check passes, 1 otherwise, 77 (skipped) without torch."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch as t
except ImportError as e:
    print(f"model_dana24_torch: skipped ({e}; Debian: python3-torch)")
    sys.exit(77)

RUN = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


# ---- the authors' classes (models.py), unchanged in substance -------------------------------------------
class Transformer(t.nn.Module):
    def __init__(self, d, N, nb_layers, width, parallel_heads, d_head, nb_head, context_window):
        assert d_head % nb_head == 0
        super().__init__()
        self.use_mlp = nb_layers * width > 0
        self.d, self.N, self.d_head = d, N, d_head
        self.context_window = context_window
        self.word_emb = t.nn.Linear(d, N, bias=False)
        self.pos_emb = t.nn.Linear(d_head, context_window, bias=False)
        self.attn_seq = t.nn.Sequential(*[
            t.nn.Sequential(*[t.nn.MultiheadAttention(d_head, nb_head, batch_first=True, bias=False)
                              for _ in range(parallel_heads)])
            for _ in range(nb_layers)])
        self.linear_compress = t.nn.Linear(d, d_head, bias=False)
        self.linear_decompress = t.nn.Linear(d_head, d, bias=False)
        if self.use_mlp:
            self.mlp_seq = t.nn.Sequential(*[t.nn.Sequential(
                t.nn.Linear(d, width, bias=True), t.nn.GELU(), t.nn.Linear(width, d, bias=False))
                for _ in range(nb_layers)])
        else:
            self.mlp_seq = t.nn.Sequential(*[t.nn.Sequential()] * len(self.attn_seq))
        self.unemb = t.nn.Linear(d, N, bias=False)
        attn_mask = t.tril(t.ones((self.context_window - 1, self.context_window - 1))) == 0
        self.register_buffer('attn_mask', attn_mask)

    def forward(self, x):
        res = self.word_emb.weight[x]
        pos = self.pos_emb.weight[:x.shape[1]].unsqueeze(0)
        d, d_head = self.d, self.d_head
        for para_attn, mlp in zip(self.attn_seq, self.mlp_seq):
            compressed_res = self.linear_compress(res) + pos if d != d_head else res + pos
            para_res = sum(attn(compressed_res, compressed_res, compressed_res, attn_mask=self.attn_mask)[0]
                           for attn in para_attn)
            decompressed_res = self.linear_decompress(para_res) if d != d_head else para_res
            res = decompressed_res.add_(res)
            if self.use_mlp:
                mlp_out = mlp(res)
                res = mlp_out.add_(res)
        return self.unemb(res)


class AoT(Transformer):
    def __init__(self, d, N, nb_layers, parallel_heads, d_head, nb_head, context_window):
        super().__init__(d, N, nb_layers, 0, parallel_heads, d_head, nb_head, context_window)


# ---- helpers ---------------------------------------------------------------------------------------------
def margins(model, seqs, nxt, dtype):
    m = model.to(dtype).eval()
    with t.no_grad():
        logits = m(t.tensor(seqs))[:, -1, :].to(t.float64)
    tgt = logits[t.arange(len(nxt)), t.tensor(nxt)]
    other = logits.clone()
    other[t.arange(len(nxt)), t.tensor(nxt)] = -float("inf")
    return (tgt - other.max(dim=1).values).numpy()


def run(model_path, data_path, heads, max_bits=None):
    cmd = [RUN, model_path, data_path, str(heads)] + ([str(max_bits)] if max_bits is not None else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout, r.stderr


def certify_and_compare(name, model, seqs, nxt, heads, tmp, save_dtype=t.float32, must_wrong=(), near=(), tight=False):
    model = model.to(save_dtype)
    mp = os.path.join(tmp, name + ".pt")
    dp = os.path.join(tmp, name + ".npz")
    t.save(model.state_dict(), mp)
    np.savez(dp, sequences=np.asarray(seqs, dtype=np.int64), next=np.asarray(nxt, dtype=np.int64))
    rc, out, err = run(mp, dp, heads)
    check(rc == 0, f"{name}: exit {rc}: {err.strip()}")
    if rc != 0:
        return None
    res = json.loads(out)["examples"]
    # Reload the weights exactly as saved (float64 widening of what was stored).
    m64 = margins(model, seqs, nxt, t.float64)
    model.load_state_dict(t.load(mp))
    m32 = margins(model.to(t.float32), seqs, nxt, t.float32)
    counts = {1: 0, -1: 0, 0: 0}
    for k, e in enumerate(res):
        v = e["verdict"]
        counts[v] += 1
        lo, hi = float(e["margin_lo"]), float(e["margin_hi"])
        f32, b32 = float(e["float32_margin"]), float(e["float32_error_bound"])
        scale = 1e-12 * (1 + abs(m64[k]))
        check(lo - scale <= m64[k] <= hi + scale, f"{name}[{k}]: float64 margin {m64[k]!r} outside [{lo!r}, {hi!r}]")
        if abs(m64[k]) > 1e-9:
            check(v == (1 if m64[k] > 0 else -1), f"{name}[{k}]: verdict {v} vs float64 margin {m64[k]!r}")
        if abs(m32[k]) > 1e-3:
            check(v == (1 if m32[k] > 0 else -1), f"{name}[{k}]: verdict {v} vs float32 margin {m32[k]!r}")
        # torch's float32 margin and the emulation are both within the bound of the exact margin.
        tol = 1e-12 * (1 + abs(m64[k]))
        check(abs(m32[k] - m64[k]) <= b32 + tol,
              f"{name}[{k}]: torch float32 margin {m32[k]!r} vs exact ~{m64[k]!r} beyond bound {b32!r}")
        check(abs(f32 - m64[k]) <= b32 + tol,
              f"{name}[{k}]: emulated float32 margin {f32!r} vs exact ~{m64[k]!r} beyond bound {b32!r}")
        check(0 < b32 < (1e-2 if tight else float("inf")), f"{name}[{k}]: float32 bound {b32!r} (one-layer models: < 1e-2)")
        separated = (v == 1 and lo > b32) or (v == -1 and -hi >= b32)
        check(e["float32_disagreement"] == (0 if separated else 1),
              f"{name}[{k}]: float32_disagreement {e['float32_disagreement']} (verdict {v}, [{lo!r}, {hi!r}], bound {b32!r})")
        if k in must_wrong:
            check(v == -1 and hi <= 0, f"{name}[{k}]: exact tie not certified wrong (verdict {v}, hi {hi!r})")
        if k in near:
            check(v != 0 and 0 < abs(lo) and lo * hi > 0, f"{name}[{k}]: near tie not decided ({lo!r}, {hi!r})")
    print(f"{name}: correct {counts[1]}, wrong {counts[-1]}, undecided {counts[0]}")
    return res


def random_model(seed, cls, scale, **kw):
    t.manual_seed(seed)
    model = cls(**kw)
    with t.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model


def random_data(seed, T, S, N, model=None, frac_argmax=0.5):
    rng = np.random.default_rng(seed)
    seqs = rng.integers(0, N, size=(T, S))
    nxt = rng.integers(0, N, size=T)
    if model is not None:
        with t.no_grad():
            pred = model.to(t.float64)(t.tensor(seqs))[:, -1, :].argmax(dim=1).numpy()
        k = int(T * frac_argmax)
        nxt[:k] = pred[:k]
    return seqs.tolist(), nxt.tolist()


def train(model, seqs, nxt, steps, lr=1e-2):
    model = model.to(t.float32).train()
    opt = t.optim.Adam(model.parameters(), lr=lr)
    x, y = t.tensor(seqs), t.tensor(nxt)
    for _ in range(steps):
        opt.zero_grad()
        loss = t.nn.functional.cross_entropy(model(x)[:, -1, :], y)
        loss.backward()
        opt.step()
    return model.eval()


def main():
    t.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        # 1. AoT, one layer, two parallel blocks of 2 sub-heads, d == d_head.
        m = random_model(1, AoT, 1.0, d=8, N=10, nb_layers=1, parallel_heads=2, d_head=8, nb_head=2, context_window=6)
        seqs, nxt = random_data(11, 40, 5, 10, m)
        certify_and_compare("aot1", m, seqs, nxt, 2, tmp, tight=True)

        # 2. AoT, two layers, compress (d = 12, d_head = 8), 4 sub-heads.
        m = random_model(2, AoT, 2.0, d=12, N=16, nb_layers=2, parallel_heads=1, d_head=8, nb_head=4, context_window=5)
        seqs, nxt = random_data(12, 40, 4, 16, m)
        certify_and_compare("aot2c", m, seqs, nxt, 4, tmp)

        # 3. Transformer with GELU MLPs, compress, two layers of two blocks.
        m = random_model(3, Transformer, 1.5, d=8, N=12, nb_layers=2, width=16, parallel_heads=2, d_head=4, nb_head=1,
                         context_window=7)
        seqs, nxt = random_data(13, 40, 6, 12, m)
        certify_and_compare("mlp2", m, seqs, nxt, 1, tmp)

        # 4. Trained to memorize (Adam), stored in float64 (the float32 pass rounds the weights).
        m = random_model(4, Transformer, 1.0, d=16, N=20, nb_layers=1, width=8, parallel_heads=2, d_head=16, nb_head=4,
                         context_window=5)
        seqs, nxt = random_data(14, 60, 4, 20)
        m = train(m, seqs, nxt, 150)
        certify_and_compare("trained64", m, seqs, nxt, 4, tmp, save_dtype=t.float64)

        # 5. Ties: rows of unemb for tokens 3 and 5 identical (exact tie), rows 7 and 8 one float32 ulp
        #    apart in one coordinate (near tie). Targets chosen where the tied tokens win.
        m = random_model(5, AoT, 1.0, d=8, N=10, nb_layers=1, parallel_heads=1, d_head=8, nb_head=2, context_window=5)
        with t.no_grad():
            U = m.unemb.weight
            U[3] = U[5]
            U[8] = U[7]
            U[8, 0] = t.nextafter(U[7, 0], t.tensor(float("inf")))
            # make tokens 3/5 and 7/8 dominate: large rows
            U[3] *= 8; U[5] = U[3]
            U[7] *= 8; U[8] = U[7]; U[8, 0] = t.nextafter(U[7, 0], t.tensor(float("inf")))
        seqs, _ = random_data(15, 30, 4, 10)
        with t.no_grad():
            logits = m.to(t.float64)(t.tensor(seqs))[:, -1, :]
        must_wrong, near, nxt = [], [], []
        for k in range(30):
            top = int(logits[k].argmax())
            if top in (3, 5):
                nxt.append(3 if k % 2 else 5)
                must_wrong.append(k)
            elif top in (7, 8):
                nxt.append(top)
                near.append(k)
            else:
                nxt.append(5 if k % 3 == 0 else top)
                if k % 3 == 0:
                    pass
        # Examples whose target is 3 or 5 and where 3/5 win are exact ties.
        certify_and_compare("ties", m.to(t.float32), seqs, nxt, 2, tmp, must_wrong=set(must_wrong), near=set(near), tight=True)
        check(len(must_wrong) > 0 and len(near) > 0, f"ties: cases present (exact {len(must_wrong)}, near {len(near)})")

        # 6. Bad input: a sequence longer than the mask, a token id out of range, heads not dividing d_head.
        m = random_model(6, AoT, 1.0, d=8, N=10, nb_layers=1, parallel_heads=1, d_head=8, nb_head=2, context_window=5)
        mp = os.path.join(tmp, "bad.pt")
        t.save(m.state_dict(), mp)
        dp = os.path.join(tmp, "long.npz")
        np.savez(dp, sequences=np.zeros((2, 5), dtype=np.int64), next=np.zeros(2, dtype=np.int64))
        rc, out, err = run(mp, dp, 2)
        check(rc == 2 and "sequences" in err and "at most 4" in err, f"too long: exit {rc}, {err.strip()}")
        dp = os.path.join(tmp, "range.npz")
        np.savez(dp, sequences=np.array([[1, 2, 10, 3]], dtype=np.int64), next=np.zeros(1, dtype=np.int64))
        rc, out, err = run(mp, dp, 2)
        check(rc == 2 and "sequences[0][2]" in err, f"id out of range: exit {rc}, {err.strip()}")
        rc, out, err = run(mp, dp, 3)
        check(rc == 2 and "--heads" in err, f"heads 3 of d_head 8: exit {rc}, {err.strip()}")

    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("model_dana24_torch: all checks passed")


main()
