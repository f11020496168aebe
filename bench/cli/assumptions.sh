#!/usr/bin/env bash
# `memcert assumptions` on T examples of ViT-B shape (n = 197 tokens, d = 768, float32) against
# numpy_assumptions.py (matrix_rank of every context + one Kruskal sample of the queries), one run each,
# as whole processes. Wall time and peak RSS from /usr/bin/time; the ratio is memcert / numpy. The figures
# are also written as a result file in bench/results/ (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#
#   bash bench/cli/assumptions.sh BUILD_DIR [T]      (T = 2000 by default: a 1.2 GB input; memcert ~1.3 GB of RAM, mostly the file mapped)
#
# With BASELINE=/path/to/an/older/memcert, memcert and that binary run in turn three times each on the
# same file (the best of each kept: memcert_s, before_s, vs_before = memcert / before).
set -euo pipefail
BUILD=${1:?usage: assumptions.sh BUILD_DIR [T]}
T=${2:-2000}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memcert_bench_assumptions.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PY=${PYTHON:-/usr/bin/python3}
"$PY" "$HERE/make_vitb.py" "$WORK/vitb.npz" "$T"
sync  # the 1.2 GB just written is flushed before either program is timed (not during one of them)
/usr/bin/time -f "%e %M %U %S" -o "$WORK/tm" "$BUILD/memcert" --quiet assumptions "$WORK/vitb.npz" --json >"$WORK/m.json" || true
read -r mw mm mu ms < <(tail -n 1 "$WORK/tm")  # time prints "Command exited ..." first on exit 3
before_row=""
if [ -n "${BASELINE:-}" ]; then
  bw=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M %U %S" -o "$WORK/tb" "$BASELINE" --quiet assumptions "$WORK/vitb.npz" --json >/dev/null || true
    read -r w bm _ _ < <(tail -n 1 "$WORK/tb")
    if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then bw=$w; fi
    /usr/bin/time -f "%e %M %U %S" -o "$WORK/tm" "$BUILD/memcert" --quiet assumptions "$WORK/vitb.npz" --json >"$WORK/m.json" || true
    read -r w m u s < <(tail -n 1 "$WORK/tm")
    if awk "BEGIN{exit !($w < $mw)}"; then mw=$w mm=$m mu=$u ms=$s; fi
  done
  echo "before: $bw s ($((bm / 1024)) MB); memcert / before $(awk "BEGIN{printf \"%.3f\", $mw / $bw}") (best of 4 and 3 runs)"
  before_row=$(printf '\tbefore_s=%s\tbefore_mb=%s\tvs_before=%s' "$bw" "$((bm / 1024))" "$(awk "BEGIN{printf \"%.3f\", $mw / $bw}")")
fi
/usr/bin/time -f "%e %M %U %S" -o "$WORK/tp" "$PY" "$HERE/numpy_assumptions.py" "$WORK/vitb.npz" >"$WORK/p.txt"
read -r pw pm pu ps < <(tail -n 1 "$WORK/tp")
echo "memcert $("$BUILD/memcert" --version), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| case | memcert assumptions | numpy | ratio | input |"
echo "|---|---|---|---|---|"
printf '| T=%s ViT-B float32 | %s s (%s MB) | %s s (%s MB; full-rank contexts, sample rank: %s) | %s | %s MB |\n' \
  "$T" "$mw" "$((mm / 1024))" "$pw" "$((pm / 1024))" "$(cat "$WORK/p.txt")" \
  "$(awk "BEGIN{printf \"%.3f\", $mw / $pw}")" "$(( $(stat -c %s "$WORK/vitb.npz") / 1048576 ))"
echo "CPU (user + system): memcert $mu + $ms s, numpy $pu + $ps s; memcert threads: $(nproc) (--threads default)"
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print({k: (j[k]["holds"] if isinstance(j[k], dict) and "holds" in j[k] else j[k]) for k in j if k != "separation"}, "separation", {k: str(v)[:40] for k, v in j["separation"].items()})' "$WORK/m.json"
printf 'case=T=%s ViT-B float32\tmemcert_s=%s\tmemcert_mb=%s\tmemcert_cpu_s=%s\tpeer=numpy_assumptions.py\tpeer_s=%s\tpeer_mb=%s\tpeer_cpu_s=%s\tratio=%s\tinput_mb=%s\n' \
  "$T" "$mw" "$((mm / 1024))" "$(awk "BEGIN{print $mu + $ms}")" "$pw" "$((pm / 1024))" "$(awk "BEGIN{print $pu + $ps}")" \
  "$(awk "BEGIN{printf \"%.3f\", $mw / $pw}")" "$(( $(stat -c %s "$WORK/vitb.npz") / 1048576 ))" >"$WORK/rows"
sed -i "s/\$/$before_row/" "$WORK/rows"
"$PY" "$HERE/../record.py" cli-assumptions "$WORK/rows" --command "bash bench/cli/assumptions.sh BUILD $T" \
  --threads "$(nproc)" --memcert "$("$BUILD/memcert" --version)" --peer-threads "numpy OpenBLAS default" --build "$BUILD" ${BASELINE:+--baseline "$(dirname "$BASELINE")"}
