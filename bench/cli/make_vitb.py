#!/usr/bin/env python3
"""Writes an attention data set of ViT-B shape as PyTorch stores it (float32) into PATH (.npz, seeded):
contexts (T, 197, 768) and queries (T, 768), standard Gaussian.
    make_vitb.py PATH [T]"""
import sys

import numpy as np

path, T = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000
g = np.random.default_rng(20261123)
contexts = g.standard_normal((T, 197, 768), dtype=np.float32)
queries = g.standard_normal((T, 768), dtype=np.float32)
np.savez(path, contexts=contexts, queries=queries)
