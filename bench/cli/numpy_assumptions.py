#!/usr/bin/env python3
"""The numpy program a researcher would run instead of `memcert assumptions` (floating point, no
certificate): matrix_rank of every context and of one random n-subset of the queries (one Kruskal
sample). Prints the number of full-rank contexts and the sample's rank.
    numpy_assumptions.py DATA.npz"""
import sys

import numpy as np

z = np.load(sys.argv[1])
contexts, queries = z["contexts"], z["queries"]
T, n, _ = contexts.shape
full = sum(int(np.linalg.matrix_rank(contexts[t]) == n) for t in range(T))
pick = np.random.default_rng(20261123).choice(T, size=min(n, T), replace=False)
print(full, np.linalg.matrix_rank(queries[pick]))
