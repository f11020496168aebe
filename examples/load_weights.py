"""Load the weights `memcert construct theorem1|ks|dana24 ... --weights-out weights.npz` wrote, run the
model's forward pass in float64 with numpy only, and report which examples it memorizes.

  python3 examples/load_weights.py weights.npz data.npz [--tol 1e-6] [--layout heads|torch] [--json]

The construction is recognised from the array names (docs/FORMATS.md "Weights out"):
- theorem1 (WK, WQ, WV, WO, WD, skip): mahdavi24's multi-head attention, eqs. (1)-(6);
- ks (f1_*, WOV, f2_*): the ks25 network; prediction f2(f1(x_n) + WOV mean_k f1(x_k)) rounded to an integer
  class (per token for per-token labels). Its bit-extraction stages need exact arithmetic: once its numbers
  exceed 53 bits, float64 loses examples, and this script says how many;
- dana24 (e, pos, W_Q, W_K, W_V, W_O, W_U): the attention-only model, arg-max of W_U E(t) at position S.
data: the data set given to the construct command (.npz, or .json with exact strings such as "7/12").
--layout heads: the per-head arrays WK, WQ, WV, WO, WD (mahdavi24's eqs. 1-6);
--layout torch: the torch_* arrays, computed exactly as PyTorch's nn.MultiheadAttention does (in numpy;
  with PyTorch, load torch_in_proj_weight etc. into the module's parameters of the same names).
Real labels: an example is memorized when every output is within --tol of its label; class labels: when
the arg-max of the outputs is its class. This is a float64 check of rounded weights, not a certificate
(the certificate holds the exact weights; `memcert verify` re-checks it)."""
import argparse
import json
import sys
from fractions import Fraction

import numpy as np


def load_dataset(path):
    """contexts (T, n, d), queries (T, d), labels (T, d_out) or None, class_labels (T,) or None."""
    if path.lower().endswith(".npz"):
        z = np.load(path)
        labels = z["labels"] if "labels" in z.files else None
        if labels is not None and labels.ndim == 1:
            labels = labels[:, None]  # flat real labels: d_out = 1
        cls = z["class_labels"].astype(np.int64) if "class_labels" in z.files else None
        return z["contexts"].astype(np.float64), z["queries"].astype(np.float64), labels, cls
    j = json.load(open(path))
    num = np.vectorize(lambda x: float(Fraction(x)) if isinstance(x, str) else float(x), otypes=[np.float64])
    labels = None
    if j.get("labels") is not None:
        labels = num(np.array(j["labels"], dtype=object))
        if labels.ndim == 1:
            labels = labels[:, None]
    cls = np.array(j["class_labels"], dtype=np.int64) if j.get("class_labels") is not None else None
    return num(np.array(j["contexts"], dtype=object)), num(np.array(j["queries"], dtype=object)), labels, cls


def softmax(a):
    x = np.exp(a - a.max())
    return x / x.sum()


def forward_heads(w, E, e):
    """y = WD^T (WO^T [WV_h^T E^T softmax(E WK_h WQ_h^T e)]_h (+ e with skip))."""
    o_heads = []
    for h in range(w["WK"].shape[0]):
        a = E @ w["WK"][h] @ (w["WQ"][h].T @ e)
        p = E.T @ softmax(a)
        o_heads.append(w["WV"][h].T @ p)
    o = w["WO"].T @ np.concatenate(o_heads)
    if float(w["skip"]) != 0:
        o = o + e
    return w["WD"].T @ o


def forward_torch(w, E, e, H):
    """PyTorch's multi_head_attention_forward for one query token e over keys = values = E."""
    d = e.shape[0]
    hd = d // H
    Wq, Wk, Wv = np.split(w["torch_in_proj_weight"], 3)
    bq, bk, bv = np.split(w["torch_in_proj_bias"], 3)
    q, k, v = Wq @ e + bq, E @ Wk.T + bk, E @ Wv.T + bv
    heads = []
    for h in range(H):
        s = slice(h * hd, (h + 1) * hd)
        heads.append(softmax(k[:, s] @ q[s] / np.sqrt(hd)) @ v[:, s])
    o = w["torch_out_proj_weight"] @ np.concatenate(heads) + w["torch_out_proj_bias"]
    if float(w["skip"]) != 0:
        o = o + e
    return w["torch_readout_weight"] @ o


def load_json_or_npz(path):
    if path.lower().endswith(".npz"):
        return {k: v for k, v in np.load(path).items()}
    return json.load(open(path))


