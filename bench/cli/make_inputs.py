#!/usr/bin/env python3
"""Writes bench/cli's inputs into DIR (seeded, so every run measures the same matrices):
  int2000.npy    2000 x 2000 int64, entries uniform in [-1000, 1000]
  rank400.npy    500 x 500 int64 of rank 400: (500 x 400) (400 x 500) with entries in [-31, 31]
  gauss2000.npy  2000 x 2000 float64, standard Gaussian
    make_inputs.py DIR"""
import os
import sys

import numpy as np

d = sys.argv[1]
g = np.random.default_rng(20261123)
np.save(os.path.join(d, "int2000.npy"), g.integers(-1000, 1001, (2000, 2000), dtype=np.int64))
b = g.integers(-31, 32, (500, 400), dtype=np.int64)
c = g.integers(-31, 32, (400, 500), dtype=np.int64)
np.save(os.path.join(d, "rank400.npy"), b @ c)
np.save(os.path.join(d, "gauss2000.npy"), g.standard_normal((2000, 2000)))
