#!/usr/bin/env bash
# For every certificate kind a command writes: the whole-process CPU time (user + system, /usr/bin/time)
# of the command that produces the certificate next to `verify` of it, at the sizes of the other
# harnesses (route_audit.sh: rank, kruskal, ks; e2e.sh small: theorem1, and one 8 times its contexts;
# docs/papers/dana24.md: dana24 at T_0 = 320; certify/run.sh: model at the paper's scale), with the peak
# resident memory of each (produce_peak_mb, verify_peak_mb; of one process at a time, the largest). The
# target: verify no slower than producing.
# Kinds enclosure-rank and enclosure-rank-rump are written by no command (they are checked inside the
# engine's fast path); claim and dana24-claim certificates are written by `claims run`, whose instances the
# checker already verifies in process: its directory of certificates is verified by one process
# (`verify DIR/*.json`, as `claims run` checks them in one), and also one process per certificate
# (verify_separate_cpu_s: mostly process start-up). With BASELINE=/path/to/an/older/memcert, verify is also
# timed with that binary, one process per certificate (before / after a change: verify_before_cpu_s,
# verify_before_peak_mb). The figures go to bench/results/ (bench/record.py;
# MEMCERT_BENCH_RESULTS=off to skip).
#   bash bench/cli/verify_vs_produce.sh [BUILD_DIR] [--no-model]   (needs /usr/bin/python3 with numpy;
#                                                                   torch for the model case)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
model=1
[ "${2:-}" = "--no-model" ] && model=0
bin=$build/memcert
base=${BASELINE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/memcert_verify_vs_produce.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 - <<'PY'
import numpy as np
r = np.random.default_rng(1)
np.save('k_f64_30x12.npy', r.standard_normal((30, 12)))
r = np.random.default_rng(2)
np.save('r_f64_1000.npy', r.standard_normal((1000, 1000)))
np.save('r_i64_1000.npy', r.integers(-1000, 1001, (1000, 1000)).astype(np.int64))
a, b = r.integers(-31, 32, (300, 250)), r.integers(-31, 32, (250, 300))
np.save('r_i64_300_r250.npy', (a @ b).astype(np.int64))
PY
cpu() {  # cpu FILE COMMAND...: the command's user + system CPU seconds into FILE, its peak RSS (MB) into FILE.mb
  local out=$1
  shift
  /usr/bin/time -f "%U %S %M" -o t.txt "$@" >/dev/null 2>&1 || true
  tail -n 1 t.txt | awk '{printf "%.2f", $1 + $2}' >"$out"
  tail -n 1 t.txt | awk '{printf "%.0f", $3 / 1024}' >"$out.mb"
}
verify_all() {  # verify_all FILE MEMCERT CERT: verify CERT (a directory: every certificate in it, one process each)
  cpu "$1" bash -c 'for f in "$1"/*.json "$1"; do [ -f "$f" ] && "$0" --quiet verify "$f" --max-seconds 0 --max-memory 0; done; true' \
    "$2" "$3"
}
verify_one_process() {  # verify_one_process FILE MEMCERT DIR: every certificate in DIR by one `verify A B C ...`
  cpu "$1" bash -c '"$0" --quiet verify "$1"/*.json --max-seconds 0 --max-memory 0' "$2" "$3"
}
row() {  # row KIND CASE PRODUCE_LABEL CERT PRODUCE_COMMAND... (CERT a directory: every certificate in it)
  local kind=$1 case=$2 label=$3 cert=$4
  shift 4
  cpu p.txt "$@"
  local separate=""
  if [ -d "$cert" ]; then
    verify_one_process v.txt "$bin" "$cert"
    verify_all s.txt "$bin" "$cert"
    separate=$(cat s.txt)
  else
    verify_all v.txt "$bin" "$cert"
  fi
  local before=""
  if [ -n "$base" ]; then
    verify_all b.txt "$base" "$cert"
    before=$(cat b.txt)
  fi
  local before_mb=""
  [ -n "$before" ] && before_mb=$(cat b.txt.mb)
  printf '%-14s %-44s %-28s produce %6.2f s %5s MB  verify %6.2f s %5s MB%s%s\n' "$kind" "$case" "$label" "$(cat p.txt)" \
    "$(cat p.txt.mb)" "$(cat v.txt)" "$(cat v.txt.mb)" "${separate:+  (one process each: $separate s)}" \
    "${before:+  (before: $before s, $before_mb MB)}"
  printf 'kind=%s\tcase=%s\tproduce=%s\tproduce_cpu_s=%s\tproduce_peak_mb=%s\tverify_cpu_s=%s\tverify_peak_mb=%s%s%s%s\n' \
    "$kind" "$case" "$label" "$(cat p.txt)" "$(cat p.txt.mb)" "$(cat v.txt)" "$(cat v.txt.mb)" \
    "${separate:+	verify_separate_cpu_s=$separate}" "${before:+	verify_before_cpu_s=$before}" \
    "${before_mb:+	verify_before_peak_mb=$before_mb}" >>rows
}
q="$bin --quiet"
row rank "300x300 int64 of rank 250" "rank --cert" r1.json $q rank r_i64_300_r250.npy --cert r1.json
row rank "1000x1000 int64" "rank --cert" r2.json $q rank r_i64_1000.npy --cert r2.json
row rank "1000x1000 float64" "rank --cert" r3.json $q rank r_f64_1000.npy --cert r3.json
row kruskal "30x12 float64" "kruskal --cert" k.json $q kruskal k_f64_30x12.npy --cert k.json
/usr/bin/python3 "$root/bench/theorem1/make_data.py" t1.npz 253 32 64 >/dev/null
row theorem1 "e2e small: T=253 n=32 d=64 H=12 d_h=22" "construct --no-check" t1.json \
  $q construct theorem1 t1.npz --heads 12 --dh 22 --out t1.json --no-check --max-memory 0
/usr/bin/python3 "$root/bench/theorem1/make_data.py" t2.npz 505 32 128 >/dev/null
row theorem1 "T=505 n=32 d=128 H=8 d_h=64" "construct --no-check" t2.json \
  $q construct theorem1 t2.npz --heads 8 --dh 64 --out t2.json --no-check --max-memory 0
$q generate ks --N 2000 --n 16 --d 32 --seed 1 --out ks.json
row ks "N=2000 n=16 d=32" "construct ks" ks_cert.json $q construct ks ks.json --out ks_cert.json
$q generate dana24 --N 1000 --S 8 --T 320 --seed 1 --out d.json
row dana24 "N=1000 S=8 d=64 H=16 d_h=16 T_0=320" "construct dana24" d_cert.json \
  $q construct dana24 d.json --heads 16 --dh 16 --d 64 --out d_cert.json
row claim "mahdavi24/proposition-1, 20 instances" "claims run (checks each)" claims \
  $q claims run mahdavi24/proposition-1 --instances 20 --cert-dir claims
row dana24-claim "dana24/lemma-2, 20 instances" "claims run (checks each)" dclaims \
  $q claims run dana24/lemma-2 --instances 20 --cert-dir dclaims
if [ "$model" = 1 ]; then
  /usr/bin/python3 "$root/bench/certify/make_setting.py" m --T 20000 >/dev/null
  cpu c.txt $q certify m/model.pt m/data.npz --arch mahdavi24-baseline
  row model "paper: d=64 H=20 C=100 n=32 T=20000" "certify --out (checks it)" m.json \
    $q certify m/model.pt m/data.npz --arch mahdavi24-baseline --out m.json
  printf '%-14s %-44s %-28s produce %6.2f s\n' model "(the same)" "certify (no certificate)" "$(cat c.txt)"
  printf 'kind=model\tcase=paper, no certificate\tproduce=certify\tproduce_cpu_s=%s\n' "$(cat c.txt)" >>rows
fi
/usr/bin/python3 "$root/bench/record.py" verify-vs-produce "$work/rows" --command "bash bench/cli/verify_vs_produce.sh BUILD" \
  --threads "$(nproc)" --memcert "$("$bin" --version)" --build "$build" ${base:+--baseline "$(dirname "$base")"}