def relu_net(w, name, x):
    """ReLU after every layer but the last (the ks certificate's semantics)."""
    layers = int(w[name + "_layers"])
    for i in range(layers):
        x = w["%s_W%d" % (name, i)] @ x + w["%s_b%d" % (name, i)]
        if i + 1 < layers:
            x = np.maximum(x, 0.0)
    return x


def check_ks(w, data):
    """Per sequence (or per token with per-token labels): the float64 prediction rounds to the label."""
    j = load_json_or_npz(data)
    num = np.vectorize(lambda x: float(Fraction(x)) if isinstance(x, str) else float(x), otypes=[np.float64])
    seqs = num(np.array(j["sequences"], dtype=object))
    labels = np.array(j["labels"], dtype=np.int64)
    ok = []
    for i, X in enumerate(seqs):
        f1 = np.array([relu_net(w, "f1", x) for x in X])
        mean = f1.mean(axis=0)
        positions = range(len(X)) if labels.ndim == 2 else [len(X) - 1]
        want = labels[i] if labels.ndim == 2 else [labels[i]] * len(X)
        good = True
        for p in positions:
            y = relu_net(w, "f2", f1[p] + w["WOV"] @ mean)
            good = good and int(np.rint(y[0])) == int(want[p])
        ok.append(good)
    return ok


def check_dana24(w, data):
    """Strict arg-max of W_U E(t) at the last position equals the next token."""
    j = load_json_or_npz(data)
    seqs, nxt = np.array(j["sequences"], dtype=np.int64), np.array(j["next"], dtype=np.int64)
    ok = []
    for t, seq in enumerate(seqs):
        x = w["e"][seq] + w["pos"][: len(seq)]
        E = x[-1].copy()
        for h in range(w["W_Q"].shape[0]):
            a = (x @ w["W_K"][h].T) @ (w["W_Q"][h] @ x[-1])
            E += w["W_O"][h] @ (w["W_V"][h] @ (x.T @ softmax(a)))
        logits = w["W_U"] @ E
        top = np.argsort(logits)[-2:]
        ok.append(int(top[-1]) == int(nxt[t]) and logits[top[-1]] > logits[top[0]])
    return ok


def report(kind, ok, args, extra=None):
    T = len(ok)
    memorized = [t for t in range(T) if ok[t]]
    missing = [t for t in range(T) if not ok[t]]
    if args.json:
        out = {"kind": kind, "T": T, "memorized_count": len(memorized), "not_memorized": missing}
        out.update(extra or {})
        print(json.dumps(out))
    else:
        print("float64 forward pass (%s): %d of %d examples memorized" % (kind, len(memorized), T))
        if missing:
            print("not memorized: %s" % missing[:20])
    return 0 if not missing else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights")
    ap.add_argument("data")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--layout", choices=["heads", "torch"], default="heads")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    w = dict(np.load(args.weights))
    if "f1_layers" in w:
        return report("ks", check_ks(w, args.data), args)
    if "W_U" in w:
        return report("dana24", check_dana24(w, args.data), args)
    if args.layout == "torch" and "torch_in_proj_weight" not in w:
        sys.exit("load_weights.py: %s has no PyTorch layout (H must divide d, d_h and d_v at most d/H)" % args.weights)
    C, Q, Y, cls = load_dataset(args.data)
    H = w["WK"].shape[0]
    memorized, worst = [], 0.0
    for t in range(len(C)):
        y = forward_heads(w, C[t], Q[t]) if args.layout == "heads" else forward_torch(w, C[t], Q[t], H)
        if cls is not None:
            ok = int(np.argmax(y)) == int(cls[t])
        else:
            err = float(np.max(np.abs(y - Y[t]))) if Y is not None else float("nan")
            worst = max(worst, err)
            ok = err <= args.tol
        if ok:
            memorized.append(t)
    T = len(C)
    missing = [t for t in range(T) if t not in set(memorized)]
    if args.json:
        print(json.dumps({"T": T, "memorized_count": len(memorized), "not_memorized": missing,
                          "max_label_error": worst if cls is None else None, "layout": args.layout}))
    else:
        print("float64 forward pass (%s layout): %d of %d examples memorized%s" %
              (args.layout, len(memorized), T, "" if cls is not None else ", max |y - label| = %.3g" % worst))
        if missing:
            print("not memorized: %s" % missing[:20])
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())
