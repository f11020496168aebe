#!/usr/bin/env bash
# `memcert certify` on mahdavi24's classification setting at the paper's scale (make_setting.py:
# BaselineAttention, d = 64, H = 20, 100 classes, context 32 + query) against torch_accuracy.py (PyTorch's
# float32 accuracy of the same checkpoint on the same data), one run each, as whole processes. Wall time
# and peak RSS from /usr/bin/time; the ratio is memcert / PyTorch. The figures are also written as a
# result file in bench/results/ (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#
#   bash bench/certify/run.sh BUILD_DIR [T|--small] [STEPS]
#     T: examples (20000 by default; 130000 is the paper's largest classification run)
#     --small: d = 16, H = 4, 10 classes, context 8, T = 1000 (seconds; a check of the harness)
#     STEPS: Adam steps of training before the run (0 by default: random initialisation)
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [T|--small] [STEPS]}
SIZE=${2:-20000}
STEPS=${3:-0}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memcert_bench_certify.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PY=${PYTHON:-/usr/bin/python3}
if [ "$SIZE" = "--small" ]; then size_args=(--small); case_name="small"; else size_args=(--T "$SIZE"); case_name="paper"; fi
shape=$("$PY" "$HERE/make_setting.py" "$WORK" "${size_args[@]}" --steps "$STEPS")
sync  # the files just written are flushed before either program is timed
rc=0
/usr/bin/time -f "%e %M %U %S" -o "$WORK/tm" "$BUILD/memcert" --quiet certify "$WORK/model.pt" "$WORK/data.npz" \
  --arch mahdavi24-baseline --json >"$WORK/m.json" || rc=$?
if { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 3 ]; } || [ ! -s "$WORK/m.json" ]; then
  echo "memcert certify: exit $rc, no result" >&2; exit 1
fi
read -r mw mm mu ms < <(tail -n 1 "$WORK/tm")  # time prints "Command exited ..." first on exit 1 or 3
/usr/bin/time -f "%e %M %U %S" -o "$WORK/tp" "$PY" "$HERE/torch_accuracy.py" "$WORK/model.pt" "$WORK/data.npz" >"$WORK/p.json"
read -r pw pm pu ps < <(tail -n 1 "$WORK/tp")
field() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); v=j.get(sys.argv[2]); print(len(v) if isinstance(v, list) else v)' "$@"; }
correct=$(field "$WORK/m.json" certified_correct); wrong=$(field "$WORK/m.json" certified_wrong)
undecided=$(field "$WORK/m.json" undecided); f32dis=$(field "$WORK/m.json" float32_disagreements)
f32ok=$(field "$WORK/p.json" float32_correct); pthreads=$(field "$WORK/p.json" threads)
ratio=$(awk "BEGIN{printf \"%.3f\", $mw / $pw}")
echo "memcert $("$BUILD/memcert" --version), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "setting: $shape"
echo "| case | memcert certify | PyTorch float32 | ratio |"
echo "|---|---|---|---|"
printf '| %s | %s s (%s MB; %s correct, %s wrong, %s undecided, %s float32 disagreements) | %s s (%s MB; %s correct) | %s |\n' \
  "$shape" "$mw" "$((mm / 1024))" "$correct" "$wrong" "$undecided" "$f32dis" "$pw" "$((pm / 1024))" "$f32ok" "$ratio"
echo "CPU (user + system): memcert $mu + $ms s, PyTorch $pu + $ps s; threads: memcert $(nproc) (--threads default), PyTorch $pthreads"
printf 'case=%s %s\tmemcert_s=%s\tmemcert_mb=%s\tmemcert_cpu_s=%s\tmemcert_exit=%s\tcertified_correct=%s\tcertified_wrong=%s\tundecided=%s\tfloat32_disagreements=%s\tpeer=torch_accuracy.py\tpeer_s=%s\tpeer_mb=%s\tpeer_cpu_s=%s\tfloat32_correct=%s\tratio=%s\n' \
  "$case_name" "$shape" "$mw" "$((mm / 1024))" "$(awk "BEGIN{print $mu + $ms}")" "$rc" "$correct" "$wrong" "$undecided" "$f32dis" \
  "$pw" "$((pm / 1024))" "$(awk "BEGIN{print $pu + $ps}")" "$f32ok" "$ratio" >"$WORK/rows"
"$PY" "$HERE/../record.py" certify "$WORK/rows" --command "bash bench/certify/run.sh BUILD $SIZE $STEPS" \
  --threads "$(nproc)" --memcert "$("$BUILD/memcert" --version)" --peer-threads "PyTorch $pthreads" --build "$BUILD"
