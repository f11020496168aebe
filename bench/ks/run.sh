#!/usr/bin/env bash
# Builds bench_ks against the memcert libraries of a build tree and runs it. The key=value figures it
# prints (and the wall time and peak RSS) are also written as a result file in bench/results/
# (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#   bash bench/ks/run.sh [BUILD_DIR] [N n d V C seed]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shift || true
cmake --build "$build" -j2 --target memcert_ks25 memcert_core >/dev/null
g++ -std=c++20 -O2 -I"$root/include" "$here/bench_ks.cpp" -o "$build/bench_ks" \
  "$build/libmemcert_ks25.a" "$build/libmemcert_core.a" -lgmpxx -lgmp -lmpfr -lz -pthread
work=$(mktemp -d "${TMPDIR:-/tmp}/memcert_bench_ks.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/time -v "$build/bench_ks" "$@" >"$work/out" 2>"$work/time"
cat "$work/out"
grep -E 'Maximum resident|Elapsed' "$work/time" >&2
# One row: every key=value token of the output, the stage times ("build 0.12s" -> build_s=0.12) and the
# process's wall time and peak RSS.
/usr/bin/python3 - "$work/out" "$work/time" >"$work/rows" <<'PY'
import re, sys
out, tm = open(sys.argv[1]).read(), open(sys.argv[2]).read()
row = dict(re.findall(r"([A-Za-z_|()0-9]+)=([^\s,]+)", out))
row.update({k + "_s": v for k, v in re.findall(r"\b(generate|prepare\(checks\)|build|verify|certificate) ([0-9.]+)s", out)})
m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", tm)
if m:
    row["peak_mb"] = int(m.group(1)) // 1024
m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([0-9.]+)", tm)
if m:
    row["wall_s"] = round(int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3)), 2)
print("\t".join(f"{k.replace('(', '_').replace(')', '').replace('|', '')}={v}" for k, v in row.items()))
PY
/usr/bin/python3 "$root/bench/record.py" ks25-construct "$work/rows" --command "bash bench/ks/run.sh BUILD $*" --build "$build"
