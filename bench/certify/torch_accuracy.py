#!/usr/bin/env python3
"""The PyTorch program a researcher runs instead of `memcert certify`: load the checkpoint into the
authors' BaselineAttention (shapes read from the state_dict), run it in float32 on every example of
DATA.npz, and print the float32 accuracy read at the query token (as their RandomTask does) as JSON.
Nothing is certified: each prediction is whatever float32 rounding makes of it. Threads: all cores
($TORCH_THREADS to change), as memcert's default (Debian's PyTorch would otherwise start with one).
    torch_accuracy.py MODEL.pt DATA.npz [--batch 1024]"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "certify_trained"))
from mahdavi24 import BaselineAttention, float32_margins  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("model")
ap.add_argument("data")
ap.add_argument("--batch", type=int, default=1024)
a = ap.parse_args()
torch.set_num_threads(int(os.environ.get("TORCH_THREADS", os.cpu_count())))
t0 = time.time()
ckpt = torch.load(a.model, map_location="cpu")
sd = ckpt.get("state_dict", ckpt)
H, d_model, dh = sd["attention.Wq"].shape
C, d_in = sd["decoder.weight"].shape[0], sd["embedding.weight"].shape[1]
model = BaselineAttention(input_dim=d_in, n_classes=C, d_model=d_model, num_heads=H, dh=dh)
model.load_state_dict(sd)
model.eval()
with np.load(a.data) as z:
    X, y = torch.from_numpy(z["X"]), torch.from_numpy(z["y"])
margins = float32_margins(model, X, y, batch=a.batch)
print(json.dumps({"T": len(y), "float32_correct": int((margins > 0).sum()),
                  "float32_accuracy": float((margins > 0).float().mean()), "threads": torch.get_num_threads(),
                  "seconds": round(time.time() - t0, 3)}))
