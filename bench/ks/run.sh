#!/usr/bin/env bash
# Builds bench_ks against the memcert libraries of a build tree and runs it.
#   bash bench/ks/run.sh [BUILD_DIR] [N n d V C seed]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shift || true
cmake --build "$build" -j2 --target memcert_ks memcert_core >/dev/null
g++ -std=c++20 -O2 -I"$root/include" "$here/bench_ks.cpp" -o "$build/bench_ks" \
  "$build/libmemcert_ks.a" "$build/libmemcert_core.a" -lgmpxx -lgmp -lmpfr -lz -pthread
/usr/bin/time -v "$build/bench_ks" "$@" 2> >(grep -E 'Maximum resident|Elapsed' >&2)
