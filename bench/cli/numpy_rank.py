#!/usr/bin/env python3
"""Whole-process peer of `memcert rank` on float data: numpy.linalg.matrix_rank (SVD with numpy's default
tolerance; a numerical rank, nothing certified).   numpy_rank.py FILE.npy"""
import sys

import numpy as np

print(np.linalg.matrix_rank(np.load(sys.argv[1])))
