#!/usr/bin/env bash
# End-to-end checks of the CLI contract (docs/CLI.md): JSON keys, exit codes 0/1/2,
# one-line errors on bad input with nothing left behind, certificates that `verify` accepts and that it
# rejects once a number is altered.
#
#   bash tests/cli/run.sh <memcert-binary> <source-dir>
#
# Layout: helpers first, then one `section_<command>` function per command. To add a command, write its
# section function and append its name to SECTIONS at the bottom. Only bash and python3 (no numpy) are
# used: one python3 helper process (tests/cli/clihelp.py) checks JSON and writes .npy/.npz with struct.
# Prints "N passed, M failed" last; exits 1 on failure.
set -u

BIN=${1:?usage: run.sh <memcert-binary> <source-dir>}
SRC=${2:?usage: run.sh <memcert-binary> <source-dir>}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memcert_cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PASSED=0
FAILED=0

# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------

pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*" >&2; }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
  local desc=$1
  shift
  if "$@"; then pass; else fail "$desc"; fi
}

# run COMMAND...: runs memcert with stdout -> $OUT, stderr -> $ERR, exit status -> $RC.
OUT=$WORK/stdout
ERR=$WORK/stderr
RC=0
run() {
  "$BIN" "$@" >"$OUT" 2>"$ERR"
  RC=$?
}

# expect_rc DESCRIPTION CODE: the last run exited with CODE.
expect_rc() {
  if [ "$RC" -eq "$2" ]; then pass; else fail "$1: expected exit $2, got $RC ($(head -c 300 "$ERR"))"; fi
}

