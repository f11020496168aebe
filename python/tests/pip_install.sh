#!/usr/bin/env bash
# ctest python_pip: `pip install ./python` into a fresh venv, offline (no index, no build requirements to
# download: python/build_backend.py), then the installed package imported and run from outside the tree.
# Usage: pip_install.sh PYTHON SOURCE_DIR BUILD_DIR (the build directory is reused: MEMCERT_BUILD_DIR).
set -euo pipefail
py=$1 src=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --system-site-packages: numpy comes from the system (python3-numpy); pip cannot download it offline.
"$py" -m venv --system-site-packages "$tmp/v"
cd "$tmp"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 MEMCERT_BUILD_DIR="$build" MEMCERT_BUILD_JOBS=2 \
  "$tmp/v/bin/pip" install -q "$src/python"
env -u PYTHONPATH -u MEMCERT_EXE "$tmp/v/bin/python" - "$tmp/v" <<'PY'
import os, sys
import memcert
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(memcert.__file__).startswith(venv), memcert.__file__
assert os.path.realpath(memcert.executable()).startswith(venv), memcert.executable()
r = memcert.rank([[1, 2], [2, 4]])
assert r.rank == 1 and memcert.verify(r.certificate).valid
print("installed", memcert.__version__, "in", venv, "- rank", r.rank)
PY
