#!/usr/bin/env python3
"""Writes mahdavi24's classification setting at the paper's scale for `memcert certify`: their
BaselineAttention (d_in = d_model = d_h = 64, H = 20 heads, 100 classes; examples/certify_trained/
mahdavi24.py) at random initialisation or briefly trained with Adam, and their RandomDataset (context 32 +
the query, T examples). Saves DIR/model.pt as their Trainer saves a checkpoint and DIR/data.npz (X float32
(T, 33, 64), y int64 (T,)).
    make_setting.py DIR [--T 20000] [--steps 0] [--small] [--seed 42]
--small: d = 16, H = 4, 10 classes, context 8, T = 1000 (seconds); --steps N: N Adam steps (lr 1e-3, as
their Trainer) on random batches of 256 (0: random initialisation)."""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "certify_trained"))
from mahdavi24 import BaselineAttention, RandomDataset  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("dir")
ap.add_argument("--T", type=int)
ap.add_argument("--steps", type=int, default=0)
ap.add_argument("--small", action="store_true")
ap.add_argument("--seed", type=int, default=42)
a = ap.parse_args()
d, H, C, n, T = (16, 4, 10, 8, 1000) if a.small else (64, 20, 100, 32, 20000)
T = a.T or T
torch.manual_seed(a.seed)
ds = RandomDataset(d, a.seed, C, n, T)
model = BaselineAttention(input_dim=d, n_classes=C, d_model=d, num_heads=H, dh=None)
if a.steps:
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(a.seed)
    t0 = time.time()
    for _ in range(a.steps):
        idx = torch.randint(0, T, (256,), generator=g)
        loss = torch.nn.functional.cross_entropy(model(ds.X[idx], None)[0][:, 0, :], ds.y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("trained %d steps in %.1f s (loss %.3f)" % (a.steps, time.time() - t0, float(loss)), file=sys.stderr)
os.makedirs(a.dir, exist_ok=True)
torch.save({"state_dict": model.state_dict()}, os.path.join(a.dir, "model.pt"))
np.savez(os.path.join(a.dir, "data.npz"), X=ds.X.numpy(), y=ds.y.numpy())
print("d=%d H=%d C=%d n=%d T=%d steps=%d" % (d, H, C, n, T, a.steps))
