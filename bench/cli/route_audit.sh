#!/usr/bin/env bash
# Whole-process CPU time (user + system, /usr/bin/time) of the entry points other than `rank`,
# `assumptions`, `construct theorem1` and dana24, next to `verify` of what each one wrote; the table in
# bench/README.md says what the lines exercise. The figures are also written as a result
# file in bench/results/ (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#   bash bench/cli/route_audit.sh [BUILD_DIR]        (needs /usr/bin/python3 with numpy for the inputs)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/memcert
work=$(mktemp -d "${TMPDIR:-/tmp}/memcert_route_audit.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 - <<'PY'
import numpy as np
r = np.random.default_rng(1)
np.save('k_f64_30x12.npy', r.standard_normal((30, 12)))
np.save('k_f64_2000x64.npy', r.standard_normal((2000, 64)))
r = np.random.default_rng(2)
np.save('r_f64_1000.npy', r.standard_normal((1000, 1000)))
np.save('r_i64_1000.npy', r.integers(-1000, 1001, (1000, 1000)).astype(np.int64))
a, b = r.integers(-31, 32, (300, 250)), r.integers(-31, 32, (250, 300))
np.save('r_i64_300_r250.npy', (a @ b).astype(np.int64))
PY
cpu() {  # cpu LABEL COMMAND...: prints LABEL and the command's user + system CPU seconds
  local label=$1
  shift
  /usr/bin/time -f "%U %S" -o t.txt "$@" >/dev/null 2>&1 || true
  printf '%-58s %6.2f s\n' "$label" "$(awk '{print $1 + $2}' t.txt)"
  printf 'case=%s\tcpu_s=%s\n' "$label" "$(awk '{printf "%.2f", $1 + $2}' t.txt)" >>rows
}
q="$bin --quiet"
cpu "kruskal 30x12 float64 (budget-bound enumeration)" $q kruskal k_f64_30x12.npy --cert k.json
cpu "verify of its certificate" $q verify k.json
cpu "kruskal 2000x64 float64 --sample 64 --trials 5000" $q kruskal k_f64_2000x64.npy --sample 64 --trials 5000
for f in r_i64_300_r250 r_i64_1000 r_f64_1000; do
  cpu "rank $f --cert" $q rank $f.npy --cert $f.json
  cpu "verify of its certificate" $q verify $f.json
done
cpu "generate ks --N 2000 --n 16 --d 32" $q generate ks --N 2000 --n 16 --d 32 --seed 1 --out ks.json
cpu "construct ks (N = 2000)" $q construct ks ks.json --out ks_cert.json
cpu "verify of its certificate" $q verify ks_cert.json
cpu "generate theorem1 --T 1000 --n 32 --d 64 (.npz)" $q generate theorem1 --T 1000 --n 32 --d 64 --seed 1 --out t.npz
/usr/bin/python3 "$root/bench/record.py" cli-route-audit "$work/rows" --command "bash bench/cli/route_audit.sh BUILD" \
  --threads "$(nproc)" --memcert "$("$bin" --version)" --build "$build"
