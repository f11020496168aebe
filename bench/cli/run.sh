#!/usr/bin/env bash
# Whole-process benchmarks: each `memcert` command against the program a researcher would otherwise run
# on the same file, timed back to back as whole processes (start-up, reading the .npy, computing,
# printing). Wall time and peak RSS from /usr/bin/time; each program runs REPEAT times (default 3) and
# its best time is kept; the ratio is memcert / peer. The figures are also written as a result file in
# bench/results/ (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#
#   bash bench/cli/run.sh BUILD_DIR [REPEAT]      (needs scripts/install-deps.sh --bench and python3-numpy)
#
# With BASELINE=/path/to/an/older/memcert, that binary is timed on the same files, its runs interleaved
# with the current one's (before_s, before_mb, vs_before = memcert / before): a change's effect in one run.
#
# memcert runs with its default threads (all cores) and prints the count it used; FLINT's nmod_mat_rank
# and fmpz_mat_rank are single-threaded (2.9); numpy's SVD uses OpenBLAS's default threads (all cores).
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [REPEAT]}
REPEAT=${2:-3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memcert_bench_cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MEMCERT=$BUILD/memcert
PY=${PYTHON:-/usr/bin/python3}  # Debian's interpreter, which has python3-numpy

cc -O2 -o "$WORK/flint_rank" "$HERE/flint_rank.c" -lflint -lgmp
"$PY" "$HERE/make_inputs.py" "$WORK"

# best WALL_S PEAK_MB of REPEAT runs of a command (stdout of the last run kept in $WORK/out).
best() {
  local bw="" bm=""
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err"
    read -r w m <"$WORK/time"
    if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then bw=$w; fi
    if [ -z "$bm" ] || [ "$m" -gt "$bm" ]; then bm=$m; fi
  done
  echo "$bw $((bm / 1024))"
}

# best WALL_S PEAK_MB of the current memcert and of BASELINE's, "ARGS" REPEAT times each, run by run in
# turn (the current one last: $WORK/out is its output).
best_ab() {
  local aw="" am="" bw="" bm="" w m
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$BASELINE" "$@" >/dev/null 2>&1
    read -r w m <"$WORK/time"
    if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then bw=$w; fi
    if [ -z "$bm" ] || [ "$m" -gt "$bm" ]; then bm=$m; fi
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$MEMCERT" "$@" >"$WORK/out" 2>"$WORK/err"
    read -r w m <"$WORK/time"
    if [ -z "$aw" ] || awk "BEGIN{exit !($w < $aw)}"; then aw=$w; fi
    if [ -z "$am" ] || [ "$m" -gt "$am" ]; then am=$m; fi
  done
  echo "$aw $((am / 1024)) $bw $((bm / 1024))"
}

row() {  # NAME FILE PEER_LABEL PEER_COMMAND...
  local name=$1 file=$2 peer=$3
  shift 3
  local bw="" bm="" before="" before_row=""
  if [ -n "${BASELINE:-}" ]; then
    read -r mw mm bw bm < <(best_ab --quiet rank "$WORK/$file" --json)
    before=" before: $bw s ($bm MB), $(awk "BEGIN{printf \"%.3f\", $mw / $bw}")"
    before_row=$(printf '\tbefore_s=%s\tbefore_mb=%s\tvs_before=%s' "$bw" "$bm" "$(awk "BEGIN{printf \"%.3f\", $mw / $bw}")")
  else
    read -r mw mm < <(best "$MEMCERT" --quiet rank "$WORK/$file" --json)
  fi
  local mrank threads
  mrank=$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["rank"], j["threads"])' "$WORK/out")
  read -r pw pm < <(best "$@")
  local prank
  prank=$(cat "$WORK/out")
  local insize
  insize=$(( $(stat -c %s "$WORK/$file") / 1048576 ))
  printf '| %s | %s s (%s MB, rank %s, %s threads) | %s %s s (%s MB, rank %s) | %s |  input %s MB%s\n' \
    "$name" "$mw" "$mm" "${mrank% *}" "${mrank#* }" "$peer" "$pw" "$pm" "$prank" \
    "$(awk "BEGIN{printf \"%.3f\", $mw / $pw}")" "$insize" "$before"
  printf 'case=%s\tmemcert_s=%s\tmemcert_mb=%s\trank=%s\tpeer=%s\tpeer_s=%s\tpeer_mb=%s\tpeer_rank=%s\tratio=%s\tinput_mb=%s%s\n' \
    "$name" "$mw" "$mm" "${mrank% *}" "$peer" "$pw" "$pm" "$prank" \
    "$(awk "BEGIN{printf \"%.3f\", $mw / $pw}")" "$insize" "$before_row" >>"$WORK/rows"
  THREADS=${mrank#* }
}

echo "memcert $("$MEMCERT" --version), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| case | memcert rank | peer | ratio |"
echo "|---|---|---|---|"
row "2000 x 2000 int64, [-1000, 1000]" int2000.npy "FLINT nmod_mat_rank" "$WORK/flint_rank" modp "$WORK/int2000.npy"
row "500 x 500 int64, rank 400" rank400.npy "FLINT fmpz_mat_rank" "$WORK/flint_rank" exact "$WORK/rank400.npy"
row "2000 x 2000 float64 Gaussian" gauss2000.npy "numpy.linalg.matrix_rank" "$PY" "$HERE/numpy_rank.py" "$WORK/gauss2000.npy"
"$PY" "$HERE/../record.py" cli-rank "$WORK/rows" --command "bash bench/cli/run.sh BUILD $REPEAT" \
  --threads "$THREADS" --memcert "$("$MEMCERT" --version)" --peer-threads "FLINT 1, numpy OpenBLAS default" \
  --build "$BUILD" ${BASELINE:+--baseline "$(dirname "$BASELINE")"}
