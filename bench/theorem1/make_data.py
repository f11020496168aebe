#!/usr/bin/env python3
"""Writes a Theorem 1 data set as PyTorch stores it (float32, seeded) into PATH (.npz): contexts (T, n, d)
and queries (T, d) standard Gaussian, labels (T, 1) standard Gaussian.
    make_data.py PATH T n d [SEED]
ViT-B shape at H=12, d_h=64: make_data.py vitb.npz 757 197 768; H=128: make_data.py h128.npz 8065 64 128."""
import sys

import numpy as np

path, T, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
g = np.random.default_rng(int(sys.argv[5]) if len(sys.argv) > 5 else 20261123)
contexts = g.standard_normal((T, n, d), dtype=np.float32)
queries = g.standard_normal((T, d), dtype=np.float32)
labels = g.standard_normal((T, 1), dtype=np.float32)  # real labels, d_out = 1
np.savez(path, contexts=contexts, queries=queries, labels=labels)