# py OP ARGS...: one request to the python helper (tests/cli/clihelp.py, started once as a coprocess);
# succeeds when it answers "1", else leaves its reason in $PY_WHY.
coproc PY { python3 -u "$HERE/clihelp.py"; }
PY_WHY=""
py() {
  local IFS=$'\t' answer
  printf '%s\n' "$*" >&"${PY[1]}"
  read -r answer <&"${PY[0]}"
  PY_WHY=${answer#0 }
  [ "$answer" = 1 ]
}

# json_check DESCRIPTION PYTHON_EXPR: stdout is exactly one JSON object (one line) and PYTHON_EXPR,
# evaluated with the object bound to `j`, is true.
json_check() {
  if py stdout "$OUT" "$2"; then pass; else fail "$1: $2 ($PY_WHY) on $(head -c 400 "$OUT")"; fi
}

# file_check DESCRIPTION FILE PYTHON_EXPR: FILE is JSON and PYTHON_EXPR (object bound to `j`) is true.
file_check() {
  if py file "$2" "$3"; then pass; else fail "$1: $3 ($PY_WHY) on $(head -c 400 "$2" 2>/dev/null)"; fi
}

# json_keys DESCRIPTION KEY...: stdout is one JSON object holding every KEY.
json_keys() {
  local desc=$1
  shift
  local expr="all(k in j for k in [$(printf '"%s",' "$@")])"
  json_check "$desc: keys $*" "$expr"
}

# expect_bad_input DESCRIPTION LEFTOVER COMMAND...: exit 2, exactly one non-empty stderr line, nothing on
# stdout, and the file LEFTOVER (the output it was asked to write; "" for none) does not exist, nor any
# temp file next to it.
expect_bad_input() {
  local desc=$1 leftover=$2
  shift 2
  run "$@"
  expect_rc "$desc" 2
  local lines
  lines=$(wc -l <"$ERR")
  if [ "$lines" -eq 1 ] && [ -s "$ERR" ]; then pass; else fail "$desc: expected one stderr line, got $lines: $(cat "$ERR")"; fi
  if [ ! -s "$OUT" ]; then pass; else fail "$desc: expected no stdout, got $(head -c 200 "$OUT")"; fi
  if [ -n "$leftover" ]; then
    if [ ! -e "$leftover" ] && ! ls "$leftover".tmp.* >/dev/null 2>&1; then pass; else fail "$desc: left $leftover behind"; fi
  fi
}

# stderr_mentions DESCRIPTION TEXT: the last stderr contains TEXT.
stderr_mentions() {
  if grep -qF -- "$2" "$ERR"; then pass; else fail "$1: stderr lacks '$2': $(cat "$ERR")"; fi
}

# write_npy PATH DTYPE SHAPE VALUES: a .npy file (version 1, C order) written with struct.
#   write_npy m.npy '<f8' '2,3' '0.1,2,3,4,5,6'     (use nan / inf for non-finite values)
write_npy() { py npy "$@" || fail "write_npy $*: $PY_WHY"; }

# write_npz PATH stored|deflated NAME=DTYPE:SHAPE:VALUES...: an .npz written the way numpy.savez does it
# (python's zipfile with zip64 local headers), each member encoded like write_npy.
#   write_npz d.npz deflated 'contexts=<f8:2,1,2:1,2,3,4' 'queries=<f8:2,2:1,0,0,1'
write_npz() { py npz "$@" || fail "write_npz $*: $PY_WHY"; }

# alter_json IN OUT PYTHON_STATEMENT: rewrites a JSON file; the statement edits `j`.
alter_json() { py alter "$@" || fail "alter_json $*: $PY_WHY"; }

# ---------------------------------------------------------------------------------------------------
# memcert rank
# ---------------------------------------------------------------------------------------------------
section_rank() {
  local d=$WORK/rank
  mkdir -p "$d"
  printf '1 2 3\n2 4 6\n1 0 1\n' >"$d/m.txt"

  run rank "$d/m.txt" --json
  expect_rc "rank --json" 0
  json_keys "rank --json" rows cols rank_lower rank_upper rank method seconds
  json_check "rank values" 'j["rows"] == 3 and j["cols"] == 3 and j["rank_lower"] == 2 and j["rank_upper"] == 2 and j["rank"] == 2'

  run rank "$d/m.txt"
  expect_rc "rank (human)" 0
  check "rank human summary is text, not JSON" grep -q "rank 2" "$OUT"

  run rank "$d/m.txt" --cert "$d/cert.json" --json
  expect_rc "rank --cert" 0
  file_check "rank --cert writes the certificate" "$d/cert.json" 'j["kind"] == "rank" and j["rank_lower"] == 2'
  check "rank --cert leaves no temp file" bash -c "! ls '$d'/cert.json.tmp.* >/dev/null 2>&1"

  # float64 .npy: 0.1 is the dyadic 3602879701896397/2^55; rows 2 and 3 are exact multiples of row 1.
  write_npy "$d/f.npy" '<f8' '3,2' '0.1,0.5,0.2,1.0,0.4,2.0'
  run rank "$d/f.npy" --json
  json_check "rank of float64 .npy taken exactly" 'j["rank"] == 1'
  # Exactness both ways: as decimals (0.1, 0.3) = (1, 3)/10 has rank 1 with (1, 3); as doubles 3 * 0.1 != 0.3.
  printf '0.1 0.3\n1 3\n' >"$d/dec.txt"
  run rank "$d/dec.txt" --json
  json_check "rank of decimal .txt is exact" 'j["rank"] == 1'
  write_npy "$d/dbl.npy" '<f8' '2,2' '0.1,0.3,1,3'
  run rank "$d/dbl.npy" --json
  json_check "rank of float64 .npy uses the stored doubles" 'j["rank"] == 2'
  write_npz "$d/s.npz" stored 'arr_0=<f8:2,2:0.1,0.3,1,3'
  run rank "$d/s.npz" --json
  json_check "rank of a stored .npz (numpy-style zip64 headers)" 'j["rank"] == 2'
  write_npz "$d/z.npz" deflated 'arr_0=<i8:3,2:1,2,2,4,3,6'
  run rank "$d/z.npz" --json
  json_check "rank of a deflated .npz" 'j["rank"] == 1 and j["rows"] == 3'
  write_npy "$d/i.npy" '>i4' '2,2' '1,2,3,4'
  run rank "$d/i.npy" --json
  json_check "rank of big-endian int32 .npy" 'j["rank"] == 2'
  printf '{"rows": 2, "cols": 3, "data": [["1/3", "1", 0], ["2/3", "2", 0]]}' >"$d/m.json"
  run rank "$d/m.json" --json
  json_check "rank of a JSON matrix" 'j["rank"] == 1 and j["cols"] == 3'

  # Bad input: exit 2, one stderr line naming the file, no certificate left behind.
  local out=$d/bad_cert.json
  expect_bad_input "rank: missing file" "$out" rank "$d/missing.txt" --cert "$out"
  stderr_mentions "rank: missing file" "missing.txt"
  printf '1 2 3\n4 5\n' >"$d/ragged.txt"
  expect_bad_input "rank: ragged rows" "$out" rank "$d/ragged.txt" --cert "$out"
  stderr_mentions "rank: ragged rows" "ragged.txt: line 2"
  printf '1 2\n3 abc\n' >"$d/token.txt"
  expect_bad_input "rank: bad token" "$out" rank "$d/token.txt" --cert "$out" --json
  stderr_mentions "rank: bad token" 'token.txt: line 2, column 2: expected an exact number, got "abc"'
  : >"$d/empty.txt"
  expect_bad_input "rank: empty file" "$out" rank "$d/empty.txt" --cert "$out"
  write_npy "$d/nan.npy" '<f8' '2,2' '1,nan,3,4'
  expect_bad_input "rank: NaN in .npy" "$out" rank "$d/nan.npy" --cert "$out"
  stderr_mentions "rank: NaN in .npy" "nan.npy: element [0][1]"
  write_npy "$d/inf.npy" '<f8' '1,2' '1,inf'
  expect_bad_input "rank: infinity in .npy" "$out" rank "$d/inf.npy" --cert "$out"
  head -c 150 "$d/f.npy" >"$d/trunc.npy"
  expect_bad_input "rank: truncated .npy" "$out" rank "$d/trunc.npy" --cert "$out"
  stderr_mentions "rank: truncated .npy" "truncated data"
  write_npy "$d/vec.npy" '<i8' '3' '1,2,3'
  expect_bad_input "rank: 1-d .npy" "$out" rank "$d/vec.npy" --cert "$out"
  printf '{"rows": 2, "cols": 2, "data": [[1, 2], [3]]}' >"$d/ragged.json"
  expect_bad_input "rank: ragged JSON" "$out" rank "$d/ragged.json" --cert "$out"
  stderr_mentions "rank: ragged JSON" "ragged.json: data[1]"
  expect_bad_input "rank: unwritable --cert" "" rank "$d/m.txt" --cert "$d/no/such/dir/c.json"
  expect_bad_input "rank: no argument" "" rank
}

# ---------------------------------------------------------------------------------------------------
# memcert kruskal
# ---------------------------------------------------------------------------------------------------
section_kruskal() {
  local d=$WORK/kruskal
  mkdir -p "$d"
  # Rows 2 and 3 are parallel: Kruskal rank 1, dependent subset {2, 3}.
  printf '1 0\n0 1\n1 1\n2 2\n' >"$d/dep.txt"
  # Moment curve (1, t, t^2) at distinct t: every 3 rows independent, Kruskal rank 3.
  printf '1 0 0\n1 1 1\n1 2 4\n1 3 9\n1 -1 1\n' >"$d/gen.txt"

  run kruskal "$d/gen.txt" --json
  expect_rc "kruskal --json" 0
  json_keys "kruskal --json" count dim kruskal_lower kruskal_upper kruskal_rank seconds
  json_check "kruskal of the moment curve" 'j["count"] == 5 and j["dim"] == 3 and j["kruskal_rank"] == 3'

  run kruskal "$d/dep.txt" --json
  expect_rc "kruskal with a dependency" 0
  json_keys "kruskal with a dependency" dependent_subset
  json_check "kruskal dependent subset" 'j["kruskal_upper"] == 1 and sorted(j["dependent_subset"]) == [2, 3]'

  run kruskal "$d/gen.txt" --at-least 3 --json
  expect_rc "kruskal --at-least 3 holds" 0
  run kruskal "$d/dep.txt" --at-least 2 --json
  expect_rc "kruskal --at-least 2 fails" 1
  json_check "kruskal --at-least failure names the subset" 'sorted(j["dependent_subset"]) == [2, 3]'
  run kruskal "$d/dep.txt" --at-least 2
  expect_rc "kruskal --at-least (human)" 1

  run kruskal "$d/dep.txt" --sample 2 --trials 30 --seed 7 --json
  expect_rc "kruskal --sample" 0
  json_check "kruskal --sample report" 'all(k in j["sample"] for k in ["size","trials","independent","dependent"]) and j["sample"]["trials"] == 30 and j["sample"]["independent"] + j["sample"]["dependent"] == 30'
  run kruskal "$d/gen.txt" --sample 3 --trials 10 --json
  json_check "kruskal --sample on general position" 'j["sample"]["dependent"] == 0 and j["sample"]["independent"] == 10'

  run kruskal "$d/dep.txt" --cert "$d/cert.json"
  expect_rc "kruskal --cert" 0
  file_check "kruskal --cert writes the certificate" "$d/cert.json" 'j["kind"] == "kruskal" and j["upper"]["method"] == "dependent-subset"'

  local out=$d/bad_cert.json
  expect_bad_input "kruskal: missing file" "$out" kruskal "$d/missing.json" --cert "$out"
  printf '1 2\n3\n' >"$d/ragged.txt"
  expect_bad_input "kruskal: ragged rows" "$out" kruskal "$d/ragged.txt" --cert "$out"
  expect_bad_input "kruskal: --sample without --trials" "$out" kruskal "$d/dep.txt" --sample 2 --cert "$out"
  expect_bad_input "kruskal: --sample larger than the set" "$out" kruskal "$d/dep.txt" --sample 9 --trials 3 --cert "$out"
}

# ---------------------------------------------------------------------------------------------------
# memcert verify
# ---------------------------------------------------------------------------------------------------
section_verify() {
  local d=$WORK/verify
  mkdir -p "$d"
  printf '1 2 3\n2 4 6\n1 0 1\n' >"$d/m.txt"
  printf '1 0\n0 1\n1 1\n2 2\n' >"$d/dep.txt"
  printf '1 0 0\n1 1 1\n1 2 4\n1 3 9\n' >"$d/gen.txt"
  "$BIN" rank "$d/m.txt" --cert "$d/rank.json" >/dev/null 2>&1
  "$BIN" kruskal "$d/dep.txt" --cert "$d/kdep.json" >/dev/null 2>&1
  "$BIN" kruskal "$d/gen.txt" --cert "$d/kgen.json" >/dev/null 2>&1
  write_npy "$d/f.npy" '<f8' '2,3' '0.1,0.7,1e-300,0.2,1.4,2e-300'
  "$BIN" rank "$d/f.npy" --cert "$d/rankf.json" >/dev/null 2>&1
  printf '1 2\n3 4\n5 7\n' >"$d/full.txt"
  "$BIN" rank "$d/full.txt" --cert "$d/rankfull.json" >/dev/null 2>&1
  "$BIN" kruskal "$d/gen.txt" --at-least 3 --cert "$d/kat.json" >/dev/null 2>&1
  "$BIN" kruskal "$d/dep.txt" --sample 2 --trials 20 --cert "$d/ksample.json" >/dev/null 2>&1

  local c
  for c in rank kdep kgen rankf rankfull kat ksample; do
    run verify "$d/$c.json" --json
    expect_rc "verify accepts $c" 0
    json_keys "verify $c" valid kind claim seconds
    json_check "verify $c is valid" 'j["valid"] is True'
  done
  run verify "$d/rank.json"
  expect_rc "verify (human)" 0
  check "verify human summary" grep -q "VALID" "$OUT"

  # Altered numbers: each must be rejected with exit 1 and a reason.
  # (m.txt has rank 2; its upper side is "multi-prime": a composite "prime", or a changed entry that
  # raises the rank to 3, must be rejected.)
  alter_json "$d/rank.json" "$d/a1.json" 'j["upper"]["primes"][0] = "8388592"'
  alter_json "$d/rank.json" "$d/a2.json" 'j["matrix"]["data"][1][0] = "3"'
  alter_json "$d/rank.json" "$d/a3.json" 'j["rank_lower"] = 3; j["rank_upper"] = 3'
  alter_json "$d/kdep.json" "$d/a4.json" 'j["upper"]["coefficients"][0] = "-3"'
  alter_json "$d/kgen.json" "$d/a5.json" 'j["vectors"]["data"][3] = ["2", "4", "8"]'
  alter_json "$d/rank.json" "$d/a6.json" 'j["lower"]["prime"] = "2147483646"'
  for c in a1 a2 a3 a4 a5 a6; do
    run verify "$d/$c.json" --json
    expect_rc "verify rejects altered $c" 1
    json_keys "verify rejects altered $c" valid kind claim reason seconds
    json_check "verify $c invalid" 'j["valid"] is False and len(j["reason"]) > 0'
  done

  expect_bad_input "verify: missing file" "" verify "$d/missing.json"
  printf 'this is not json' >"$d/text.json"
  expect_bad_input "verify: not JSON" "" verify "$d/text.json" --json
  stderr_mentions "verify: not JSON" "text.json"
  : >"$d/empty.json"
  expect_bad_input "verify: empty file" "" verify "$d/empty.json"
  # JSON, but not a certificate: a rejection (exit 1), not bad input.
  printf '{"kind": "no-such-kind"}' >"$d/unknown.json"
  run verify "$d/unknown.json" --json
  expect_rc "verify: unknown kind is rejected" 1
}

# ---------------------------------------------------------------------------------------------------
# memcert generate theorem1|shared|general, construct theorem1, demo, assumptions (mahdavi24)
# ---------------------------------------------------------------------------------------------------
section_theorem1() {
  local d=$WORK/theorem1
  mkdir -p "$d"
  run generate theorem1 --T 20 --n 4 --d 6 --seed 5 --out "$d/data.json" --json
  expect_rc "generate theorem1" 0
  json_keys "generate theorem1" kind T n d seed out seconds
  file_check "generate theorem1 data" "$d/data.json" 'len(j["contexts"]) == 20 and len(j["queries"][0]) == 6 and all(isinstance(x, str) for x in j["queries"][0])'
  run generate shared --T 10 --n 3 --d 5 --C 3 --out "$d/shared.json"
  expect_rc "generate shared" 0
  file_check "generate shared: one context" "$d/shared.json" 'all(c == j["contexts"][0] for c in j["contexts"]) and all(0 <= int(x) < 3 for x in j["labels"])'
  run generate general --T 8 --n 3 --d 5 --out "$d/general.json"
  expect_rc "generate general" 0
  # Queries of Kruskal rank exactly n (Assumption 1's boundary): assumptions reports k = n, Theorem 1 builds.
  run generate theorem1 --T 9 --n 3 --d 6 --kruskal 3 --seed 5 --out "$d/kexact.json" --json
  expect_rc "generate theorem1 --kruskal 3" 0
  json_check "generate --kruskal echoed" 'j["kruskal"] == 3'
  run assumptions "$d/kexact.json" --json
  json_check "assumptions at Kruskal rank exactly n" 'j["assumption1"]["holds"] is True and j["assumption1"]["kruskal_lower"] == 3 and j["general_position"]["holds"] is False'
  run construct theorem1 "$d/kexact.json" --heads 4 --dh 3 --out "$d/kexact.cert.json" --json
  expect_rc "construct theorem1 at Kruskal rank exactly n" 0
  run generate theorem1 --T 4 --n 3 --d 6 --kruskal 4 --out "$d/never.json"
  expect_rc "generate --kruskal K > T-1" 2

  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --out "$d/cert.json" --json
  expect_rc "construct theorem1" 0
  json_keys "construct theorem1" claim H n d dh r T rank_Z_lower memorized saturation seconds
  json_check "construct theorem1 values" 'j["claim"] == "mahdavi24/theorem-1" and j["T"] == 13 and j["rank_Z_lower"] == 13 and j["memorized"] is True and len(j["saturation"]) == 4 and all(k in j["saturation"][1] for k in ["head","c","c_proof","c_weyl","sigma_lower","eps"])'
  # Saturation scales: every c reported rebuilds certified weights when passed back with --c.
  cp "$OUT" "$d/proof.out.json"
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --c weyl --out "$d/cert_weyl.json" --json
  expect_rc "construct theorem1 --c weyl" 0
  json_check "--c weyl: every head at its c_weyl" 'j["memorized"] is True and j["c_scale"] == "weyl" and all(s["c"] == s["c_weyl"] for s in j["saturation"])'
  file_check "--c proof reports the same c_weyl" "$d/proof.out.json" 'all(s["c"] == s["c_proof"] and s["c_weyl"] is not None for s in j["saturation"]) and j["c_network"] is not None'
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --c network --out "$d/cert_net.json" --json
  expect_rc "construct theorem1 --c network" 0
  json_check "--c network: every saturating head at c_network" 'j["memorized"] is True and all(s["c"] == j["c_network"] for s in j["saturation"][1:])'
  cnet=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["c_network"])' "$OUT")
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --c "$cnet" --out "$d/cert_val.json" --json
  expect_rc "construct theorem1 --c <c_network>" 0
  if cmp -s "$d/cert_net.json" "$d/cert_val.json"; then pass; else fail "--c <c_network> does not rebuild the --c network certificate"; fi
  run verify "$d/cert_weyl.json"
  expect_rc "verify --c weyl certificate" 0
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --c -1 --out "$d/never.json"
  expect_rc "construct theorem1 --c -1" 2
  file_check "theorem1 certificate" "$d/cert.json" 'j["kind"] == "theorem1" and "tolerance" in j and all(k in j["weights"]["heads"][0] for k in ["WK","WQ","WV"]) and "WO" in j["weights"] and "WD" in j["weights"]'
  run verify "$d/cert.json" --json
  expect_rc "verify theorem1" 0
  json_check "verify theorem1 valid" 'j["valid"] is True and j["kind"] == "theorem1"'
  alter_json "$d/cert.json" "$d/b1.json" 'j["weights"]["heads"][1]["WQ"][0][0] = "3/7"'
  alter_json "$d/cert.json" "$d/b2.json" 'j["weights"]["heads"][0]["WV"][1][0] = "1/3"'
  alter_json "$d/cert.json" "$d/b3.json" 'j["data"]["labels"][2][0] = "2"'
  alter_json "$d/cert.json" "$d/b4.json" 'j["data"]["contexts"][0][0][0] = "1/9"'
  for c in b1 b2 b3 b4; do
    run verify "$d/$c.json" --json
    expect_rc "verify rejects altered theorem1 $c" 1
  done
  run construct theorem1 "$d/shared.json" --heads 3 --dh 3 --skip --out "$d/cert2.json" --json
  expect_rc "construct theorem1 --skip, class labels, shared" 0
  run verify "$d/cert2.json"
  expect_rc "verify theorem1 skip" 0

  # Hypothesis failure: exit 1 with a witness, no certificate written.
  alter_json "$d/data.json" "$d/bad.json" 'j["contexts"][2][1] = j["contexts"][2][0]'
  run construct theorem1 "$d/bad.json" --heads 4 --dh 4 --out "$d/nocert.json" --json
  expect_rc "construct theorem1: Assumption 2 fails" 1
  json_check "construct theorem1: witness" 'j["memorized"] is False and j["witness"]["failing"] == [2]'
  check "construct theorem1: no certificate on failure" test ! -e "$d/nocert.json"
  # Bad usage: exit 2, one line, nothing written.
  expect_bad_input "construct theorem1: H = 0" "$d/x.json" construct theorem1 "$d/data.json" --heads 0 --dh 4 --out "$d/x.json"
  expect_bad_input "construct theorem1: dv < d_out" "$d/x.json" construct theorem1 "$d/data.json" --heads 2 --dh 2 --dv 0 --out "$d/x.json"
  alter_json "$d/data.json" "$d/wide.json" 'j["labels"] = [[str(i)]*7 for i in range(20)]'
  expect_bad_input "construct theorem1: d_out > d" "$d/x.json" construct theorem1 "$d/wide.json" --heads 2 --dh 2 --out "$d/x.json"
  run generate theorem1 --T 4 --n 5 --d 3 --out "$d/ngd.json"
  expect_bad_input "construct theorem1: n > d" "$d/x.json" construct theorem1 "$d/ngd.json" --heads 2 --dh 2 --out "$d/x.json"
  expect_bad_input "construct theorem1: missing data set" "$d/x.json" construct theorem1 "$d/none.json" --heads 2 --dh 2 --out "$d/x.json"

  run demo --json
  expect_rc "demo" 0
  json_keys "demo" claim H n d dh T memorized verified seconds
  json_check "demo values" 'j["memorized"] is True and j["verified"] is True and j["T"] == j["H"] * (min(j["n"], j["dh"]) - 1) + 1'
  run demo
  expect_rc "demo (human)" 0
  check "demo narrates Lemma 3" grep -q "Lemma 3" "$OUT"

  run assumptions "$d/data.json" --json
  expect_rc "assumptions" 0
  json_keys "assumptions" T n d assumption1 assumption2 assumption3 general_position separation seconds
  json_check "assumptions values" 'j["assumption1"]["holds"] is True and j["assumption2"]["holds"] is True and j["assumption2"]["failing"] == [] and "r2" in j["separation"] and "delta2" in j["separation"]'
  run assumptions "$d/bad.json" --json
  expect_rc "assumptions: Assumption 2 fails" 1
  json_check "assumptions: failing context" 'j["assumption2"]["holds"] is False and j["assumption2"]["failing"] == [2]'
  expect_bad_input "assumptions: missing file" "" assumptions "$d/none.json"
}

# ---------------------------------------------------------------------------------------------------
# Main: append new sections here.
# ---------------------------------------------------------------------------------------------------
SECTIONS=(section_rank section_kruskal section_verify)
SECTIONS+=(section_theorem1)

if [ ! -x "$BIN" ]; then
  echo "run.sh: $BIN is not an executable" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
for s in "${SECTIONS[@]}"; do
  "$s"
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
