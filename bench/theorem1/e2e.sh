#!/usr/bin/env bash
# Theorem 1 end to end through the command line, as a user runs it, each command timed as a whole process
# with /usr/bin/time (wall, user CPU, peak RSS):
#   (a) `construct theorem1`, which re-verifies its certificate with the independent checker in process;
#   (b) the two-process pipeline `construct theorem1 --no-check` then `memcert verify` of the certificate
#       (the independent check run once, in its own process).
# Prints one Markdown row per case with the thread count and the load average, and writes the rows as a
# result file in bench/results/ (bench/record.py; MEMCERT_BENCH_RESULTS=off to skip).
#   bench/theorem1/e2e.sh BUILD_DIR [CASE ...]    CASE: small | vitb | h128   (default: small vitb)
# Data (float32 Gaussian, bench/theorem1/make_data.py) is written once to ${E2E_DATA:-/tmp/memcert-e2e}.
set -euo pipefail
build=${1:?usage: e2e.sh BUILD_DIR [CASE ...]}
shift || true
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(small vitb)
here=$(cd "$(dirname "$0")" && pwd)
data=${E2E_DATA:-/tmp/memcert-e2e}
mkdir -p "$data"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
threads=${THREADS:-$(nproc)}
memcert="$build/memcert"
timed() {  # timed LOG CMD...: runs CMD, leaves "wall user rss_mb rc" in LOG
  local log=$1; shift
  local rc=0
  /usr/bin/time -f "%e %U %M" -o "$log.time" "$@" >"$log.out" 2>"$log.err" || rc=$?
  # /usr/bin/time writes "Command exited with non-zero status" first on failure: keep the last line.
  read -r w u m < <(tail -n 1 "$log.time")
  echo "$w $u $((m / 1024)) $rc" >"$log"
}
echo "| case | threads | load (1 min) | (a) construct: wall / user / peak MB / exit | (b) construct --no-check: wall / user / peak MB / exit | (b) verify: wall / user / peak MB / exit | (b) end to end wall | certificate |"
echo "|---|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  case $c in
    small) T=253 n=32 d=64 H=12 dh=22 ;;       # T* = 12*21+1 = 253
    vitb) T=757 n=197 d=768 H=12 dh=64 ;;       # ViT-B: T* = 12*63+1 = 757
    h128) T=8065 n=64 d=128 H=128 dh=64 ;;      # T* = 128*63+1 = 8065
    *) echo "e2e.sh: unknown case $c (expected small, vitb or h128)" >&2; exit 2 ;;
  esac
  f="$data/$c.npz"
  [ -s "$f" ] || "$py" "$here/make_data.py" "$f" "$T" "$n" "$d" >/dev/null
  cert="$data/$c.cert.json"
  load=$(cut -d' ' -f1 /proc/loadavg)
  rm -f "$cert"
  timed "$data/$c.construct" "$memcert" --threads "$threads" construct theorem1 "$f" --heads "$H" --dh "$dh" \
    --out "$cert" --json --max-memory 0
  read -r aw au am arc <"$data/$c.construct"
  rm -f "$cert"
  timed "$data/$c.nocheck" "$memcert" --threads "$threads" construct theorem1 "$f" --heads "$H" --dh "$dh" \
    --out "$cert" --json --max-memory 0 --no-check
  read -r cw cu cm crc <"$data/$c.nocheck"
  if [ -s "$cert" ]; then
    timed "$data/$c.verify" "$memcert" --threads "$threads" verify "$cert" --max-seconds 0 --max-memory 0
    read -r vw vu vm vrc <"$data/$c.verify"
    size=$(du -m "$cert" | cut -f1)
  else
    vw=- vu=- vm=- vrc=- size=-
  fi
  total=$(awk -v a="$cw" -v b="$vw" 'BEGIN { if (b == "-") print "-"; else printf "%.1f", a + b }')
  echo "| $c (T=$T n=$n d=$d H=$H d_h=$dh) | $threads | $load | $aw s / $au s / $am / $arc | $cw s / $cu s / $cm / $crc | $vw s / $vu s / $vm / $vrc | $total s | ${size} MB |"
  printf 'case=%s\tT=%s\tn=%s\td=%s\tH=%s\td_h=%s\tload_1min=%s\tconstruct_s=%s\tconstruct_user_s=%s\tconstruct_mb=%s\tconstruct_exit=%s\tnocheck_s=%s\tnocheck_user_s=%s\tnocheck_mb=%s\tnocheck_exit=%s\tverify_s=%s\tverify_user_s=%s\tverify_mb=%s\tverify_exit=%s\tend_to_end_s=%s\tcertificate_mb=%s\n' \
    "$c" "$T" "$n" "$d" "$H" "$dh" "$load" "$aw" "$au" "$am" "$arc" "$cw" "$cu" "$cm" "$crc" "$vw" "$vu" "$vm" "$vrc" \
    "$total" "$size" >>"$data/rows.$$"
done
"$py" "$here/../record.py" theorem1-e2e "$data/rows.$$" --command "bash bench/theorem1/e2e.sh BUILD ${cases[*]}" \
  --threads "$threads" --memcert "$("$memcert" --version)" --build "$build"
rm -f "$data/rows.$$"
