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
  stderr_mentions "rank: bad token" 'token.txt: line 2, column 2: expected an exact number, got a token of 3 bytes that is not one'
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
  # A certificate of a kind the checker does not know: a rejection (exit 1).
  printf '{"kind": "no-such-kind"}' >"$d/unknown.json"
  run verify "$d/unknown.json" --json
  expect_rc "verify: unknown kind is rejected" 1
  # JSON that is not a certificate at all (a data set, a list): bad input, exit 2.
  printf '{"contexts": [[[1]]], "queries": [[1]]}' >"$d/dataset.json"
  expect_bad_input "verify: a data set is not a certificate" "" verify "$d/dataset.json" --json
  stderr_mentions "verify: a data set is not a certificate" "dataset.json: expected a certificate"
  printf '[1, 2]' >"$d/list.json"
  expect_bad_input "verify: a JSON list is not a certificate" "" verify "$d/list.json"
}

# verify A B C ...: one line per certificate in order (--json: one object per line), every certificate
# reported whatever the others are; exit 0 only when all are valid, else the most severe status: 2 (bad
# input) before 1 (rejected) before 3 (undecided).
section_verify_many() {
  local d=$WORK/verify
  [ -s "$d/rank.json" ] || { fail "verify many: section_verify's certificates are missing"; return; }
  python3 - "$d/over.json" <<'PY'
import json, sys
rows = [[str((i + 1) * (j + 2) % 97) for j in range(30)] for i in range(60)]
json.dump({"kind": "kruskal", "claim": "kruskal-rank", "vectors": {"rows": 60, "cols": 30, "data": rows},
           "kruskal_lower": 12, "lower": {"method": "exhaustive-mod-p", "prime": "1000000007"},
           "kruskal_upper": 30, "upper": {"method": "trivial"}}, open(sys.argv[1], "w"))
PY
  # lines FILE PYTHON_EXPR: FILE's lines as a list `l` of strings; PYTHON_EXPR must hold.
  lines_check() {
    if python3 -c 'import json, sys; l = open(sys.argv[1]).read().splitlines(); sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3"
    then pass; else fail "$1: $3 on $(head -c 600 "$2")"; fi
  }
  run verify "$d/rank.json" "$d/a3.json" "$d/text.json" "$d/missing.json" /dev/zero "$d/over.json" "$d/kdep.json" "$d/rank.json"
  expect_rc "verify many: bad input wins over rejected and undecided" 2
  lines_check "verify many: one line per certificate, in order" "$OUT" \
    "[x.split(': ')[1] for x in l] == ['VALID', 'INVALID', 'BAD INPUT', 'BAD INPUT', 'BAD INPUT', 'UNDECIDED', 'VALID', 'VALID'] and l[0].startswith('$d/rank.json: ') and l[4].startswith('/dev/zero: BAD INPUT: offset 0')"
  if [ ! -s "$ERR" ]; then pass; else fail "verify many: stderr should be empty, got $(head -c 300 "$ERR")"; fi
  run verify "$d/rank.json" "$d/a3.json" "$d/over.json" --json
  expect_rc "verify many: rejected wins over undecided" 1
  lines_check "verify many --json: one object per line" "$OUT" \
    "[(j['certificate'], j['exit'], j['valid']) for j in map(json.loads, l)] == [('$d/rank.json', 0, True), ('$d/a3.json', 1, False), ('$d/over.json', 3, False)] and json.loads(l[2])['undecided'] is True and all('seconds' in json.loads(x) and 'not_checked' in json.loads(x) for x in l)"
  run verify "$d/over.json" "$d/rank.json"
  expect_rc "verify many: undecided" 3
  run verify "$d/rank.json" "$d/kdep.json" "$d/kgen.json" --json
  expect_rc "verify many: all valid" 0
  lines_check "verify many: all valid, three objects" "$OUT" "len(l) == 3 and all(json.loads(x)['valid'] is True for x in l)"
  run verify "$d/text.json" "$d/rank.json" --json
  expect_rc "verify many: bad input first" 2
  lines_check "verify many --json: bad input is an object too, the next certificate still verified" "$OUT" \
    "json.loads(l[0])['bad_input'] is True and json.loads(l[0])['exit'] == 2 and 'offset 0' in json.loads(l[0])['reason'] and json.loads(l[1])['valid'] is True"
  # One certificate: the output is the command's as ever (one object, no "certificate" or "exit").
  run verify "$d/rank.json" --json
  expect_rc "verify one: valid" 0
  json_check "verify one: the one-certificate object" '"certificate" not in j and "exit" not in j and j["valid"] is True'
  expect_bad_input "verify one: bad input is still one stderr line" "" verify "$d/text.json"
}

# ---------------------------------------------------------------------------------------------------
# memcert export coq (Coq itself runs in tests/coq/export_coq.py; here the command's contract)
# ---------------------------------------------------------------------------------------------------
section_export() {
  local d=$WORK/export
  mkdir -p "$d"
  printf '1 2 3\n2 4 6\n1 0 1\n' >"$d/m.txt"
  run rank "$d/m.txt" --cert "$d/m.cert.json"
  expect_rc "export: rank --cert" 0
  run export coq "$d/m.cert.json" --out "$d/m.coq" --json
  expect_rc "export coq" 0
  json_check "export coq --json" 'j["exported"] is True and j["kind"] == "rank" and j["rank"] == 2 and j["upper"] == "kernel" and "Rank.v" in j["files"]'
  check "export coq: Rank.v states the theorem" grep -qF 'Theorem A_rank : \rank (map_mx (intr : int -> rat) A) = 2%N.' "$d/m.coq/Rank.v"
  check "export coq: the 3 x 3 matrix" grep -qF "Definition A : 'M[int]_(3, 3)" "$d/m.coq/Rank.v"
  check "export coq: check.sh is executable" test -x "$d/m.coq/check.sh"
  check "export coq: the library is copied" grep -qF "Theorem rank_eq_kernel" "$d/m.coq/MemcertRank.v"
  # An upper side by the certificate's own kernel (rational vectors): exported scaled to integers.
  alter_json "$d/m.cert.json" "$d/mk.cert.json" 'j["upper"] = {"method": "kernel", "kernel": [["1/2", "1/2", "-1/2"]], "free_rows": [0]}'
  run export coq "$d/mk.cert.json" --out "$d/mk.coq"
  expect_rc "export coq of a kernel certificate" 0
  check "export coq: the certificate's kernel vector, scaled to integers" grep -qF '[:: 1; 1; -1]' "$d/mk.coq/Witness.v"
  # A rejected certificate (one entry changed: the rank is 3 now) is never exported: exit 1, nothing written.
  alter_json "$d/m.cert.json" "$d/bad.cert.json" 'j["matrix"]["data"][1][2] = "7"'
  run verify "$d/bad.cert.json"
  expect_rc "export: the mutated certificate is invalid" 1
  run export coq "$d/bad.cert.json" --out "$d/bad.coq"
  expect_rc "export coq of a rejected certificate" 1
  check "export coq of a rejected certificate says so" grep -qF "rejected by the independent checker" "$OUT"
  run export coq "$d/bad.cert.json" --out "$d/bad.coq" --json
  expect_rc "export coq --json of a rejected certificate" 1
  json_check "export coq --json of a rejected certificate" 'j["exported"] is False and j["kind"] == "rank" and "rank_upper" in j["reason"]'
  check "export coq of a rejected certificate writes nothing" test ! -e "$d/bad.coq"
  # Bad input: exit 2, one line, nothing written.
  alter_json "$d/m.cert.json" "$d/malformed.cert.json" 'j["rank_lower"] = "2"'
  expect_bad_input "export coq of a malformed certificate" "$d/malformed.coq" export coq "$d/malformed.cert.json" --out "$d/malformed.coq"
  expect_bad_input "export coq of a missing file" "$d/none.coq" export coq "$d/none.json" --out "$d/none.coq"
  expect_bad_input "export coq without --out" "" export coq "$d/m.cert.json"
  printf '0.5 1\n1 3\n' >"$d/q.txt"
  run rank "$d/q.txt" --cert "$d/q.cert.json"
  expect_bad_input "export coq of a non-integer matrix" "$d/q.coq" export coq "$d/q.cert.json" --out "$d/q.coq"
  stderr_mentions "export coq of a non-integer matrix" "expected an integer"
  # kind kruskal (Coq runs in tests/coq/export_coq_kinds.py): exported; refused when inexact or too large.
  printf '1 0\n0 1\n1 1\n' >"$d/k.txt"
  run kruskal "$d/k.txt" --cert "$d/k.cert.json"
  run export coq "$d/k.cert.json" --out "$d/k.coq" --json
  expect_rc "export coq of a kruskal certificate" 0
  json_check "export coq --json of a kruskal certificate" 'j["kind"] == "kruskal" and j["kruskal_rank"] == 2 and j["subsets"] == 3 and j["dependent_subset"] == [0, 1, 2] and "Kruskal.v" in j["files"]'
  check "export coq: Kruskal.v states every 2 columns independent" grep -qF '\rank (map_mx (intr : int -> rat) (colsub s A)) = 2%N.' "$d/k.coq/Kruskal.v"
  check "export coq: the kruskal library is copied" grep -qF "Theorem kruskal_lower_sound" "$d/k.coq/MemcertKruskal.v"
  alter_json "$d/k.cert.json" "$d/kin.cert.json" 'j["kruskal_lower"] = 1; j.pop("kruskal_rank", None); j["lower"] = {"method": "exhaustive-mod-p", "prime": j["lower"]["prime"]}'
  expect_bad_input "export coq of an inexact Kruskal rank" "$d/kin.coq" export coq "$d/kin.cert.json" --out "$d/kin.coq"
  stderr_mentions "export coq of an inexact Kruskal rank" "expected an exact Kruskal rank"
  python3 -c 'import json,random,sys; r=random.Random(3); json.dump([[r.randint(-9,9) for _ in range(10)] for _ in range(20)], open(sys.argv[1],"w"))' "$d/k20.json"
  run kruskal "$d/k20.json" --cert "$d/k20.cert.json"
  expect_bad_input "export coq of C(20, 10) subsets" "$d/k20.coq" export coq "$d/k20.cert.json" --out "$d/k20.coq"
  stderr_mentions "export coq of C(20, 10) subsets" "C(20, 10) = 184756 subsets: more than export coq writes"
  # kind dana24: its exact read-out exported; without the object, and every other kind: bad input.
  run generate dana24 --N 6 --S 2 --T 6 --seed 1 --out "$d/dn.json"
  run construct dana24 "$d/dn.json" --heads 1 --dh 2 --d 4 --out "$d/dn.cert.json"
  run export coq "$d/dn.cert.json" --out "$d/dn.coq" --json
  expect_rc "export coq of a dana24 certificate" 0
  json_check "export coq --json of a dana24 certificate" 'j["kind"] == "dana24" and j["d"] == 4 and j["T"] == 6 and "Readout.v" in j["files"] and len(j["not_exported"]) == 3'
  check "export coq: Readout.v states det M <> 0" grep -qF 'Theorem M_invertible : \det M != 0.' "$d/dn.coq/Readout.v"
  alter_json "$d/dn.cert.json" "$d/dnr.cert.json" 'j.pop("readout")'
  run verify "$d/dnr.cert.json"
  expect_rc "export: a dana24 certificate without readout is valid" 0
  expect_bad_input "export coq of a dana24 certificate without readout" "$d/dnr.coq" export coq "$d/dnr.cert.json" --out "$d/dnr.coq"
  stderr_mentions "export coq of a dana24 certificate without readout" 'expected the object "readout"'
  run generate theorem1 --T 6 --n 3 --d 4 --seed 5 --out "$d/t1.json"
  run construct theorem1 "$d/t1.json" --heads 2 --dh 2 --out "$d/t1.cert.json"
  run export coq "$d/t1.cert.json" --out "$d/t1.coq" --json
  expect_rc "export coq of a theorem1 certificate" 0
  json_check "export coq --json of a theorem1 certificate" 'j["kind"] == "theorem1" and j["T"] == 6 and j["labels"] == "real" and j["files"] == ["Theorem1.v", "Data.v", "Witness.v", "MemcertTheorem1.v", "check.sh"]'
  check "export coq: Theorem1.v states rank(Z) = T" grep -qF 'Theorem Z_rank_T : forall c : nat -> R,' "$d/t1.coq/Theorem1.v"
  # theorem1 with data by reference: exported with the file's examples (the same definitions as embedded,
  # the file and its digest in the comments); a forged digest is rejected (exit 1) and a missing file bad
  # input (exit 2), nothing written.
  run generate theorem1 --T 5 --n 3 --d 4 --seed 5 --out "$d/t1r.json"
  run construct theorem1 "$d/t1r.json" --heads 2 --dh 3 --out "$d/t1e.cert.json"
  run construct theorem1 "$d/t1r.json" --heads 2 --dh 3 --data-ref on --out "$d/t1r.cert.json"
  file_check "export: construct theorem1 --data-ref on references its data" "$d/t1r.cert.json" '"file" in j["data"] and "contexts" not in j["data"]'
  run export coq "$d/t1e.cert.json" --out "$d/t1e.coq"
  run export coq "$d/t1r.cert.json" --out "$d/t1r.coq" --json
  expect_rc "export coq of a theorem1 certificate with data by reference" 0
  check "export coq (theorem1, data by reference): Data.v as for embedded data" \
    sh -c 'for f in t1e t1r; do awk "p; /[*][)]/ && !p { p = 1 }" "$1/$f.coq/Data.v" > "$1/$f.body"; done && grep -q "Definition E " "$1/t1r.body" && cmp -s "$1/t1e.body" "$1/t1r.body"' sh "$d"
  check "export coq (theorem1, data by reference): Data.v names the file and its digest" \
    grep -qE 'data file .*t1r\.json the certificate references,$' "$d/t1r.coq/Data.v"
  check "export coq (theorem1, data by reference): Data.v names the digest" grep -qE 'digest \(sha256:[0-9a-f]{64}\)' "$d/t1r.coq/Data.v"
  alter_json "$d/t1r.cert.json" "$d/t1f.cert.json" 'j["data"]["digest"] = "sha256:" + "0" * 64'
  run export coq "$d/t1f.cert.json" --out "$d/t1f.coq"
  expect_rc "export coq of a theorem1 certificate with a forged data digest" 1
  check "export coq of a theorem1 forged data digest writes nothing" test ! -e "$d/t1f.coq"
  alter_json "$d/t1r.cert.json" "$d/t1g.cert.json" 'j["data"]["file"] = j["data"]["file"] + ".gone"'
  expect_bad_input "export coq of a theorem1 certificate whose data file is missing" "$d/t1g.coq" export coq "$d/t1g.cert.json" --out "$d/t1g.coq"
  printf '{"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":{"rows":1,"cols":1,"data":[["1"]]},"radius":{"rows":1,"cols":1,"data":[["0"]]},"rows":[0],"mu":"1/2","rank_lower":1}' >"$d/enc.cert.json"
  run verify "$d/enc.cert.json"
  expect_rc "export: an enclosure-rank certificate is valid" 0
  expect_bad_input "export coq of another kind" "$d/enc.coq" export coq "$d/enc.cert.json" --out "$d/enc.coq"
  stderr_mentions "export coq of another kind" 'kind: expected "rank", "kruskal", "dana24", "ks" or "theorem1"'
  printf 'x' >"$d/file"
  expect_bad_input "export coq --out a regular file" "" export coq "$d/m.cert.json" --out "$d/file"
}

# memcert export coq of kind ks (Coq itself runs in tests/coq/export_coq_ks.py; here the command's contract)
section_export_ks() {
  local d=$WORK/export_ks
  mkdir -p "$d"
  run generate ks --N 8 --n 3 --d 2 --V 8 --C 3 --seed 4 --out "$d/s.json"
  expect_rc "export ks: generate ks" 0
  run construct ks "$d/s.json" --out "$d/s.cert.json"
  expect_rc "export ks: construct ks" 0
  run export coq "$d/s.cert.json" --out "$d/s.coq" --json
  expect_rc "export coq of a ks certificate" 0
  json_check "export coq --json (ks)" 'j["exported"] is True and j["kind"] == "ks" and j["claim"] == "ks25/theorem-4.1" and j["N"] == 8 and j["n"] == 3 and j["files"] == ["Ks.v", "Network.v", "Data.v", "MemcertKs.v", "check.sh"]'
  check "export coq (ks): Ks.v states the theorem" grep -qF 'Theorem memorizes : forall i, (i < 8)%nat -> predict net (X i) == inject_Z (y i).' "$d/s.coq/Ks.v"
  check "export coq (ks): check.sh is executable" test -x "$d/s.coq/check.sh"
  check "export coq (ks): the library is copied" grep -qF "Theorem check_sound" "$d/s.coq/MemcertKs.v"
  check "export coq (ks): the 8 labels" grep -qF "Definition labels : list Z" "$d/s.coq/Data.v"
  # A rejected ks certificate (one label changed) is never exported: exit 1, nothing written.
  alter_json "$d/s.cert.json" "$d/bad.cert.json" 'j["labels"][0] = (j["labels"][0] + 1) % 3'
  run export coq "$d/bad.cert.json" --out "$d/bad.coq" --json
  expect_rc "export coq of a rejected ks certificate" 1
  json_check "export coq --json of a rejected ks certificate" 'j["exported"] is False and j["kind"] == "ks" and "prediction for sequence 0" in j["reason"]'
  check "export coq of a rejected ks certificate writes nothing" test ! -e "$d/bad.coq"
  # Sequence to sequence (Corollary 4.1): a label per position.
  run generate ks --N 6 --n 3 --d 2 --V 8 --C 3 --seed 3 --seq2seq --out "$d/s2s.json"
  run construct ks "$d/s2s.json" --out "$d/s2s.cert.json"
  expect_rc "export ks: construct ks (seq-to-seq)" 0
  run export coq "$d/s2s.cert.json" --out "$d/s2s.coq" --json
  expect_rc "export coq of a seq-to-seq ks certificate" 0
  json_check "export coq --json (seq-to-seq)" 'j["exported"] is True and j["claim"] == "ks25/corollary-4.1" and j["setting"] == "seq-to-seq"'
  check "export coq (seq-to-seq): Ks.v states the theorem" grep -qF 'Theorem memorizes : forall i p, (i < 6)%nat -> (p < 3)%nat -> predict_at net (X i) p == inject_Z (y i p).' "$d/s2s.coq/Ks.v"
  # Data by reference: exported with the file's sequences and labels (the same Data.v as embedded, up to
  # its header); a forged digest is rejected (exit 1) and a missing file bad input (exit 2), nothing written.
  run construct ks "$d/s.json" --data-ref on --out "$d/ref.cert.json"
  expect_rc "export ks: construct ks --data-ref on" 0
  run export coq "$d/ref.cert.json" --out "$d/ref.coq" --json
  expect_rc "export coq of a ks certificate with data by reference" 0
  check "export coq (data by reference): Data.v as for embedded data" \
    sh -c 'for f in s ref; do awk "p; /[*][)]/ && !p { p = 1 }" "$1/$f.coq/Data.v" > "$1/$f.body"; done && grep -q "Definition sequences" "$1/ref.body" && cmp -s "$1/s.body" "$1/ref.body"' sh "$d"
  alter_json "$d/ref.cert.json" "$d/forged.cert.json" 'j["data"]["digest"] = "sha256:" + "0" * 64'
  run export coq "$d/forged.cert.json" --out "$d/forged.coq" --json
  expect_rc "export coq of a ks certificate with a forged data digest" 1
  check "export coq of a forged data digest writes nothing" test ! -e "$d/forged.coq"
  alter_json "$d/ref.cert.json" "$d/gone.cert.json" 'j["data"]["file"] = j["data"]["file"] + ".gone"'
  expect_bad_input "export coq of a ks certificate whose data file is missing" "$d/gone.coq" export coq "$d/gone.cert.json" --out "$d/gone.coq"
  # A "data" that is not an object naming a file does not replace the embedded data (the checker reads
  # the embedded sequences): exported as embedded.
  alter_json "$d/s.cert.json" "$d/odd.cert.json" 'j["data"] = 5'
  run export coq "$d/odd.cert.json" --out "$d/odd.coq"
  expect_rc "export coq of a ks certificate with embedded data and a stray \"data\"" 0
  # A claim export coq does not state: the ablation's collision.
  run generate ks --N 200 --n 4 --d 1 --V 9 --C 3 --out "$d/lat.json"
  run construct ks "$d/lat.json" --ablation linear-phi --out "$d/coll.cert.json"
  expect_rc "export ks: the ablation finds a collision" 1
  expect_bad_input "export coq of an ablation certificate" "$d/coll.coq" export coq "$d/coll.cert.json" --out "$d/coll.coq"
  stderr_mentions "export coq of an ablation certificate" "claim: expected ks25/theorem-4.1, ks25/theorem-D.1 or ks25/corollary-4.1"
}

# ---------------------------------------------------------------------------------------------------
# Command-line manners: did-you-mean for mistyped commands, --help with a worked example everywhere
# ---------------------------------------------------------------------------------------------------
section_manners() {
  expect_bad_input "mistyped command" "" rnak m.txt
  stderr_mentions "mistyped command" "unknown command 'rnak'; did you mean 'rank'?"
  expect_bad_input "mistyped sub-command" "" construct theorm1 d.json
  stderr_mentions "mistyped sub-command" "did you mean 'construct theorem1'?"
  expect_bad_input "unrelated word" "" frobnicate
  stderr_mentions "unrelated word" "unknown command 'frobnicate' (see memcert --help)"
  local c
  for c in rank kruskal assumptions verify demo "construct mahdavi24" "construct ks25" "generate mahdavi24" \
           "generate shared" "generate general" "generate ks25" "generate pe" "claims list" "claims run" "export coq"; do
    # shellcheck disable=SC2086
    run $c --help
    expect_rc "$c --help" 0
    check "$c --help has a worked example" grep -qF "memcert $c " "$OUT"
  done
}

# ---------------------------------------------------------------------------------------------------
# Command names: each paper's commands by its name, the earlier names (theorem1, ks) kept as aliases
# ---------------------------------------------------------------------------------------------------
# same_run DESCRIPTION NEW_WORDS OLD_WORDS REST...: `memcert NEW REST` and `memcert OLD REST` exit alike,
# print the same bytes on stdout and stderr, and write the same files (REST names the outputs; the
# first run's are moved aside before the second run writes them again, then compared byte for byte).
same_run() {
  local desc=$1 new=$2 old=$3
  shift 3
  local d=$WORK/names/runs
  rm -rf "$d" && mkdir -p "$d/new"
  # shellcheck disable=SC2086
  run $new "$@"
  local rc_new=$RC
  cp "$OUT" "$d/new/stdout" && cp "$ERR" "$d/new/stderr"
  local f
  for f in "$@"; do
    if [ -f "$f" ] && [[ $f == "$WORK"/names/out/* ]]; then mv "$f" "$d/new/$(basename "$f")"; fi
  done
  # shellcheck disable=SC2086
  run $old "$@"
  check "$desc: exit $rc_new under both names" [ "$RC" -eq "$rc_new" ]
  check "$desc: stdout byte for byte" cmp -s "$OUT" "$d/new/stdout"
  check "$desc: stderr byte for byte" cmp -s "$ERR" "$d/new/stderr"
  for f in "$d"/new/*; do
    case $(basename "$f") in stdout | stderr) continue ;; esac
    check "$desc: $(basename "$f") byte for byte" cmp -s "$f" "$WORK/names/out/$(basename "$f")"
  done
}

section_names() {
  local d=$WORK/names o=$WORK/names/out
  mkdir -p "$d" "$o"
  # --help lists each paper's command by its name first, then the earlier name.
  local group
  for group in construct generate; do
    run $group --help
    expect_rc "$group --help" 0
    check "$group --help: mahdavi24 first, theorem1 its alias" grep -qE '^ +mahdavi24, theorem1 ' "$OUT"
    check "$group --help: ks25 first, ks its alias" grep -qE '^ +ks25, ks ' "$OUT"
    check "$group --help: dana24" grep -qE '^ +dana24 ' "$OUT"
  done
  local pair
  for pair in "construct mahdavi24:construct theorem1" "construct ks25:construct ks" \
              "generate mahdavi24:generate theorem1" "generate ks25:generate ks"; do
    run ${pair%%:*} --help
    cp "$OUT" "$d/help.new"
    run ${pair#*:} --help
    check "${pair#*:} --help is ${pair%%:*} --help" cmp -s "$OUT" "$d/help.new"
  done
  # generate: the same data set, the same report.
  same_run "generate mahdavi24" "generate mahdavi24" "generate theorem1" --T 9 --n 3 --d 5 --seed 3 --out "$o/t.json"
  same_run "generate mahdavi24 --C (.npz)" "generate mahdavi24" "generate theorem1" --T 7 --n 3 --d 4 --C 3 --seed 4 \
    --out "$o/t.npz"
  same_run "generate ks25" "generate ks25" "generate ks" --N 12 --n 4 --d 3 --C 2 --seed 5 --out "$o/s.json"
  same_run "generate ks25 --seq2seq" "generate ks25" "generate ks" --N 6 --n 3 --d 2 --C 2 --seed 6 --seq2seq \
    --out "$o/s2.npz"
  # construct: the same certificate (kind theorem1 / ks under either name), weights and summary.
  run generate theorem1 --T 5 --n 3 --d 4 --seed 2 --out "$d/t5.json"
  expect_rc "names: generate" 0
  same_run "construct mahdavi24" "construct mahdavi24" "construct theorem1" "$d/t5.json" --heads 2 --dh 3 \
    --out "$o/t5.cert.json" --weights-out "$o/t5.w.npz"
  file_check "construct mahdavi24 writes kind theorem1" "$o/t5.cert.json" 'j["kind"] == "theorem1"'
  same_run "construct mahdavi24 (a failed hypothesis)" "construct mahdavi24" "construct theorem1" "$d/t5.json" \
    --heads 1 --dh 1 --out "$o/t5.bad.json"
  run generate ks --N 16 --n 4 --d 3 --C 2 --seed 1 --out "$d/s16.json"
  expect_rc "names: generate ks" 0
  same_run "construct ks25" "construct ks25" "construct ks" "$d/s16.json" --check --out "$o/s16.cert.json"
  file_check "construct ks25 writes kind ks" "$o/s16.cert.json" 'j["kind"] == "ks"'
  # A certificate may name its kind by the paper (mahdavi24 for theorem1, ks25 for ks): the same verdict
  # and JSON apart from "kind" (the kind as written) and "seconds", with and without --data; export coq
  # takes it as well. Near misses are unknown kinds, as any other.
  local spec cert alias data kind rc_old with_data
  for spec in "t5.cert.json:mahdavi24:t5.json:theorem1" "s16.cert.json:ks25:s16.json:ks"; do
    IFS=: read -r cert alias data kind <<<"$spec"
    alter_json "$o/$cert" "$d/alias.$cert" "j['kind'] = '$alias'"
    for with_data in no yes; do
      if [ $with_data = yes ]; then set -- --data "$d/$data"; else set --; fi
      run verify "$o/$cert" "$@" --json
      rc_old=$RC
      cp "$OUT" "$d/verdict.json"
      run verify "$d/alias.$cert" "$@" --json
      check "verify kind $alias (--data $with_data): valid, as kind $kind" [ "$RC$rc_old" = 00 ]
      json_check "verify kind $alias (--data $with_data): the kind as written" "j['kind'] == '$alias'"
      check "verify kind $alias (--data $with_data): the same JSON apart from kind and seconds" python3 -c '
import json, sys
a, b = (json.loads(open(p).read()) for p in sys.argv[1:3])
for j in (a, b): j.pop("seconds"); j.pop("kind")
sys.exit(a != b)' "$d/verdict.json" "$OUT"
    done
    set --
    # Both exported from one path (the files name it).
    cp "$o/$cert" "$d/export.json"
    run export coq "$d/export.json" --out "$d/coq.old" --json
    rc_old=$RC
    cp "$d/alias.$cert" "$d/export.json"
    run export coq "$d/export.json" --out "$d/coq.new" --json
    check "export coq of kind $alias: exported as kind $kind" [ "$RC$rc_old" = 00 ]
    check "export coq of kind $alias: the same files" diff -r "$d/coq.old" "$d/coq.new"
    rm -rf "$d/coq.old" "$d/coq.new"
  done
  for alias in mahdavi ks2 Mahdavi24; do
    alter_json "$o/t5.cert.json" "$d/near.json" "j['kind'] = '$alias'"
    run verify "$d/near.json" --json
    expect_rc "verify kind $alias: an unknown kind" 1
    json_check "verify kind $alias: named unknown" "j['valid'] is False and j['kind'] == '$alias' and j['reason'] == 'kind: unknown certificate kind \"$alias\"'"
  done
  # Bad input and mistypes under either name: one line, the name as typed.
  same_run "construct mahdavi24: a missing file" "construct mahdavi24" "construct theorem1" "$d/none.json" --heads 2 \
    --dh 3 --out "$o/x.json"
  expect_bad_input "construct mahdavi24 --weight-out" "$o/x.json" construct mahdavi24 "$d/t5.json" --heads 2 --dh 3 \
    --out "$o/x.json" --weight-out "$o/w.npz"
  stderr_mentions "construct mahdavi24 --weight-out" "unknown option '--weight-out' for 'construct mahdavi24'; did you mean '--weights-out'?"
  expect_bad_input "mistyped mahdavi24" "" construct mahdavi42 "$d/t5.json"
  stderr_mentions "mistyped mahdavi24" "did you mean 'construct mahdavi24'?"
  expect_bad_input "mistyped ks25" "" generate ks52 --N 3
  stderr_mentions "mistyped ks25" "did you mean 'generate ks25'?"
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
  run generate shared --T 7 --n 3 --d 5 --C 3 --out "$d/shared.json"
  expect_rc "generate shared" 0
  file_check "generate shared: one context" "$d/shared.json" 'all(c == j["contexts"][0] for c in j["contexts"]) and all(0 <= int(x) < 3 for x in j["class_labels"]) and "labels" not in j'
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
  # --no-check: the same certificate, written without the in-process re-check ("verified": null); verify
  # then accepts it, and rejects it with one number altered.
  run construct theorem1 "$d/kexact.json" --heads 4 --dh 3 --no-check --out "$d/kexact.nocheck.json" --json
  expect_rc "construct theorem1 --no-check" 0
  json_check "construct --no-check: memorized, not re-checked in process" 'j["memorized"] is True and j["verified"] is None and "independent checker" not in j["timings"]'
  check "construct --no-check writes the certificate the checked run wrote" cmp -s "$d/kexact.cert.json" "$d/kexact.nocheck.json"
  run verify "$d/kexact.nocheck.json" --json
  json_check "verify of a --no-check certificate" 'j["valid"] is True'
  alter_json "$d/kexact.nocheck.json" "$d/kexact.nocheck.bad.json" 'j["weights"]["WO"][0][0] = "12345/7"'
  run verify "$d/kexact.nocheck.bad.json" --json
  json_check "verify rejects a --no-check certificate with an altered weight" 'j["valid"] is False'
  run generate theorem1 --T 4 --n 3 --d 6 --kruskal 4 --out "$d/never.json"
  expect_rc "generate --kruskal K > T-1" 2
  # The saturation-scale families (docs/SATURATION.md): data satisfying Assumptions 1-3 in general position
  # on which Theorem 1 still holds at the proof's scales and at c_network; their shape is fixed.
  run generate theorem1 --family joint-scales --T 4 --n 2 --d 3 --seed 5 --out "$d/joint.json" --json
  expect_rc "generate --family joint-scales" 0
  json_check "generate --family echoed" 'j["family"] == "joint-scales"'
  file_check "joint-scales: one shared context" "$d/joint.json" 'all(c == j["contexts"][0] for c in j["contexts"]) and len(j["queries"]) == 4'
  run assumptions "$d/joint.json" --json
  json_check "joint-scales data: Assumptions 1-3 and general position" 'j["assumption1"]["holds"] is True and j["assumption2"]["holds"] is True and j["assumption3"]["holds"] is True and j["general_position"]["holds"] is True'
  run construct theorem1 "$d/joint.json" --heads 3 --dh 2 --c network --out "$d/joint.cert.json" --json
  expect_rc "construct theorem1 on joint-scales data at c_network" 0
  # A staircase: one shared context (two unit tokens), queries e_1, e_1+e_2, e_1+e_2+e_3, e_1+...+e_4. At
  # c = 0 the rows of Z nearly coincide and c_network is a tiny c (about 6e-8) at which Z is ill-conditioned:
  # the double read-out's bound (about 2e-6) does not certify the labels, the MPFR read-out does. The
  # reported c_network, passed back, rebuilds the same certificate, and verify accepts it.
  cat >"$d/stair.json" <<'JSON'
{"contexts": [[["1","0","0","0"],["0","1","0","0"]], [["1","0","0","0"],["0","1","0","0"]], [["1","0","0","0"],["0","1","0","0"]], [["1","0","0","0"],["0","1","0","0"]]],
 "queries": [["1","0","0","0"],["1","1","0","0"],["1","1","1","0"],["1","1","1","1"]], "labels": ["-8","0","8","-4"]}
JSON
  run construct theorem1 "$d/stair.json" --heads 3 --dh 2 --c network --out "$d/stair.cert.json" --json
  expect_rc "construct theorem1 --c network on staircase data (ill-conditioned Z)" 0
  json_check "staircase at c_network: saturation needed, every label certified" 'j["memorized"] is True and j["verified"] is True and j["c_network"] not in (None, "0") and j["max_label_error"] <= 2**-20 and "step2 read-out (MPFR)" in j["timings"]'
  cnet=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["c_network"])' "$OUT")
  run construct theorem1 "$d/stair.json" --heads 3 --dh 2 --c "$cnet" --out "$d/stair.val.json" --json
  expect_rc "construct theorem1 --c <c_network> on staircase data" 0
  if cmp -s "$d/stair.cert.json" "$d/stair.val.json"; then pass; else fail "staircase: --c <c_network> does not rebuild the --c network certificate"; fi
  run verify "$d/stair.cert.json" --json
  json_check "verify the staircase certificate" 'j["valid"] is True'
  # Three staircase examples, two heads: the smallest grid c the engine's rank certificate passes (about
  # 6e-8) was one the checker's own enclosure did not (exit 3, internal error); c_network keeps a margin.
  alter_json "$d/stair.json" "$d/stair3.json" 'j["contexts"] = j["contexts"][:3]; j["queries"] = j["queries"][:3]; j["labels"] = ["-1/2", "0", "1/2"]'
  run construct theorem1 "$d/stair3.json" --heads 2 --dh 2 --c network --out "$d/stair3.cert.json" --json
  expect_rc "construct theorem1 --c network, staircase of 3" 0
  json_check "staircase of 3 at c_network: certified and verified" 'j["memorized"] is True and j["verified"] is True and j["c_network"] not in (None, "0")'
  cnet=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["c_network"])' "$OUT")
  run construct theorem1 "$d/stair3.json" --heads 2 --dh 2 --c "$cnet" --out "$d/stair3.val.json"
  expect_rc "construct theorem1 --c <c_network>, staircase of 3" 0
  # --tolerance 0 cannot be certified by any enclosure, yet rank(Z) = T* is: undecided (exit 3), never
  # "NOT memorized", nothing written.
  run construct theorem1 "$d/stair.json" --heads 3 --dh 2 --tolerance 0 --out "$d/never.json" --json
  expect_rc "construct theorem1 --tolerance 0" 3
  json_check "--tolerance 0: undecided, the rank certified" 'j["rank_Z_lower"] == 4 and "exact read-out exists" in j["undecided"]'
  check "--tolerance 0 writes nothing" test ! -e "$d/never.json"
  run generate theorem1 --family common-scale --T 3 --n 2 --d 4 --seed 5 --out "$d/common.json"
  expect_rc "generate --family common-scale" 0
  expect_bad_input "generate --family joint-scales with T != 4" "$d/never.json" generate theorem1 --family joint-scales --T 5 --n 2 --d 3 --out "$d/never.json"
  expect_bad_input "generate --family unknown" "$d/never.json" generate theorem1 --family staircase --T 4 --n 2 --d 3 --out "$d/never.json"

  # T = 20 > T* = H(r-1)+1 = 13, theorem only (--beyond off): the first 13 are certified (certificate
  # written), the verdict asked for (all 20 memorized) does not hold: exit 1, the missing ones listed.
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --beyond off --out "$d/cert.json" --json
  expect_rc "construct theorem1, T > T*" 1
  json_keys "construct theorem1" claim H n d dh r T T_star rank_Z_lower memorized memorized_count not_memorized method saturation seconds
  json_check "construct theorem1 values" 'j["claim"] == "mahdavi24/theorem-1" and j["T"] == 20 and j["T_star"] == 13 and j["rank_Z_lower"] == 13 and j["memorized"] is False and j["memorized_count"] == 13 and j["not_memorized"] == list(range(13, 20)) and len(j["saturation"]) == 4 and all(k in j["saturation"][1] for k in ["head","c","c_proof","c_weyl","sigma_lower","eps"])'
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --beyond off --out "$d/cert.json"
  check "construct theorem1 summary names the missing examples" grep -q "memorized: 13 of 20 examples; NOT memorized: examples 13, 14" "$OUT"
  # Beyond the theorem (default --beyond generic): T = 20 <= H d = 24, generic weights certify all 20; the
  # written certificate (method generic) passes verify; a label changed in it does not.
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --out "$d/gen.cert.json" --json
  expect_rc "construct theorem1, T > T*, generic weights" 0
  json_check "generic weights: all 20 memorized" 'j["method"] == "generic" and j["memorized"] is True and j["memorized_count"] == 20 and j["not_memorized"] == [] and j["theorem_memorized_count"] == 13 and j["generic"]["rank_Z_lower"] == 20 and j["generic"]["rank_Z_bound"] == 20 and j["generic"]["verified"] is True'
  file_check "generic certificate" "$d/gen.cert.json" 'j["method"] == "generic" and j["claim"] == "mahdavi24/generic-weights" and j["T"] == 20 and j["trace"] == []'
  run verify "$d/gen.cert.json" --json
  expect_rc "verify the generic-weights certificate" 0
  alter_json "$d/gen.cert.json" "$d/gen.bad.json" 'j["data"]["labels"][17][0] = "1000"'
  run verify "$d/gen.bad.json" --json
  expect_rc "verify a generic certificate with a changed label" 1
  # T > H d: with H = 2, d = 6, rank(Z) <= 12 < 20 for ANY weights: exit 1, at most 12 memorized, said so.
  run construct theorem1 "$d/data.json" --heads 2 --dh 4 --out "$d/gen12.cert.json" --json
  expect_rc "construct theorem1, T > H d" 1
  json_check "T > H d: honest count" 'j["memorized"] is False and j["generic"]["rank_Z_bound"] == 12 and j["generic"]["rank_Z_lower"] <= 12 and j["memorized_count"] == max(j["theorem_memorized_count"], j["generic"]["memorized_count"]) and len(j["not_memorized"]) == 20 - j["memorized_count"] and j["memorized_count"] >= 7'
  run construct theorem1 "$d/data.json" --heads 2 --dh 4 --out "$d/gen12.cert.json"
  check "T > H d: the summary states the bound" grep -q "rank(Z) <= min(T, H d) = 12 for any weights" "$OUT"
  run construct theorem1 "$d/data.json" --heads 2 --dh 4 --beyond sideways --out "$d/never.json"
  expect_rc "construct theorem1 --beyond sideways" 2
  # "examples" says which rows of the data set a certificate's examples are. Without --data the checker
  # cannot tie it (listed as not checked); with --data every example is compared with the row it names,
  # and a certificate covering some of DATA's rows says how many instead of passing.
  file_check "generic certificate: the checksum helper agrees with the engine" "$d/gen12.cert.json" 't1_checksum(j) == j["trace_checksum"] and len(j["examples"]) < 20'
  run verify "$d/gen.cert.json" --data "$d/data.json" --json
  expect_rc "verify --data: the generic certificate covering all 20 rows" 0
  run verify "$d/gen12.cert.json" --json
  expect_rc "verify the generic certificate on a subset" 0
  json_check "verify without --data lists examples as not checked" 'any(f.startswith("examples") for f in j["not_checked"])'
  run verify "$d/gen12.cert.json" --data "$d/data.json" --json
  expect_rc "verify --data: a certificate covering some of DATA's rows" 1
  json_check "verify --data: the coverage is stated" '"covers " + str(len(__import__("json").load(open("'"$d"'/gen12.cert.json"))["examples"])) + " of DATA" in j["reason"]'
  # An adversary renames the rows (checksum recomputed): still VALID on the embedded data alone, rejected
  # against the data set, naming the first example whose row differs.
  alter_json "$d/gen12.cert.json" "$d/gen12.rows.json" 'e = j["examples"]; miss = [r for r in range(20) if r not in e]; j["examples"] = sorted(e[:-1] + [miss[-1]]); j["trace_checksum"] = t1_checksum(j)'
  file_check "renamed rows differ from the engine's" "$d/gen12.rows.json" 'j["examples"] != __import__("json").load(open("'"$d"'/gen12.cert.json"))["examples"]'
  run verify "$d/gen12.rows.json" --json
  expect_rc "verify renamed rows without --data (not tied)" 0
  run verify "$d/gen12.rows.json" --data "$d/data.json" --json
  expect_rc "verify --data rejects renamed rows" 1
  json_check "renamed rows: the differing example is named" '"data.contexts[" in j["reason"] or "data.queries[" in j["reason"]'
  alter_json "$d/gen12.cert.json" "$d/gen12.dup.json" 'j["examples"][1] = j["examples"][0]; j["trace_checksum"] = t1_checksum(j)'
  run verify "$d/gen12.dup.json" --json
  expect_rc "verify rejects examples that are not strictly increasing" 1
  # The generic attempt over the memory budget never costs the theorem's certificate: T = 500 examples of
  # 64 x 64 contexts, T* = 9. The generic weights would need about 800 MB beside the data (measured peak
  # about 600 MB); at --max-memory 300 they are skipped with the value that would suffice, the theorem's
  # certificate is written and verifies, and the exit status is the theorem's (1: 9 of 500).
  run generate theorem1 --T 500 --n 64 --d 64 --seed 3 --out "$d/wide.json"
  expect_rc "generate 500 x 64 x 64" 0
  run construct theorem1 "$d/wide.json" --heads 4 --dh 3 --max-memory 300 --out "$d/wide.cert.json" --json
  expect_rc "construct theorem1 --max-memory 300, generic attempt over budget" 1
  json_check "--max-memory 300: theorem certificate kept, generic skipped for budget" 'j["memorized_count"] == 9 and j["theorem_memorized_count"] == 9 and j["verified"] is True and j["method"] == "theorem" and "--max-memory" in j["generic"]["skipped"] and "would suffice" in j["generic"]["skipped"]'
  run verify "$d/wide.cert.json" --json
  json_check "verify the theorem certificate written under --max-memory 300" 'j["valid"] is True'
  rm -f "$d/wide.json" "$d/wide.cert.json"
  # Exactly T* examples: all memorized, exit 0.
  alter_json "$d/data.json" "$d/data13.json" 'j["contexts"] = j["contexts"][:13]; j["queries"] = j["queries"][:13]; j["labels"] = j["labels"][:13]'
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --out "$d/cert13.json" --json
  expect_rc "construct theorem1, T = T*" 0
  json_check "construct theorem1 T = T*: all memorized" 'j["T"] == 13 and j["memorized"] is True and j["memorized_count"] == 13 and j["not_memorized"] == []'
  cp "$OUT" "$d/proof.out.json"
  # Claim 1's exact left inverse (--fit exact) certifies too, and verify accepts it; a bad --fit is exit 2.
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --fit exact --out "$d/cert13x.json" --json
  expect_rc "construct theorem1 --fit exact" 0
  run verify "$d/cert13x.json"
  expect_rc "verify of the --fit exact certificate" 0
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --fit sideways --out "$d/never.json"
  expect_rc "construct theorem1 --fit sideways" 2
  # Saturation scales: every c reported rebuilds certified weights when passed back with --c.
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --c weyl --out "$d/cert_weyl.json" --json
  expect_rc "construct theorem1 --c weyl" 0
  json_check "--c weyl: every head at its c_weyl" 'j["memorized"] is True and j["c_scale"] == "weyl" and all(s["c"] == s["c_weyl"] for s in j["saturation"])'
  file_check "--c proof reports the same c_weyl" "$d/proof.out.json" 'all(s["c"] == s["c_proof"] and s["c_weyl"] is not None for s in j["saturation"]) and j["c_network"] is not None'
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --c network --out "$d/cert_net.json" --json
  expect_rc "construct theorem1 --c network" 0
  json_check "--c network: every saturating head at c_network" 'j["memorized"] is True and all(s["c"] == j["c_network"] for s in j["saturation"][1:])'
  cnet=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["c_network"])' "$OUT")
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --c "$cnet" --out "$d/cert_val.json" --json
  expect_rc "construct theorem1 --c <c_network>" 0
  if cmp -s "$d/cert_net.json" "$d/cert_val.json"; then pass; else fail "--c <c_network> does not rebuild the --c network certificate"; fi
  run verify "$d/cert_weyl.json"
  expect_rc "verify --c weyl certificate" 0
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --c -1 --out "$d/never.json"
  expect_rc "construct theorem1 --c -1" 2
  # Real labels as a flat list (d_out = 1), as numpy's y.tolist() writes them.
  alter_json "$d/data13.json" "$d/flat13.json" 'j["labels"] = [float(eval(l[0])) for l in j["labels"]]'
  run construct theorem1 "$d/flat13.json" --heads 4 --dh 4 --out "$d/flat13_cert.json" --json
  expect_rc "construct theorem1, flat real labels" 0
  json_check "construct theorem1 flat real labels: d_out = 1" 'j["d_out"] == 1 and j["memorized"] is True and "max_label_error" in j'
  alter_json "$d/data13.json" "$d/both13.json" 'j["class_labels"] = [0] * 13'
  expect_bad_input "construct theorem1: labels and class_labels" "$d/x.json" construct theorem1 "$d/both13.json" --heads 4 --dh 4 --out "$d/x.json"
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
  # Data by reference: the certificate names the data file and its digest instead of embedding the data;
  # the same construction (same T*, rank, weights and trace as the embedded certificate) and verdict.
  run construct theorem1 "$d/data13.json" --heads 4 --dh 4 --data-ref on --out "$d/ref13.json" --json
  expect_rc "construct theorem1 --data-ref on" 0
  json_check "--data-ref on: same T*, all memorized" 'j["data_ref"] is True and j["T_star"] == 13 and j["rank_Z_lower"] == 13 and j["memorized"] is True'
  file_check "--data-ref on: no embedded contexts, digest of the first 13 examples (computed independently)" "$d/ref13.json" 'j["data"]["file"].endswith("data13.json") and "contexts" not in j["data"] and "queries" not in j["data"] and j["data"]["digest"] == digest(j["data"]["file"], 13)'
  file_check "--data-ref on: weights and trace equal the embedded certificate's" "$d/ref13.json" 'j["weights"] == __import__("json").load(open("'"$d"'/cert13.json"))["weights"] and j["trace"] == __import__("json").load(open("'"$d"'/cert13.json"))["trace"]'
  run verify "$d/ref13.json" --json
  expect_rc "verify a certificate referencing its data file" 0
  json_check "verify by reference: digest recomputed" 'j["valid"] is True and any("digest recomputed" in a for a in j["applied"])'
  run verify "$d/ref13.json" --data "$d/data13.json" --json
  expect_rc "verify --data on a certificate referencing its data" 0
  # The same numbers as a float32 .npz (read by the typed reader): the same digest, so either file serves.
  local ctx13 q13 y13
  ctx13=$(python3 -c 'import json,sys,fractions; j=json.load(open(sys.argv[1])); print(",".join(repr(float(fractions.Fraction(v))) for e in j["contexts"] for r in e for v in r))' "$d/data13.json")
  q13=$(python3 -c 'import json,sys,fractions; j=json.load(open(sys.argv[1])); print(",".join(repr(float(fractions.Fraction(v))) for r in j["queries"] for v in r))' "$d/data13.json")
  y13=$(python3 -c 'import json,sys,fractions; j=json.load(open(sys.argv[1])); print(",".join(repr(float(fractions.Fraction(r[0]))) for r in j["labels"]))' "$d/data13.json")
  write_npz "$d/data13.npz" stored "contexts=<f4:13,4,6:$ctx13" "queries=<f4:13,6:$q13" "labels=<f8:13,1:$y13"
  run verify "$d/ref13.json" --data "$d/data13.npz" --json
  expect_rc "verify --data with the same values as a float32 .npz" 0
  run construct theorem1 "$d/data13.npz" --heads 4 --dh 4 --data-ref on --out "$d/ref13npz.json" --json
  expect_rc "construct theorem1 --data-ref on from a float32 .npz" 0
  file_check "float32 .npz: the same digest as the JSON file's" "$d/ref13npz.json" 'j["data"]["digest"] == __import__("json").load(open("'"$d"'/ref13.json"))["data"]["digest"]'
  # The .npz is read into typed storage (no rational per context entry): the engine must build the very
  # weights and trace the rational route built from the JSON file.
  file_check "float32 .npz (typed route): weights and trace equal the rational route's" "$d/ref13npz.json" 'j["weights"] == __import__("json").load(open("'"$d"'/ref13.json"))["weights"] and j["trace"] == __import__("json").load(open("'"$d"'/ref13.json"))["trace"]'
  # A tampered data file: its digest differs (rejected); with the certificate's digest forged to match it,
  # the checker still recomputes everything from the tampered values and rejects.
  alter_json "$d/data13.json" "$d/tamper13.json" 'j["contexts"][3][1][2] = "5/64" if j["contexts"][3][1][2] != "5/64" else "7/64"'
  run verify "$d/ref13.json" --data "$d/tamper13.json" --json
  expect_rc "verify rejects a tampered data file (digest)" 1
  json_check "tampered data: reason names the digest" '"digest" in j["reason"]'
  alter_json "$d/ref13.json" "$d/forged13.json" 'j["data"]["digest"] = digest("'"$d"'/tamper13.json", 13)'
  run verify "$d/forged13.json" --data "$d/tamper13.json" --json
  expect_rc "verify rejects tampered data even with a matching digest" 1
  # Labels are bound too: the digest covers them, and the checker compares the file's labels with the
  # certificate's exactly (a DATA whose labels all moved by 5 is not the data the certificate is about).
  alter_json "$d/data13.json" "$d/lab5.json" 'j["labels"] = [[str(__import__("fractions").Fraction(str(v)) + 5) for v in r] for r in j["labels"]]'
  run verify "$d/ref13.json" --data "$d/lab5.json" --json
  expect_rc "verify --data with every label changed (+5), by reference" 1
  alter_json "$d/ref13.json" "$d/lab5dig.json" 'j["data"]["digest"] = digest("'"$d"'/lab5.json", 13)'
  run verify "$d/lab5dig.json" --data "$d/lab5.json" --json
  expect_rc "verify: labels changed with a digest forged to match" 1
  json_check "forged digest, changed labels: the first label named" '"data.labels[0][0]" in j["reason"]'
  mkdir -p "$d/refdir"
  cp "$d/data13.json" "$d/refdir/data.json"
  local bin_abs
  bin_abs=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
  (cd "$d/refdir" && "$bin_abs" construct theorem1 data.json --heads 4 --dh 4 --data-ref on --out ref.json >/dev/null 2>&1)
  run verify "$d/refdir/ref.json" --json
  expect_rc "verify by reference, the file next to the certificate" 0
  cp "$d/lab5.json" "$d/refdir/data.json"
  run verify "$d/refdir/ref.json" --json
  expect_rc "verify by reference: the referenced file's labels changed" 1
  # A certificate written before the digest covered labels (v1: contexts and queries only) still verifies,
  # and its labels are still tied by the comparison with the file's.
  alter_json "$d/ref13.json" "$d/ref13v1.json" 'j["data"]["digest"] = digest("'"$d"'/data13.json", 13, 1)'
  run verify "$d/ref13v1.json" --json
  expect_rc "verify an older (v1 digest) certificate by reference" 0
  json_check "v1 digest: said so" 'any("older digest" in a for a in j["applied"])'
  alter_json "$d/ref13.json" "$d/lab5v1.json" 'j["data"]["digest"] = digest("'"$d"'/lab5.json", 13, 1)'
  run verify "$d/lab5v1.json" --data "$d/lab5.json" --json
  expect_rc "verify: v1 digest of the changed file, labels still compared" 1
  alter_json "$d/ref13.json" "$d/refrows.json" 'j["examples"][12] = 14; j["trace_checksum"] = t1_checksum(j)'
  # By reference too, --data must be covered whole: a certificate about the file's first 13 of DATA's 20
  # examples is VALID about its file, and says what it does not cover against DATA (exit 1).
  run construct theorem1 "$d/data.json" --heads 4 --dh 4 --beyond off --data-ref on --out "$d/ref20.json"
  expect_rc "construct theorem1 --data-ref on, T = 20 > T* (first 13 certified)" 1
  run verify "$d/ref20.json"
  expect_rc "verify by reference: the file's first 13 examples" 0
  run verify "$d/ref20.json" --data "$d/data.json" --json
  expect_rc "verify --data by reference: DATA not covered whole" 1
  json_check "verify --data by reference: the rows not covered are named" '"not covered" in j["reason"] and "20" in j["reason"]'
  run verify "$d/refrows.json" --json
  expect_rc "verify by reference: examples naming rows past the first T" 1
  alter_json "$d/ref13.json" "$d/wrongdig.json" 'j["data"]["digest"] = "sha256:" + "0" * 64'
  run verify "$d/wrongdig.json" --json
  expect_rc "verify rejects a mismatching digest" 1
  alter_json "$d/ref13.json" "$d/nofile.json" 'j["data"]["file"] = "'"$d"'/no-such-data.json"'
  expect_bad_input "verify: the referenced data file is missing" "" verify "$d/nofile.json"
  alter_json "$d/data13.json" "$d/third13.json" 'j["contexts"][0][0][0] = "1/3"'
  expect_bad_input "construct --data-ref on with non-dyadic data" "$d/x.json" construct theorem1 "$d/third13.json" --heads 4 --dh 4 --data-ref on --out "$d/x.json"
  expect_bad_input "construct --data-ref sideways" "$d/x.json" construct theorem1 "$d/data13.json" --heads 4 --dh 4 --data-ref sideways --out "$d/x.json"
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
  # Flat float labels in an .npz are real labels (d_out = 1), as construct reads them.
  write_npz "$d/flatlab.npz" stored "contexts=<f4:3,2,3:1,0,0,0,1,0,0,0,1,1,1,0,1,0,1,0,1,1" "queries=<f4:3,3:1,2,3,3,1,2,2,3,1" "labels=<f4:3:0.5,-1.25,2"
  run assumptions "$d/flatlab.npz" --json
  expect_rc "assumptions: flat float32 labels in an .npz" 0
  expect_bad_input "assumptions: missing file" "" assumptions "$d/none.json"
}

# ---------------------------------------------------------------------------------------------------
# dana24: generate / construct / verify (docs/papers/dana24.md)
# ---------------------------------------------------------------------------------------------------
section_dana24() {
  local d=$WORK/dana24
  mkdir -p "$d"
  run generate dana24 --N 5 --S 2 --T 20 --seed 3 --out "$d/data.json" --json
  expect_rc "generate dana24" 0
  json_keys "generate dana24" N S T seed n_last out seconds
  file_check "generate dana24 data" "$d/data.json" 'j["vocab"] == 5 and len(j["sequences"]) == 20 and len(set(map(tuple, j["sequences"]))) == 20 and all(0 <= x < 5 for s in j["sequences"] for x in s) and len(j["next"]) == 20'
  run generate dana24 --N 3 --S 2 --all --out "$d/all.npz"
  expect_rc "generate dana24 --all .npz" 0
  run construct dana24 "$d/data.json" --heads 8 --dh 2 --d 4 --out "$d/cert.json" --weights-out "$d/w.npz" --check --json
  expect_rc "construct dana24" 0
  json_keys "construct dana24" claim N S d dh H T T0 memorized memorized_count min_margin parameters seconds n_last rank_certificate parameters_remark2 nonzero_parameters bit_complexity comparison verified
  json_check "construct dana24 values" 'j["claim"] == "dana24/theorem-1-assoc" and j["T"] == 20 and j["T0"] == 20 and j["memorized"] is True and j["memorized_count"] == 20 and j["verified"] is True and j["parameters"] == 4 * (2 + 10 + 4 * 2 * 8) and j["rank_certificate"]["rank_lower"] == 20'
  file_check "dana24 certificate" "$d/cert.json" 'j["kind"] == "dana24" and all(k in j["weights"] for k in ["e","pos","WU","WQ","WK","WV","WO"])'
  check "weights-out written" test -s "$d/w.npz"
  run verify "$d/cert.json" --json
  expect_rc "verify dana24" 0
  json_check "verify dana24 valid" 'j["valid"] is True and j["kind"] == "dana24"'
  alter_json "$d/cert.json" "$d/b1.json" 'j["next"][0] = (j["next"][0] + 1) % 5'
  alter_json "$d/cert.json" "$d/b2.json" 'j["min_margin"] = "100"'
  alter_json "$d/cert.json" "$d/b3.json" 'j["weights"]["WO"] = [[["0"] * 2 for _ in range(4)] for _ in range(8)]'
  for c in b1 b2 b3; do
    run verify "$d/$c.json" --json
    expect_rc "verify rejects altered dana24 $c" 1
  done
  run construct dana24 "$d/all.npz" --heads 3 --dh 2 --d 3 --out "$d/cert_all.json" --json
  expect_rc "construct dana24 from .npz (all 9 sequences of [3]^2)" 0
  # Corollary 1 (d = 2).
  run construct dana24 "$d/all.npz" --heads 4 --dh 2 --d 2 --out "$d/cert_c1.json" --json
  expect_rc "construct dana24 corollary-1" 0
  json_check "corollary-1 claim" 'j["claim"] == "dana24/corollary-1" and j["memorized"] is True'
  # V1: no heads, two sequences with the same last token and different next tokens: certified negative.
  printf '{"vocab":2,"sequences":[[0,0],[1,0]],"next":[0,1]}' >"$d/v1.json"
  run construct dana24 "$d/v1.json" --heads 0 --dh 1 --d 2 --out "$d/v1cert.json" --json
  expect_rc "construct dana24 H=0 shared last token (V1)" 1
  json_check "V1 witness" 'j["memorized"] is False and j["witness"]["sequences"] == [0, 1]'
  # V2: every sequence ends with the same token: rank ceiling 1 + H d_h < T, undecided, nothing written.
  printf '{"vocab":4,"sequences":[[0,0,1],[0,1,1],[0,2,1],[1,0,1],[1,1,1],[1,2,1],[2,0,1]],"next":[0,1,2,3,0,1,2]}' >"$d/v2.json"
  run construct dana24 "$d/v2.json" --heads 2 --dh 2 --d 3 --out "$d/v2cert.json" --json
  expect_rc "construct dana24 shared last token (V2): undecided" 3
  json_check "V2 rank ceiling" 'j["rank_ceiling"] == 5 and j["memorized"] is False'
  check "V2 writes no certificate" test ! -e "$d/v2cert.json"
  # Bad input: one line, exit 2, nothing written.
  printf '{"vocab":3,"sequences":[[0,1],[0,1]],"next":[0,2]}' >"$d/dup.json"
  expect_bad_input "construct dana24: duplicate sequence, different next" "$d/x.json" construct dana24 "$d/dup.json" --heads 1 --dh 1 --out "$d/x.json"
  stderr_mentions "duplicate reported as such" "different next token"
  printf '{"vocab":3,"sequences":[[0,7]],"next":[0]}' >"$d/oor.json"
  expect_bad_input "construct dana24: token out of range" "$d/x.json" construct dana24 "$d/oor.json" --heads 1 --dh 1 --out "$d/x.json"
  stderr_mentions "token position" "sequences[0][1]"
  expect_bad_input "construct dana24: T > H dh + d" "$d/x.json" construct dana24 "$d/data.json" --heads 1 --dh 1 --d 2 --out "$d/x.json"
  expect_bad_input "construct dana24: dh > d" "$d/x.json" construct dana24 "$d/data.json" --heads 8 --dh 5 --d 4 --out "$d/x.json"
  expect_bad_input "generate dana24: T > N^S" "$d/x.json" generate dana24 --N 2 --S 2 --T 5 --out "$d/x.json"
  # compare: three constructions on one association set, each re-verified by the checker.
  run generate dana24 --N 6 --S 3 --T 21 --seed 4 --out "$d/cmp.json"
  run compare "$d/cmp.json" --heads 4 --dh 4 --d 8 --json
  expect_rc "compare" 0
  json_keys "compare" N S T d H dh rows seconds
  json_check "compare rows" 'len(j["rows"]) == 3 and all(k in r for r in j["rows"] for k in ["construction","memorized","parameters","nonzero_parameters","max_bits","seconds","verified","note"]) and j["rows"][2]["memorized"] == 21 and j["rows"][2]["verified"] is True and j["rows"][1]["memorized"] in (0, 21)'
  expect_bad_input "compare: missing data set" "" compare "$d/none.json" --heads 1 --dh 1
}

# ---------------------------------------------------------------------------------------------------
# Hostile input: out-of-range options, endless streams, numbers beyond double range, ill-typed
# certificates, over-budget checks. Exit statuses only 0-3, one stderr line for bad input.
# ---------------------------------------------------------------------------------------------------
section_hostile() {
  local d=$WORK/hostile
  mkdir -p "$d"
  "$BIN" generate theorem1 --T 6 --n 3 --d 4 --seed 1 --out "$d/data.json" >/dev/null 2>&1
  expect_bad_input "construct: --heads -1" "$d/x.json" construct theorem1 "$d/data.json" --heads -1 --dh 2 --out "$d/x.json"
  stderr_mentions "construct: --heads -1" "--heads"
  expect_bad_input "construct: --heads 1e9" "$d/x.json" construct theorem1 "$d/data.json" --heads 1000000000 --dh 2 --out "$d/x.json"
  expect_bad_input "generate: --T 1e12" "$d/y.json" generate theorem1 --T 1000000000000 --n 3 --d 4 --out "$d/y.json"
  expect_bad_input "generate: --n -3" "$d/y.json" generate theorem1 --T 5 --n -3 --d 4 --out "$d/y.json"
  expect_bad_input "generate: over --max-memory" "$d/y.json" generate theorem1 --T 100000 --n 1000 --d 1000 --out "$d/y.json"
  expect_bad_input "kruskal: --trials -1" "" kruskal "$d/data.json" --sample 2 --trials -1
  # Numbers beyond double range in a data file: bad input naming the file, not an internal error.
  printf '{"contexts":[[[1e999,0],[0,1]]],"queries":[[1,0]],"labels":[1]}' >"$d/big.json"
  expect_bad_input "data: 1e999" "$d/z.json" construct theorem1 "$d/big.json" --heads 1 --dh 2 --out "$d/z.json"
  stderr_mentions "data: 1e999" "big.json"
  # verify: "claim" is a field of every certificate (missing or mistyped: bad input); an unknown kind is
  # named as such; what a certificate says is shown escaped (no control sequence reaches the terminal).
  printf '{"kind":"rank"}' >"$d/noclaim.json"
  expect_bad_input "verify: a certificate without claim" "" verify "$d/noclaim.json"
  printf '{"kind":"rank","claim":5}' >"$d/numclaim.json"
  expect_bad_input "verify: a numeric claim" "" verify "$d/numclaim.json"
  printf '{"kind":"foo"}' >"$d/foo.json"
  run verify "$d/foo.json"
  expect_rc "verify: an unknown kind" 1
  check "verify: an unknown kind is named" grep -q "unknown certificate kind" "$OUT"
  printf '%s' '{"kind":"x\u001b]0;pwned\u0007","claim":"y\u001b[31m"}' >"$d/esc.json"
  run verify "$d/esc.json"
  expect_rc "verify: control characters in kind and claim" 1
  if LC_ALL=C grep -q "$(printf '\033')" "$OUT"; then fail "verify printed a raw ESC from the certificate"; else pass; fi
  # claims --cert-dir that cannot be a directory: bad input before any instance runs.
  : >"$d/afile"
  expect_bad_input "claims search --cert-dir naming a file" "" claims search mahdavi24/theorem-1 --budget 1 --cert-dir "$d/afile"
  expect_bad_input "claims run --cert-dir under a file" "" claims run mahdavi24/lemma-3 --cert-dir "$d/afile/sub"
  # verify: a stream that cannot be a certificate is bad input at its first byte (a device of zeros is
  # not read until the budget runs out); an endless stream that could be one is undecided (over budget).
  expect_bad_input "verify /dev/zero" "" verify /dev/zero --max-memory 64
  stderr_mentions "verify /dev/zero" "offset 0: expected a certificate (a JSON object, '{'), got a NUL byte"
  yes ' ' | head -c 100000000 | "$BIN" verify /dev/stdin --max-memory 64 >"$OUT" 2>"$ERR"
  RC=$?
  expect_rc "verify an endless stream of whitespace" 3
  head -c 20000000 /dev/zero >"$d/zeros.json"
  expect_bad_input "verify a 20 MB file of zeros" "" verify "$d/zeros.json" --max-memory 16
  # Refused at byte 0 with its offset, read no further: NUL bytes, a PNG, an empty file, and a 64 GB
  # (sparse) file whose first byte is not '{' (read whole, it would be over the 64 MB budget: exit 3, not 2).
  head -c 4096 /dev/zero >"$d/nul.json"
  printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >"$d/image.png"
  : >"$d/empty.json"
  printf '#' >"$d/huge.json"
  truncate -s 64G "$d/huge.json" 2>/dev/null || head -c 300000000 /dev/zero >>"$d/huge.json"
  expect_bad_input "verify a file of NUL bytes" "" verify "$d/nul.json"
  stderr_mentions "verify a file of NUL bytes" "offset 0: expected a certificate (a JSON object, '{'), got a NUL byte"
  expect_bad_input "verify a PNG" "" verify "$d/image.png"
  stderr_mentions "verify a PNG" "offset 0: expected a certificate (a JSON object, '{'), got byte 0x89"
  expect_bad_input "verify an empty file" "" verify "$d/empty.json"
  stderr_mentions "verify an empty file" "offset 0: unexpected end of input"
  expect_bad_input "verify a huge file starting with '#'" "" verify "$d/huge.json" --max-seconds 20 --max-memory 64
  stderr_mentions "verify a huge file starting with '#'" "offset 0: expected a certificate (a JSON object, '{'), got byte 0x23"
  rm -f "$d/huge.json"
  # A number cut short inside a packed matrix: bad input naming the byte where the text ends.
  printf '{"kind":"rank","claim":"rank","matrix":{"rows":2,"cols":2,"data":[["1","2"],["3",-' >"$d/cut.json"
  expect_bad_input "verify a certificate cut inside a matrix" "" verify "$d/cut.json"
  stderr_mentions "verify a certificate cut inside a matrix" "offset $(wc -c <"$d/cut.json" | tr -d ' '): expected a digit"
  # construct: a certificate the in-process checker cannot read within --max-memory is undecided (exit 3),
  # not an internal error, and nothing is written.
  "$BIN" generate theorem1 --T 100 --n 16 --d 32 --seed 2 --out "$d/mm.npz" >/dev/null 2>&1
  run construct theorem1 "$d/mm.npz" --heads 10 --dh 12 --out "$d/mm.cert.json" --max-memory 2
  expect_rc "construct theorem1 over --max-memory" 3
  if [ -e "$d/mm.cert.json" ]; then fail "construct theorem1 over --max-memory: a certificate was written"; else pass "construct theorem1 over --max-memory: nothing written"; fi
  # verify: an ill-typed field is bad input naming the field; a false one is rejected.
  printf '{"kind":"rank","claim":"rank","matrix":{"rows":1,"cols":1,"data":[["1"]]},"rank_lower":"1","rank_upper":1,"lower":{"method":"trivial"},"upper":{"method":"trivial"}}' >"$d/typed.json"
  expect_bad_input "verify: ill-typed field" "" verify "$d/typed.json"
  stderr_mentions "verify: ill-typed field" "rank_lower"
  # verify: an over-budget Kruskal enumeration is undecided (exit 3) from the estimate, at once.
  python3 - "$d/krank.json" <<'PY'
import json, sys
rows = [[str((i + 1) * (j + 2) % 97) for j in range(30)] for i in range(60)]
json.dump({"kind": "kruskal", "claim": "kruskal-rank", "vectors": {"rows": 60, "cols": 30, "data": rows},
           "kruskal_lower": 12, "lower": {"method": "exhaustive-mod-p", "prime": "1000000007"},
           "kruskal_upper": 30, "upper": {"method": "trivial"}}, open(sys.argv[1], "w"))
PY
  run verify "$d/krank.json" --json --max-seconds 5
  expect_rc "verify: over-budget Kruskal" 3
  json_check "verify: over-budget Kruskal undecided" 'j["valid"] is False and j.get("undecided") is True and "over budget" in j["reason"]'
  # A FIFO nobody writes to is empty input at once (no hang at open); a device is no data file; a string
  # that is not UTF-8 is malformed JSON.
  mkfifo "$d/fifo"
  expect_bad_input "verify: a FIFO without a writer" "" verify "$d/fifo"
  expect_bad_input "construct: data from a FIFO without a writer" "$d/z.json" construct theorem1 "$d/fifo" --heads 1 --dh 2 --out "$d/z.json"
  expect_bad_input "construct: data from /dev/zero" "$d/z.json" construct theorem1 /dev/zero --heads 1 --dh 2 --out "$d/z.json"
  stderr_mentions "construct: data from /dev/zero" "got a device"
  printf '{"kind":"\xff\xfe","claim":"x"}' >"$d/latin.json"
  expect_bad_input "verify: invalid UTF-8" "" verify "$d/latin.json"
  stderr_mentions "verify: invalid UTF-8" "invalid UTF-8"
}

# ---------------------------------------------------------------------------------------------------
# verify CERT --data DATA: the certificate must be about the user's data set (exactly), else exit 1 naming
# the first difference; a bad DATA is bad input (exit 2, one line naming DATA).
# ---------------------------------------------------------------------------------------------------
section_verify_data() {
  local d=$WORK/vdata
  mkdir -p "$d"
  # theorem1, from a JSON and from an .npz data set (float64 taken exactly on both sides).
  "$BIN" generate theorem1 --T 6 --n 3 --d 4 --seed 5 --out "$d/t.json" >/dev/null 2>&1
  "$BIN" construct theorem1 "$d/t.json" --heads 3 --dh 3 --out "$d/tc.json" >/dev/null 2>&1
  run verify "$d/tc.json" --data "$d/t.json" --json
  expect_rc "verify --data theorem1 (honest)" 0
  json_check "verify --data theorem1 applied" 'j["valid"] is True and any("equal DATA" in a for a in j["applied"])'
  alter_json "$d/t.json" "$d/t_lab.json" 'j["labels"][4] = [str(j["labels"][4][0]) + "1"] if isinstance(j["labels"][4], list) else str(j["labels"][4]) + "1"'
  run verify "$d/tc.json" --data "$d/t_lab.json" --json
  expect_rc "verify --data theorem1: one label differs" 1
  json_check "verify --data theorem1: label position" '"data.labels[4]" in j["reason"]'
  alter_json "$d/t.json" "$d/t_ctx.json" 'j["contexts"][2][1][3] = "1/7"'
  run verify "$d/tc.json" --data "$d/t_ctx.json" --json
  expect_rc "verify --data theorem1: one context entry differs" 1
  json_check "verify --data theorem1: context position" '"data.contexts[2][1][3]" in j["reason"]'
  alter_json "$d/t.json" "$d/t_more.json" 'j["contexts"].append(j["contexts"][0]); j["queries"].append(j["queries"][0]); j["labels"].append(j["labels"][0])'
  run verify "$d/tc.json" --data "$d/t_more.json" --json
  expect_rc "verify --data theorem1: DATA has one more example" 1
  "$BIN" generate theorem1 --T 5 --n 2 --d 3 --seed 6 --out "$d/t.npz" >/dev/null 2>&1
  "$BIN" construct theorem1 "$d/t.npz" --heads 4 --dh 3 --out "$d/tnc.json" >/dev/null 2>&1
  run verify "$d/tnc.json" --data "$d/t.npz"
  expect_rc "verify --data theorem1 .npz (honest)" 0
  run verify "$d/tnc.json" --data "$d/t.json"
  expect_rc "verify --data theorem1: another data set" 1
  # ks: DATA spells tokens out, the certificate indexes them.
  "$BIN" generate ks --N 6 --n 3 --d 2 --V 10 --C 3 --seed 2 --out "$d/k.json" >/dev/null 2>&1
  "$BIN" construct ks "$d/k.json" --out "$d/kc.json" >/dev/null 2>&1
  run verify "$d/kc.json" --data "$d/k.json"
  expect_rc "verify --data ks (honest)" 0
  alter_json "$d/k.json" "$d/k_lab.json" 'j["labels"][3] = (j["labels"][3] + 1) % 3'
  run verify "$d/kc.json" --data "$d/k_lab.json" --json
  expect_rc "verify --data ks: one label differs" 1
  json_check "verify --data ks: label position" '"labels[3]" in j["reason"]'
  alter_json "$d/k.json" "$d/k_tok.json" 'j["sequences"][1][2][0] = "123/7"'
  run verify "$d/kc.json" --data "$d/k_tok.json" --json
  expect_rc "verify --data ks: one token entry differs" 1
  json_check "verify --data ks: token position" '"sequences[1][2][0]" in j["reason"]'
  # ks data by reference: the certificate names the sequence file and its digest instead of embedding the
  # sequences and labels; the same network and verdict.
  run construct ks "$d/k.json" --data-ref on --out "$d/kref.json" --json
  expect_rc "construct ks --data-ref on" 0
  json_check "construct ks --data-ref on: said" 'j["data_ref"] is True and j["memorized"] is True'
  file_check "ks by reference: no embedded sequences or labels, digest of the file (computed independently)" "$d/kref.json" '"sequences" not in j and "labels" not in j and j["data"]["file"].endswith("k.json") and j["data"]["digest"] == ks_digest(j["data"]["file"])'
  file_check "ks by reference: the network equals the embedded certificate's" "$d/kref.json" 'j["network"] == __import__("json").load(open("'"$d"'/kc.json"))["network"]'
  run verify "$d/kref.json" --json
  expect_rc "verify ks by reference" 0
  json_check "verify ks by reference: digest recomputed" 'j["valid"] is True and any("digest recomputed" in a for a in j["applied"])'
  run verify "$d/kref.json" --data "$d/k.json"
  expect_rc "verify --data ks by reference (honest)" 0
  "$BIN" generate ks --N 6 --n 3 --d 2 --V 10 --C 3 --seed 2 --out "$d/k.npz" >/dev/null 2>&1
  run verify "$d/kref.json" --data "$d/k.npz"
  expect_rc "verify --data ks by reference: the same sequences as .npz (token table and ids)" 0
  run construct ks "$d/k.json" --data-ref on --check --out "$d/kref2.json"
  expect_rc "construct ks --data-ref on --check" 0
  # An edited label or token: the digest differs (rejected); with the digest forged to match, the checker
  # recomputes everything from the edited file and still rejects.
  run verify "$d/kref.json" --data "$d/k_lab.json" --json
  expect_rc "verify ks by reference: one label differs (digest)" 1
  json_check "ks by reference, edited label: the digest named" '"digest" in j["reason"]'
  alter_json "$d/kref.json" "$d/kref_lab.json" 'j["data"]["digest"] = ks_digest("'"$d"'/k_lab.json")'
  run verify "$d/kref_lab.json" --data "$d/k_lab.json" --json
  expect_rc "verify ks by reference: edited label, digest forged to match" 1
  json_check "ks by reference, edited label, forged digest: the prediction named" '"prediction" in j["reason"] or "label" in j["reason"]'
  run verify "$d/kref.json" --data "$d/k_tok.json" --json
  expect_rc "verify ks by reference: one token entry differs (digest)" 1
  alter_json "$d/kref.json" "$d/kref_tok.json" 'j["data"]["digest"] = ks_digest("'"$d"'/k_tok.json")'
  run verify "$d/kref_tok.json" --data "$d/k_tok.json" --json
  expect_rc "verify ks by reference: edited token, digest forged to match" 1
  json_check "ks by reference, edited token: not among the certificate's tokens" '"not among the certificate" in j["reason"]'
  alter_json "$d/kref.json" "$d/kref_dig.json" 'j["data"]["digest"] = "sha256:" + "0" * 64'
  run verify "$d/kref_dig.json" --json
  expect_rc "verify ks by reference: forged digest" 1
  alter_json "$d/kref.json" "$d/kref_nofile.json" 'j["data"]["file"] = "'"$d"'/no-such-ks.json"'
  expect_bad_input "verify ks by reference: the referenced file is missing" "" verify "$d/kref_nofile.json"
  expect_bad_input "construct ks --data-ref sideways" "$d/x.json" construct ks "$d/k.json" --data-ref sideways --out "$d/x.json"
  expect_bad_input "construct ks --data-ref on --deep-sets" "$d/x.json" construct ks "$d/k.json" --deep-sets --data-ref on --out "$d/x.json"
  # dana24.
  "$BIN" generate dana24 --N 5 --S 2 --T 12 --seed 7 --out "$d/a.json" >/dev/null 2>&1
  "$BIN" construct dana24 "$d/a.json" --heads 4 --dh 2 --d 4 --out "$d/ac.json" >/dev/null 2>&1
  run verify "$d/ac.json" --data "$d/a.json"
  expect_rc "verify --data dana24 (honest)" 0
  alter_json "$d/a.json" "$d/a_next.json" 'j["next"][5] = (j["next"][5] + 1) % 5'
  run verify "$d/ac.json" --data "$d/a_next.json" --json
  expect_rc "verify --data dana24: one next token differs" 1
  json_check "verify --data dana24: position" '"next[5]" in j["reason"]'
  # Bad input: DATA unreadable / malformed / of another format; --data for a kind without data.
  expect_bad_input "verify --data: missing DATA" "" verify "$d/tc.json" --data "$d/none.json"
  printf '{"contexts": [[["1", "x"]]]}' >"$d/bad.json"
  expect_bad_input "verify --data: malformed DATA" "" verify "$d/tc.json" --data "$d/bad.json"
  stderr_mentions "verify --data: malformed DATA names DATA" "bad.json"
  expect_bad_input "verify --data: a ks data set for a theorem1 certificate" "" verify "$d/tc.json" --data "$d/k.json"
  printf '1 2\n3 4\n' >"$d/m.txt"
  "$BIN" rank "$d/m.txt" --cert "$d/rank.json" >/dev/null 2>&1
  expect_bad_input "verify --data: rank certificate" "" verify "$d/rank.json" --data "$d/t.json"
}

# ---------------------------------------------------------------------------------------------------
# Hostile arguments and files: integer options read exactly (no saturation at 2^63 - 1 or 2^64 - 1),
# file names with control characters shown escaped on one line, file contents never echoed, and a zip
# bomb refused within a small memory budget.
# ---------------------------------------------------------------------------------------------------
section_hostile_input() {
  local d=$WORK/hinput
  mkdir -p "$d"
  # Seeds: [0, 2^63 - 1] (docs/CLI.md); 2^63, 2^64 - 1, 2^64 and beyond are bad input, never clamped.
  run generate theorem1 --T 5 --n 2 --d 3 --seed 9223372036854775807 --out "$d/top.json" --json
  expect_rc "--seed 2^63 - 1" 0
  json_check "--seed 2^63 - 1 kept exactly" 'j["seed"] == 9223372036854775807'
  local s
  for s in 9223372036854775808 18446744073709551615 18446744073709551616 99999999999999999999999 -1 0x10 ' 5' 1e3; do
    expect_bad_input "generate --seed '$s'" "$d/s.json" generate theorem1 --T 5 --n 2 --d 3 --seed "$s" --out "$d/s.json"
    stderr_mentions "generate --seed '$s'" "--seed: expected an integer in [0, 9223372036854775807]"
  done
  # "010" is ten (decimal), as 10 is.
  run generate theorem1 --T 5 --n 2 --d 3 --seed 010 --out "$d/s010.json" --json
  json_check "--seed 010 is decimal" 'j["seed"] == 10'
  "$BIN" generate dana24 --N 4 --S 2 --T 6 --seed 1 --out "$d/a.json" >/dev/null 2>&1
  expect_bad_input "generate dana24 --seed 2^64" "$d/s.json" generate dana24 --N 4 --S 2 --T 6 --seed 18446744073709551616 --out "$d/s.json"
  expect_bad_input "generate dana24 --seed 2^63" "$d/s.json" generate dana24 --N 4 --S 2 --T 6 --seed 9223372036854775808 --out "$d/s.json"
  expect_bad_input "generate dana24 --N 2^64" "$d/s.json" generate dana24 --N 18446744073709551616 --S 2 --T 6 --out "$d/s.json"
  expect_bad_input "generate dana24 --T 2^64 + 1" "$d/s.json" generate dana24 --N 4 --S 2 --T 18446744073709551617 --out "$d/s.json"
  expect_bad_input "construct dana24 --seed 2^64" "$d/c.json" construct dana24 "$d/a.json" --heads 2 --dh 2 --seed 18446744073709551616 --out "$d/c.json"
  expect_bad_input "construct dana24 --heads 2^64" "$d/c.json" construct dana24 "$d/a.json" --heads 18446744073709551616 --dh 2 --out "$d/c.json"
  expect_bad_input "compare --seed 2^63" "" compare "$d/a.json" --heads 2 --dh 2 --seed 9223372036854775808
  expect_bad_input "compare --dh 2^64" "" compare "$d/a.json" --heads 2 --dh 18446744073709551616
  expect_bad_input "claims search --seed 2^64" "" claims search mahdavi24/lemma-3 --budget 1 --seed 18446744073709551616
  expect_bad_input "claims search --budget 2^64 + 1" "" claims search mahdavi24/lemma-3 --budget 18446744073709551617
  expect_bad_input "claims run --seed 2^63" "" claims run mahdavi24/lemma-3 --seed 9223372036854775808
  expect_bad_input "assumptions --budget 2^64" "" assumptions "$d/top.json" --budget 18446744073709551616
  expect_bad_input "kruskal --trials 2^64" "" kruskal "$d/top.json" --sample 2 --trials 18446744073709551616
  expect_bad_input "--threads 2^64" "" --threads 18446744073709551616 rank "$d/top.json"
  expect_bad_input "--max-memory nan" "" rank "$d/top.json" --max-memory nan
  expect_bad_input "--max-seconds inf" "" rank "$d/top.json" --max-seconds inf

  # File names with a newline, an escape sequence: one stderr line, the name escaped.
  local nl="$d/two"$'\n'"lines.txt" esc="$d/red"$'\e'"[31m.txt"
  printf '1 2\n3 x\n' >"$nl"
  printf '1 2\n3 x\n' >"$esc"
  expect_bad_input "a file name with a newline" "" rank "$nl"
  stderr_mentions "a file name with a newline" 'two\nlines.txt: line 2, column 2'
  expect_bad_input "a file name with ESC" "" rank "$esc"
  stderr_mentions "a file name with ESC" 'red\x1b[31m.txt'
  if grep -q $'\e' "$ERR"; then fail "a file name with ESC: raw ESC byte on stderr"; else pass; fi
  expect_bad_input "a missing file name with ESC" "" rank "$d/none"$'\e'"[2J.npy"
  if grep -q $'\e' "$ERR"; then fail "a missing file name with ESC: raw ESC byte on stderr"; else pass; fi

  # File contents are never echoed: a text file holding a secret, given as a matrix, a data set, a
  # certificate, --data, or named by a certificate's data.file.
  printf 'SECRET_API_KEY=sk-live-0123456789abcdef\n' >"$d/secret.txt"
  printf '"SECRET_API_KEY=sk-live-0123456789abcdef\n' >"$d/secret.json"  # JSON's reader would quote the line
  "$BIN" generate theorem1 --T 6 --n 3 --d 4 --seed 5 --out "$d/t.json" >/dev/null 2>&1
  "$BIN" construct theorem1 "$d/t.json" --heads 3 --dh 3 --data-ref on --out "$d/ref.json" >/dev/null 2>&1
  alter_json "$d/ref.json" "$d/ref_secret.json" 'j["data"]["file"] = "secret.txt"'
  alter_json "$d/ref.json" "$d/ref_nul.json" 'j["data"]["file"] = "t.json\u0000.npz"'
  local what
  for what in "rank secret.txt" "rank secret.json" "assumptions secret.json" "construct secret.json" "verify secret.json" \
              "verify --data secret.json" "verify data.file=secret.txt"; do
    case $what in
      "rank secret.txt") run rank "$d/secret.txt" ;;
      "rank secret.json") run rank "$d/secret.json" ;;
      "assumptions secret.json") run assumptions "$d/secret.json" ;;
      "construct secret.json") run construct theorem1 "$d/secret.json" --heads 1 --dh 2 --out "$d/z.json" ;;
      "verify secret.json") run verify "$d/secret.json" ;;
      "verify --data secret.json") run verify "$d/ref.json" --data "$d/secret.json" ;;
      "verify data.file=secret.txt") run verify "$d/ref_secret.json" ;;
    esac
    expect_rc "$what" 2
    if grep -q -e SECRET -e sk-live "$ERR" "$OUT"; then fail "$what: the file's content was echoed: $(cat "$ERR")"; else pass; fi
    if [ "$(wc -l <"$ERR")" -eq 1 ]; then pass; else fail "$what: expected one stderr line: $(cat "$ERR")"; fi
  done
  run verify "$d/ref_secret.json"
  stderr_mentions "data.file=secret.txt names the file and a position" "secret.txt: line 1, column 1"
  # A data.file with a NUL byte would open t.json (its part before the NUL): refused, escaped.
  expect_bad_input "data.file with a NUL byte" "" verify "$d/ref_nul.json"
  stderr_mentions "data.file with a NUL byte" 'expected a file name without NUL bytes, got'

  # A zip bomb: the .npy header declares 13 x 4 x 7 float64, the member inflates to 512 MiB (a few
  # hundred KB on disk). Refused from the headers at once, within 300 MB of address space (inflating it
  # whole takes 512 MiB and seconds: exit 3, out of memory), and within 2 s of CPU (ulimit -t: a slower
  # refusal is killed by SIGXCPU and fails the exit status; CPU time, so a loaded machine does not matter).
  py bomb "$d/bomb.npz" "13,4,7" 536870912 || fail "bomb: $PY_WHY"
  (ulimit -v 300000 && ulimit -t 2 && exec "$BIN" rank "$d/bomb.npz") >"$OUT" 2>"$ERR"
  RC=$?
  expect_rc "zip bomb" 2
  if [ "$(wc -l <"$ERR")" -eq 1 ]; then pass; else fail "zip bomb: expected one stderr line: $(cat "$ERR")"; fi
  stderr_mentions "zip bomb" "member a.npy: byte "
  stderr_mentions "zip bomb" "expected the end of the file after 2912 data bytes"
}

# ---------------------------------------------------------------------------------------------------
# Main: append new sections here.
# ---------------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------------
# One engine behind every command: --threads leaves answers unchanged, long stages report progress on
# stderr (one line per stage when stderr is not a terminal) unless --quiet, and the checker's fast
# routes (multi-prime rank upper side on its threads) still reject a certificate that proves too little.
# ---------------------------------------------------------------------------------------------------
section_engine_route() {
  local d=$WORK/route
  mkdir -p "$d"
  # 40 vectors in dimension 20, entries in [-1000, 1000] from a fixed LCG: no 20-subset is dependent,
  # so the Kruskal enumeration runs to its budget (seconds: a stage long enough to report, on this
  # build machine; when it ran under 2.5 s the line is not required, as docs/CLI.md says).
  local x=12345 vals="" k
  for ((k = 0; k < 800; k++)); do
    x=$(((x * 1103515245 + 12345) % 2147483648))
    vals+="$((x % 2001 - 1000)),"
  done
  write_npy "$d/v.npy" '<i8' '40,20' "${vals%,}"
  run kruskal "$d/v.npy" --json
  expect_rc "kruskal (long enumeration)" 0
  local secs
  secs=$(sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$OUT")
  if awk "BEGIN { exit !(${secs:-0} >= 2.5) }"; then
    stderr_mentions "kruskal reports its enumeration" "kruskal: subset enumeration (budget used)"
    stderr_mentions "kruskal's stage line ends" "done in"
  else
    pass
    pass
  fi
  cp "$OUT" "$d/two.json"
  run --threads 1 --quiet kruskal "$d/v.npy" --json
  expect_rc "kruskal --threads 1 --quiet" 0
  if [ ! -s "$ERR" ]; then pass; else fail "--quiet: expected no stderr, got $(head -c 200 "$ERR")"; fi
  local lo up
  lo=$(sed -n 's/.*"kruskal_lower":\([0-9]*\).*/\1/p' "$d/two.json")
  up=$(sed -n 's/.*"kruskal_upper":\([0-9]*\).*/\1/p' "$d/two.json")
  json_check "kruskal: same bounds with 1 thread as with all" "j['kruskal_lower'] == ${lo:-0} and j['kruskal_upper'] == ${up:-0} and j['kruskal_upper'] == 20"

  # A rank-deficient integer matrix: 12 x 10 of rank 6 (rows 6.. are sums of two earlier rows), whose
  # upper side is the multi-prime argument.
  vals=""
  local i j
  local -a m
  for ((i = 0; i < 12; i++)); do
    for ((j = 0; j < 10; j++)); do
      if ((i < 6)); then x=$(((x * 1103515245 + 12345) % 2147483648)); m[i * 10 + j]=$((x % 200001 - 100000))
      else m[i * 10 + j]=$((m[(i - 6) * 10 + j] + m[(i - 5) % 6 * 10 + j])); fi
      vals+="${m[i * 10 + j]},"
    done
  done
  write_npy "$d/r.npy" '<i8' '12,10' "${vals%,}"
  run rank "$d/r.npy" --cert "$d/r.json" --json
  expect_rc "rank of the rank-6 matrix" 0
  json_check "rank 6 by the multi-prime upper side" 'j["rank"] == 6 and j["method"] == "minor-mod-p+multi-prime"'
  run --threads 1 verify "$d/r.json" --json
  expect_rc "verify multi-prime, 1 thread" 0
  run --threads 2 verify "$d/r.json" --json
  expect_rc "verify multi-prime, 2 threads" 0
  alter_json "$d/r.json" "$d/r_short.json" 'j["upper"]["primes"] = j["upper"]["primes"][:1]'
  run --threads 2 verify "$d/r_short.json" --json
  expect_rc "verify rejects too few primes" 1
  json_check "the reason is the Hadamard bound" '"Hadamard" in j["reason"]'
  alter_json "$d/r.json" "$d/r_low.json" 'j["rank_upper"] = 5; j["rank_lower"] = 5; j["rank"] = 5; j["lower"]["rows"] = j["lower"]["rows"][:5]; j["lower"]["cols"] = j["lower"]["cols"][:5]'
  run --threads 2 verify "$d/r_low.json" --json
  expect_rc "verify rejects a rank_upper below the rank" 1
}

# ---------------------------------------------------------------------------------------------------
# Exact numbers as written (lowest terms) and engine/checker agreement of `claims search`
# ---------------------------------------------------------------------------------------------------
section_agreement() {
  local d=$WORK/agreement s
  mkdir -p "$d"
  # Every generator writes p/q in lowest terms (ks's half-integer tokens once came out as "2/2", "0/2").
  for s in 1 2 3; do
    run generate ks --N 8 --n 3 --d 3 --V 10 --C 3 --seed $s --out "$d/k$s.json"
    expect_rc "generate ks seed $s" 0
    file_check "generate ks seed $s: lowest terms" "$d/k$s.json" 'lowest_terms(j)'
    run generate theorem1 --T 5 --n 2 --d 3 --seed $s --out "$d/t$s.json"
    expect_rc "generate theorem1 seed $s" 0
    file_check "generate theorem1 seed $s: lowest terms" "$d/t$s.json" 'lowest_terms(j)'
  done
  run claims list --json
  json_check "claims list: search modes" 'sum(1 for c in j["claims"] if c["search"]) >= 14 and all(isinstance(c["search"], bool) for c in j["claims"])'
  # The instances whose certificates the checker once refused: now every certificate is accepted, none
  # withheld, exit 0, and what --cert-dir holds verifies.
  for s in 1 2; do
    run claims search mahdavi24/lemma-3 --budget 30 --seed $s --cert-dir "$d/l3_$s" --json
    expect_rc "claims search lemma-3 seed $s" 0
    json_check "claims search lemma-3 seed $s: none refused" 'j["certificates_refused"] == 0 and all(r["certificate_verified"] for r in j["results"] if r["outcome"] != "undecided")'
  done
  run verify "$d/l3_1/mahdavi24_lemma-3-11.json"
  expect_rc "claims search lemma-3: the lattice instance's certificate verifies" 0
  run claims search dana24/theorem-2 --budget 7 --seed 1 --json
  expect_rc "claims search dana24/theorem-2 seed 1" 0
  json_check "claims search dana24/theorem-2 seed 1: none refused" 'j["certificates_refused"] == 0'
}

# ---------------------------------------------------------------------------------------------------
# The checker's portable mode (MEMCERT_CHECKER_PORTABLE=1: no SHA instructions, no AVX tiles, the mod-p
# elimination in 64-bit integers) against the default routes on every certificate the sections above
# wrote, honest and altered alike: the same exit status and the same verdict, reason and rule lists.
# Runs last (it reads what the others wrote).
# ---------------------------------------------------------------------------------------------------
section_portable_twins() {
  local d=$WORK/portable n=0 f a b
  mkdir -p "$d"
  while IFS= read -r f; do
    py file "$f" 'isinstance(j, dict) and isinstance(j.get("kind"), str)' || continue
    "$BIN" verify "$f" --json --max-seconds 60 >"$d/a.out" 2>/dev/null; a=$?
    MEMCERT_CHECKER_PORTABLE=1 "$BIN" verify "$f" --json --max-seconds 60 >"$d/b.out" 2>/dev/null; b=$?
    n=$((n + 1))
    if [ "$a" != "$b" ]; then fail "portable twin: $f: exit $a by default, $b portable"; continue; fi
    if py twins "$d/a.out" "$d/b.out"; then pass; else fail "portable twin: $f: the verdicts differ ($(head -c 300 "$d/a.out") vs $(head -c 300 "$d/b.out"))"; fi
  done < <(find "$WORK" -name '*.json' -size -4M -newer "$BIN" 2>/dev/null | sort)
  if [ "$n" -ge 50 ]; then pass; else fail "portable twin: only $n certificates found to compare"; fi
}

# ---------------------------------------------------------------------------------------------------
# One front: the label contract, messages naming the wrong kind of file and close option names, decimals
# beside exact fractions, plain summaries, and budgets that reach every check a command runs.
# ---------------------------------------------------------------------------------------------------
# json_to_npz IN OUT LABEL_DTYPE: the JSON data set IN as an .npz OUT (float64 contexts and queries, the
# exact values; labels, or class_labels, in LABEL_DTYPE: i8 or f8), without numpy.
json_to_npz() {
  python3 - "$@" <<'PY'
import json, struct, sys, zipfile
from fractions import Fraction
src, dst, ldt = sys.argv[1:4]
j = json.load(open(src))
def npy(descr, shape, vals):
    st = "(%d,)" % shape[0] if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, st)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    f = {"<f8": "d", "<i8": "q"}[descr]
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + b"".join(struct.pack("<" + f, v) for v in vals)
flat = lambda x: [v for r in x for v in (flat(r) if isinstance(r, list) else [r])]
num = lambda v: float(Fraction(v))
T, n, d = len(j["contexts"]), len(j["contexts"][0]), len(j["queries"][0])
with zipfile.ZipFile(dst, "w") as z:
    z.writestr("contexts.npy", npy("<f8", (T, n, d), [num(v) for v in flat(j["contexts"])]))
    z.writestr("queries.npy", npy("<f8", (T, d), [num(v) for v in flat(j["queries"])]))
    key = "labels" if "labels" in j else "class_labels"
    vals = [Fraction(v) for v in flat(j[key])]
    vals = [int(v) for v in vals] if ldt == "i8" else [float(v) for v in vals]
    z.writestr(key + ".npy", npy("<" + ldt, (len(vals),), vals))
PY
}

section_front() {
  local d=$WORK/front
  mkdir -p "$d"
  # --- A. labels: REAL under "labels" whatever the dtype (a note says so), ignored where not used -----
  run generate theorem1 --T 3 --n 3 --d 4 --seed 2 --out "$d/t3.json"
  expect_rc "front: generate" 0
  alter_json "$d/t3.json" "$d/t3int.json" 'j["labels"] = [["0"], ["2"], ["1"]]'
  json_to_npz "$d/t3int.json" "$d/int.npz" i8
  json_to_npz "$d/t3int.json" "$d/flt.npz" f8
  run construct theorem1 "$d/int.npz" --heads 2 --dh 3 --out "$d/int.cert.json" --json
  expect_rc "integer-dtype labels: construct" 0
  json_check "integer-dtype labels are REAL labels, with a note" \
    '"max_label_error" in j and "min_class_margin" not in j and any("read as REAL labels" in x for x in j["notes"])'
  file_check "integer-dtype labels: the certificate holds real labels" "$d/int.cert.json" \
    'j["data"]["labels"] == [["0"], ["2"], ["1"]] and "class_labels" not in j["data"]'
  run construct theorem1 "$d/int.npz" --heads 2 --dh 3 --out "$d/int2.cert.json"
  check "integer-dtype labels: the human note line" grep -q '^note: labels: stored with an integer dtype and read as REAL labels' "$OUT"
  run construct theorem1 "$d/flt.npz" --heads 2 --dh 3 --out "$d/flt.cert.json" --json
  json_check "float labels: no note" '"notes" not in j and "max_label_error" in j'
  run verify "$d/int.cert.json" --data "$d/int.npz" --json
  expect_rc "verify --data with integer-dtype labels" 0
  json_check "verify --data: the same note" 'j["valid"] is True and any("read as REAL labels" in x for x in j["notes"])'
  # Commands that do not use labels ignore them: both keys, or labels of the wrong length, stop nothing.
  alter_json "$d/t3.json" "$d/both.json" 'j["class_labels"] = [0, 1, 0]'
  alter_json "$d/t3.json" "$d/short.json" 'j["labels"] = [["1"]]'
  for f in both short; do
    run assumptions "$d/$f.json" --json
    json_check "assumptions ignores labels ($f)" 'j["T"] == 3 and j["assumption2"]["holds"] is True'
  done
  expect_bad_input "construct still refuses both label keys" "$d/x.json" construct theorem1 "$d/both.json" --heads 2 --dh 3 --out "$d/x.json"

  # --- B. the wrong kind of file, named with what to do; close option names --------------------------
  write_npy "$d/E.npy" '<f8' '2,2' '1,0,0,1'
  expect_bad_input "assumptions on a .npy" "" assumptions "$d/E.npy"
  stderr_mentions "assumptions on a .npy" "E.npy: a .npy array where a data set (.json or .npz with contexts, queries) was expected"
  stderr_mentions "assumptions on a .npy: what to do" "numpy.savez(FILE.npz, contexts=..., queries=...)"
  python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr("archive/data.pkl", b"\x80\x02}q\x00."); z.writestr("archive/version", "3\n"); z.close()' "$d/model.pt"
  expect_bad_input "assumptions on a PyTorch checkpoint" "" assumptions "$d/model.pt"
  stderr_mentions "assumptions on a PyTorch checkpoint" "model.pt: a PyTorch checkpoint where a data set"
  stderr_mentions "assumptions on a PyTorch checkpoint: what to do" "memcert certify"
  expect_bad_input "construct theorem1 on a PyTorch checkpoint" "$d/x.json" construct theorem1 "$d/model.pt" --heads 2 --dh 3 --out "$d/x.json"
  stderr_mentions "construct theorem1 on a PyTorch checkpoint" "a PyTorch checkpoint where a data set"
  write_npz "$d/emb.npz" stored 'emb=<f8:2,2:1,0,0,1'
  expect_bad_input "verify on an .npz" "" verify "$d/emb.npz"
  stderr_mentions "verify on an .npz" "emb.npz: an .npz archive, not a certificate (JSON)"
  expect_bad_input "verify on a PyTorch checkpoint" "" verify "$d/model.pt"
  stderr_mentions "verify on a PyTorch checkpoint" "a PyTorch checkpoint, not a certificate (JSON)"
  expect_bad_input "rank on a data set" "" rank "$d/t3.json"
  stderr_mentions "rank on a data set" "a data set (contexts, queries) where a matrix"
  expect_bad_input "rank on a certificate" "" rank "$d/int.cert.json"
  stderr_mentions "rank on a certificate" "a certificate where a matrix"
  cp "$d/emb.npz" "$d/emb.npy"
  expect_bad_input "rank on an .npz named .npy" "" rank "$d/emb.npy"
  stderr_mentions "rank on an .npz named .npy" "an .npz archive named '.npy'"
  write_npz "$d/nokey.npz" stored 'contexts=<f8:2,2,2:1,0,0,1,1,0,0,1' 'E=<f8:2,2:1,0,0,1'
  expect_bad_input "an .npz lacking queries" "" assumptions "$d/nokey.npz"
  stderr_mentions "an .npz lacking queries lists its keys" "expected an array named \"queries\" of shape (T, d); it has 'E', 'contexts'"
  expect_bad_input "construct theorem1: an .npz lacking queries" "$d/x.json" construct theorem1 "$d/nokey.npz" --heads 2 --dh 3 --out "$d/x.json"
  stderr_mentions "construct theorem1: an .npz lacking queries lists its keys" "it has 'E', 'contexts'"
  expect_bad_input "option: --weight-out" "$d/x.json" construct theorem1 "$d/t3.json" --heads 2 --dh 3 --out "$d/x.json" --weight-out "$d/w.npz"
  stderr_mentions "option: --weight-out" "unknown option '--weight-out' for 'construct theorem1'; did you mean '--weights-out'?"
  expect_bad_input "option: --head" "$d/x.json" construct theorem1 "$d/t3.json" --head 2 --dh 3 --out "$d/x.json"
  stderr_mentions "option: --head" "did you mean '--heads'?"
  expect_bad_input "option: --max-memroy" "" rank "$d/E.npy" --max-memroy=10
  stderr_mentions "option: --max-memroy (inherited option)" "did you mean '--max-memory'?"

  # --- C. human lines: a decimal beside each exact fraction; plain summaries ---------------------------
  run assumptions "$d/t3.json"
  check "assumptions: r^2 with its decimal" grep -Eq 'r\^2 = -?[0-9]+/[0-9]+ \(~[0-9.e+-]+\)' "$OUT"
  run assumptions "$d/t3.json" --json
  json_check "assumptions JSON: r2 stays exact" '"~" not in j["separation"]["r2"] and "/" in j["separation"]["r2"]'
  # T = 9 > T* = 3: the summary says what the theorem certified and what the generic weights added.
  run generate theorem1 --T 9 --n 3 --d 4 --seed 4 --out "$d/t9.json"
  run construct theorem1 "$d/t9.json" --heads 2 --dh 2 --out "$d/t9.cert.json"
  expect_rc "T > T*: exit 1 (not all memorized)" 1
  check "construct theorem1: c and eps with their decimals" grep -Eq 'c = [0-9]+/[0-9]+ \(~[0-9.e+-]+\) \(proof [0-9]+/[0-9]+ \(~[0-9.e+-]+\).*eps = [0-9]+/[0-9]+ \(~0\.999\)' "$OUT"
  check "T > T*: what the theorem certified" grep -q '^in short: the theorem certifies the first T\* = 3 examples (0..2); the generic weights' "$OUT"
  run construct theorem1 "$d/t9.json" --heads 2 --dh 2 --beyond off --out "$d/t9off.cert.json"
  check "T > T*, --beyond off: said" grep -q '^in short: the theorem certifies the first T\* = 3 examples (0..2); generic weights were not tried (--beyond off), so the other 6 examples are not certified' "$OUT"
  # Assumption 1 undecided: why (C(T, k) subsets), and what the construction relies on instead.
  run generate theorem1 --T 40 --n 6 --d 8 --seed 3 --out "$d/t40.json"
  run assumptions "$d/t40.json" --budget 1
  expect_rc "assumptions: Assumption 1 undecided" 3
  check "Assumption 1 undecided: why" grep -q '^  why undecided: Kruskal rank >= 6 means every 6-subset of the 40 queries (vectors in 8 dimensions) is independent: C(40, 6) = 3.84e+06 subsets' "$OUT"
  check "Assumption 1 undecided: what construct relies on" grep -q 'grouping-facts' "$OUT"

  # --- D. budgets ----------------------------------------------------------------------------------------
  # Default --max-memory: 75% of physical memory (MemTotal), except verify's 4096 MB.
  local mem_mb
  mem_mb=$(awk '/^MemTotal:/ { printf "%d", int($2 * 0.75 / 1024) }' /proc/meminfo)
  run rank --help
  check "rank --help: default memory budget 75% of MemTotal ($mem_mb MB)" grep -q "75% of physical memory: $mem_mb)" "$OUT"
  run verify --help
  check "verify --help: default memory budget 4096" grep -q "(default 4096)" "$OUT"
  # 64 T (n + 1) d bytes = 468750 MB: over the default, and the option's value that would suffice.
  expect_bad_input "generate over the default memory budget" "$d/huge.json" generate theorem1 --T 1000000 --n 127 --d 60 --out "$d/huge.json"
  stderr_mentions "generate: the default budget is 75% of MemTotal" "over the --max-memory budget of $mem_mb MB"
  stderr_mentions "generate: the value that would suffice" "(--max-memory 468800 would suffice)"
  # generate ks streams its .npz: 10,240,000 coordinates (78 MB of float64) within --max-memory 100 (the
  # archive is never assembled in memory), with numpy's view of it.
  run generate ks --N 20000 --n 8 --d 64 --V 300 --C 5 --seed 3 --max-memory 100 --out "$d/big.npz"
  expect_rc "generate ks: a .npz larger than --max-memory, streamed" 0
  check "generate ks streamed: 20000 x 8 x 64 float64 and 20000 labels" python3 -c '
import sys, zipfile, struct
z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
assert sorted(z.namelist()) == ["labels.npy", "sequences.npy"]
h = z.open("sequences.npy").read(128); assert b"(20000, 8, 64)" in h
assert z.getinfo("sequences.npy").file_size == 128 + 8 * 20000 * 8 * 64' "$d/big.npz"
  rm -f "$d/big.npz"
  # The run's budget reaches the checks a command runs inside (the checker's own 4 GiB default never does).
  run generate ks --N 64 --n 4 --d 3 --C 2 --seed 1 --out "$d/ks.json"
  run construct ks "$d/ks.json" --check --max-memory 1 --out "$d/ks.cert.json"
  expect_rc "construct ks --check within --max-memory 1: the check is over budget" 3
  stderr_mentions "construct ks --check: over budget, with what suffices" "(--max-memory 100 would suffice)"
  check "construct ks --check over budget: nothing written" test ! -e "$d/ks.cert.json"
  run construct ks "$d/ks.json" --check --max-memory 100 --out "$d/ks.cert.json"
  expect_rc "construct ks --check at the --max-memory said to suffice" 0
  check "construct ks: r^2 and delta^2 with their decimals" grep -Eq 'r\^2 = [0-9]+/[0-9]+ \(~[0-9.e+-]+\), delta\^2 = [0-9]+/[0-9]+ \(~' "$OUT"
  rm -f "$d/ks.cert.json"
  run generate dana24 --N 8 --S 3 --T 10 --out "$d/a24.json"
  run construct dana24 "$d/a24.json" --heads 2 --dh 2 --out "$d/a24.cert.json"
  check "construct dana24: the margin with its decimal" grep -Eq 'smallest certified margin [0-9]+/[0-9]+ \(~[0-9.e+-]+\)' "$OUT"
  run construct ks "$d/ks.json" --check --max-memory 0 --out "$d/ks.cert.json"
  expect_rc "construct ks --check --max-memory 0" 0
  run verify "$d/int.cert.json" --max-memory 0.01
  expect_rc "verify over a tiny budget" 3
  check "verify over budget: what suffices" grep -q 'would suffice)' "$OUT"
  local enough
  enough=$(grep -o -- '--max-memory [0-9]* would suffice' "$OUT" | head -1 | cut -d' ' -f2)
  run verify "$d/int.cert.json" --max-memory "${enough:-0.01}"
  expect_rc "verify at the --max-memory said to suffice ($enough)" 0
  # An output that is a pipe or device (/dev/null) is written in place, never replaced by a regular file;
  # one that is a directory is bad input. A FIFO stands in for /dev/null (a failure must not break the
  # machine's /dev/null).
  mkfifo "$d/out.fifo"
  (timeout 60 cat "$d/out.fifo" > "$d/fifo.got") &
  local reader=$!
  run generate theorem1 --T 3 --n 3 --d 4 --seed 2 --out "$d/out.fifo"
  expect_rc "generate --out a pipe" 0
  wait "$reader"
  check "an output pipe stays a pipe" test -p "$d/out.fifo"
  check "the pipe's reader got the data set" cmp -s "$d/fifo.got" "$d/t3.json"
  check "no temporary file left beside the pipe" test -z "$(ls "$d" | grep 'out.fifo.tmp')"
  mkdir -p "$d/outdir"
  expect_bad_input "--out a directory" "$d/outdir/x" generate theorem1 --T 3 --n 3 --d 4 --seed 2 --out "$d/outdir"
  stderr_mentions "--out a directory: named" "got a directory"
}

# ---------------------------------------------------------------------------------------------------
# memcert certify (trained models; the PyTorch comparisons are tests/model/certify_torch.py)
# ---------------------------------------------------------------------------------------------------
section_certify() {
  local d=$WORK/certify
  mkdir -p "$d"
  run generate theorem1 --T 13 --n 4 --d 6 --out "$d/data.npz"
  expect_rc "certify: generate" 0
  run construct theorem1 "$d/data.npz" --heads 4 --dh 4 --out "$d/t1.json" --weights-out "$d/w.npz"
  expect_rc "certify: construct with --weights-out" 0
  # memcert's own weights certified as mha on the same data: every label within the tolerance.
  run certify "$d/w.npz" "$d/data.npz" --arch mha --tolerance 1e-6 --json --margins-out "$d/m.npz" --out "$d/c.json"
  expect_rc "certify weights-out as mha" 0
  json_keys "certify" arch task T certified_correct certified_wrong undecided wrong undecided_examples float32_disagreements max_error decided_by heads seconds
  json_check "certify values" 'j["T"] == 13 and j["certified_correct"] == 13 and j["wrong"] == [] and j["task"] == "regression" and j["heads"] == 4'
  file_check "certify certificate" "$d/c.json" 'j["kind"] == "model" and j["version"] == 1 and j["arch"] == "mha" and j["T"] == 13 and j["wrong"] == [] and j["undecided"] == [] and j["data"]["digest"].startswith("sha256:") and j["tolerance"] == "1e-6"'
  check "certify margins-out written" test -s "$d/m.npz"
  # A tolerance nothing meets: every example certified wrong (exit 1).
  run certify "$d/w.npz" "$d/data.npz" --arch mha --tolerance 0 --json
  expect_rc "certify tolerance 0" 1
  # Bad input: one line, nothing written.
  expect_bad_input "certify unknown arch" "$d/x.json" certify "$d/w.npz" "$d/data.npz" --arch transformer --out "$d/x.json"
  expect_bad_input "certify regression without --tolerance" "$d/x.json" certify "$d/w.npz" "$d/data.npz" --arch mha --out "$d/x.json"
  stderr_mentions "certify without --tolerance" "--tolerance"
  expect_bad_input "certify --heads other than H" "$d/x.json" certify "$d/w.npz" "$d/data.npz" --arch mha --heads 3 --tolerance 1e-6 --out "$d/x.json"
  expect_bad_input "certify missing model" "$d/x.json" certify "$d/none.pt" "$d/data.npz" --arch mha --tolerance 1e-6 --out "$d/x.json"
  expect_bad_input "certify data as model" "$d/x.json" certify "$d/data.npz" "$d/data.npz" --arch mha --tolerance 1e-6 --out "$d/x.json"
  stderr_mentions "certify data as model" "in_proj_weight"
  expect_bad_input "certify mahdavi24 on attention data" "$d/x.json" certify "$d/w.npz" "$d/data.npz" --arch mahdavi24-baseline --out "$d/x.json"
  expect_bad_input "certify bad --tolerance" "$d/x.json" certify "$d/w.npz" "$d/data.npz" --arch mha --tolerance abc --out "$d/x.json"
  # An output naming an input is bad input before anything runs, and the input stays as it was.
  cp "$d/data.npz" "$d/data_copy.npz"
  run certify "$d/w.npz" "$d/data_copy.npz" --arch mha --tolerance 1e-6 --margins-out "$d/data_copy.npz"
  expect_rc "certify --margins-out naming the data file" 2
  check "certify: the data file is left as it was" cmp -s "$d/data.npz" "$d/data_copy.npz"
}

# ---------------------------------------------------------------------------------------------------
# Model and data files read without materializing what will be refused (docs/MODELS.md): a model
# file's keys, dtypes and shapes are checked against the architecture before any tensor's values are
# read, and a data file's members that are not needed are never inflated.
# ---------------------------------------------------------------------------------------------------
# run_peak KB_FILE COMMAND...: run memcert as `run` does, its peak resident set (KB) into KB_FILE.
run_peak() {
  local kb=$1
  shift
  /usr/bin/time -f "%M" -o "$kb" "$BIN" "$@" >"$OUT" 2>"$ERR"
  RC=$?
}
# expect_peak_below DESCRIPTION KB_FILE LIMIT_KB
expect_peak_below() {
  local peak
  peak=$(tail -n 1 "$2")
  if [ "$peak" -lt "$3" ] 2>/dev/null; then pass; else fail "$1: peak resident set $peak KB, expected below $3 KB"; fi
}

section_model_files() {
  local d=$WORK/model_files
  mkdir -p "$d"
  if [ ! -x /usr/bin/time ]; then fail "model files: /usr/bin/time (GNU time) is needed"; return; fi
  # A tiny mahdavi24-baseline model (d_model = d_in = 2, one head of width 1, two classes) and its data.
  write_npz "$d/m.npz" stored 'embedding.weight=<f8:2,2:1,0,0,1' 'embedding.bias=<f8:2:0,0' 'pos_enc.pe=<f8:2,2:0,0,0,0' \
    'attention.Wq=<f8:1,2,1:1,0' 'attention.Wk=<f8:1,2,1:1,0' 'attention.Wv=<f8:1,2,1:1,1' 'attention.Wo=<f8:1,2:1,-1' \
    'decoder.weight=<f8:2,2:1,0,0,1' 'decoder.bias=<f8:2:0,0'
  write_npz "$d/x.npz" stored 'X=<f8:2,2,2:1,0,0,1,0,1,1,0' 'y=<i8:2:0,1'
  run certify "$d/m.npz" "$d/x.npz" --arch mahdavi24-baseline --out "$d/m.cert.json"
  if [ "$RC" -le 1 ] || [ "$RC" -eq 3 ]; then pass; else fail "model files: certify the tiny model: exit $RC ($(cat "$ERR"))"; fi

  # A 489-byte .pt whose one tensor, an unexpected key, is a stride-0 view of 2^28 float32 over one stored
  # element: refused by its key before the view is materialized (it would take 2 GiB), within 300 MB of
  # address space and at once (3 s of CPU, ulimit -t: a slower refusal is killed and fails the exit status).
  py pt "$d/extra.pt" extra 268435456 || fail "pt: $PY_WHY"
  (ulimit -v 300000 && ulimit -t 3 && exec "$BIN" certify "$d/extra.pt" "$d/x.npz" --arch mahdavi24-baseline) >"$OUT" 2>"$ERR"
  RC=$?
  expect_rc "model files: .pt with a 2^28-element view under an unexpected key" 2
  if [ "$(wc -l <"$ERR")" -eq 1 ]; then pass; else fail "model files: extra key: expected one stderr line: $(cat "$ERR")"; fi
  stderr_mentions "model files: extra key" "extra.pt: embedding.weight: missing"
  # The same view under an expected key with a shape the architecture refuses (1-D, not d_model x d_in).
  py pt "$d/shape.pt" embedding.weight 268435456 || fail "pt: $PY_WHY"
  (ulimit -v 300000 && exec "$BIN" certify "$d/shape.pt" "$d/x.npz" --arch mahdavi24-baseline) >"$OUT" 2>"$ERR"
  RC=$?
  expect_rc "model files: .pt with a 2^28-element view of the wrong rank" 2
  stderr_mentions "model files: wrong rank" "shape.pt: embedding.weight: expected a float tensor of shape (*, *) (d_model, d_in), got shape (268435456,)"
  # verify reads the model the certificate names the same way: the unexpected key is refused unread.
  alter_json "$d/m.cert.json" "$d/extra.cert.json" 'j["model"]["file"] = "extra.pt"'
  (ulimit -v 300000 && exec "$BIN" verify "$d/extra.cert.json") >"$OUT" 2>"$ERR"
  RC=$?
  expect_rc "model files: verify of a certificate naming the .pt" 2
  stderr_mentions "model files: verify names the key" "extra.pt: extra: unexpected tensor for --arch mahdavi24-baseline"

  # Data: a deflated member no architecture reads (2^25 float64 zeros, 256 MiB inflated, 1 MB on disk)
  # is skipped without being inflated: mahdavi24-baseline reads X and y only.
  cp "$d/x.npz" "$d/xj.npz"
  py npzadd "$d/xj.npz" junk 33554432 || fail "npzadd: $PY_WHY"
  run_peak "$d/kb" certify "$d/m.npz" "$d/xj.npz" --arch mahdavi24-baseline --out "$d/mj.cert.json"
  if [ "$RC" -le 1 ] || [ "$RC" -eq 3 ]; then pass; else fail "model files: data with an unread member: exit $RC ($(cat "$ERR"))"; fi
  expect_peak_below "model files: the unread data member is not inflated" "$d/kb" 150000
  run_peak "$d/kb" verify "$d/mj.cert.json"
  expect_rc "model files: verify with an unread data member" 0
  expect_peak_below "model files: verify does not inflate the unread data member" "$d/kb" 150000
  # mha's attention data: members other than contexts, queries and the labels are skipped unread too.
  run generate theorem1 --T 13 --n 4 --d 6 --out "$d/t.npz"
  run construct theorem1 "$d/t.npz" --heads 4 --dh 4 --out "$d/t1.json" --weights-out "$d/tw.npz"
  expect_rc "model files: construct for mha" 0
  cp "$d/t.npz" "$d/tj.npz"
  py npzadd "$d/tj.npz" junk 33554432 || fail "npzadd: $PY_WHY"
  run_peak "$d/kb" certify "$d/tw.npz" "$d/tj.npz" --arch mha --tolerance 1e-6 --out "$d/tj.cert.json"
  expect_rc "model files: mha data with an unread member" 0
  expect_peak_below "model files: the unread attention-data member is not inflated" "$d/kb" 150000
  # dana24-aot's data file holds sequences and next only: another member is refused by its name, unread.
  write_npz "$d/a.npz" stored 'word_emb.weight=<f8:2,2:1,0,0,1' 'pos_emb.weight=<f8:2,2:0,0,0,0' 'unemb.weight=<f8:2,2:1,0,0,1'
  write_npz "$d/s.npz" stored 'sequences=<i8:1,2:0,1' 'next=<i8:1:1'
  run certify "$d/a.npz" "$d/s.npz" --arch dana24-aot
  if [ "$RC" -le 1 ] || [ "$RC" -eq 3 ]; then pass; else fail "model files: certify the tiny dana24-aot model: exit $RC ($(cat "$ERR"))"; fi
  cp "$d/s.npz" "$d/sj.npz"
  py npzadd "$d/sj.npz" junk 33554432 || fail "npzadd: $PY_WHY"
  run_peak "$d/kb" certify "$d/a.npz" "$d/sj.npz" --arch dana24-aot
  expect_rc "model files: dana24-aot data with another member" 2
  stderr_mentions "model files: dana24-aot data with another member" "sj.npz: junk: expected only the members sequences (T, S) and next (T,)"
  expect_peak_below "model files: the refused data member is not inflated" "$d/kb" 150000
  # A member whose .npy header declares 2^28 elements in a member of a few bytes: refused unread.
  write_npz "$d/sl.npz" deflated 'sequences=<i8:16777216,16:' 'next=<i8:1:1'
  run_peak "$d/kb" certify "$d/a.npz" "$d/sl.npz" --arch dana24-aot
  expect_rc "model files: a member declaring more than it holds" 2
  stderr_mentions "model files: a member declaring more than it holds" "truncated data (expected 2147483648 bytes"
  expect_peak_below "model files: the short member is not read" "$d/kb" 150000
}

# ks on the checker's threads: the same certificates (honest and mutated, embedded and by reference)
# give the same verify --json output on 1 and 2 threads (all but "seconds"). N = 2600 distinct contexts
# are cut into ranges of points on 2 threads, so the verdicts cross the ranges' ends.
# ---------------------------------------------------------------------------------------------------
section_ks_threads() {
  local d=$WORK/ks_threads c t
  mkdir -p "$d"
  run generate ks --N 2600 --n 4 --d 3 --V 40 --C 3 --seed 5 --out "$d/s.npz"
  expect_rc "ks threads: generate ks" 0
  run construct ks "$d/s.npz" --data-ref on --out "$d/ref.json"
  expect_rc "ks threads: construct ks --data-ref on" 0
  run construct ks "$d/s.npz" --data-ref off --out "$d/emb.json"
  expect_rc "ks threads: construct ks --data-ref off" 0
  alter_json "$d/emb.json" "$d/lab.json" 'j["labels"][1300] = (j["labels"][1300] + 1) % 3; j["labels"][2599] = (j["labels"][2599] + 2) % 3'
  alter_json "$d/emb.json" "$d/last.json" 'j["labels"][2599] = (j["labels"][2599] + 1) % 3'
  alter_json "$d/emb.json" "$d/swap.json" 's = j["sequences"]; s[0], s[2599] = s[2599], s[0]'
  alter_json "$d/ref.json" "$d/dig.json" 'j["data"]["digest"] = "sha256:" + "0" * 64'
  alter_json "$d/emb.json" "$d/sep.json" 'j["separation"]["delta2"] = "1/1000"'
  for c in ref emb lab last swap dig sep; do
    for t in 1 2; do
      run --threads $t verify "$d/$c.json" --json
      sed 's/"seconds":[0-9.e+-]*,\{0,1\}//' "$OUT" > "$d/$c.t$t.out"
      echo "rc=$RC" >> "$d/$c.t$t.out"
    done
    check "ks threads: verify $c.json, same output on 1 and 2 threads" cmp -s "$d/$c.t1.out" "$d/$c.t2.out"
  done
  check "ks threads: the honest certificates are VALID" grep -q '"valid":true' "$d/ref.t2.out" "$d/emb.t2.out"
  check "ks threads: the first wrong label in order is named" grep -q 'prediction for sequence 1300 ' "$d/lab.t2.out"
  check "ks threads: the last sequence's wrong label is named" grep -q 'prediction for sequence 2599 ' "$d/last.t2.out"
  for c in lab last dig sep; do
    check "ks threads: $c.json is rejected" grep -q 'rc=1' "$d/$c.t2.out"
  done
}

# ---------------------------------------------------------------------------------------------------
# ks25 data in two layouts: the tokens spelled out (sequences (N, n, d)) and the compact token_ids (N, n)
# + embedding (V, d). The same seed gives the same data set in both: equal digests, and a certificate made
# from one verifies against the other. Hostile compact files are one-line bad input everywhere they are read.
# ---------------------------------------------------------------------------------------------------
section_ks_layouts() {
  local d=$WORK/ks_layouts c
  mkdir -p "$d"
  run generate ks25 --N 300 --n 4 --d 3 --V 20 --C 3 --seed 7 --out "$d/s.npz"
  expect_rc "layouts: generate ks (default layout)" 0
  run generate ks25 --N 300 --n 4 --d 3 --V 20 --C 3 --seed 7 --layout sequences --out "$d/s2.npz"
  expect_rc "layouts: generate ks --layout sequences" 0
  check "layouts: --layout sequences is the default, byte for byte" cmp -s "$d/s.npz" "$d/s2.npz"
  run generate ks25 --N 300 --n 4 --d 3 --V 20 --C 3 --seed 7 --out "$d/s.json"
  run generate ks25 --N 300 --n 4 --d 3 --V 20 --C 3 --seed 7 --layout tokens --out "$d/t.npz" --json
  expect_rc "layouts: generate ks --layout tokens" 0
  json_check "layouts: --layout tokens said" 'j["layout"] == "tokens" and j["N"] == 300 and j["out"].endswith("t.npz")'
  check "layouts: the compact file is smaller" test "$(stat -c %s "$d/t.npz")" -lt "$(stat -c %s "$d/s.npz")"
  for c in s t; do
    run construct ks25 "$d/$c.npz" --data-ref on --out "$d/ref_$c.json" --json
    expect_rc "layouts: construct ks --data-ref on from $c.npz" 0
    json_check "layouts: construct ks from $c.npz memorizes" 'j["data_ref"] is True and j["memorized"] is True and j["N"] == 300'
    run construct ks25 "$d/$c.npz" --data-ref off --out "$d/emb_$c.json"
    expect_rc "layouts: construct ks --data-ref off from $c.npz" 0
  done
  file_check "layouts: the two data digests are equal, and equal the JSON file's (computed independently)" "$d/ref_t.json" \
    'j["data"]["digest"] == __import__("json").load(open("'"$d"'/ref_s.json"))["data"]["digest"] == ks_digest("'"$d"'/s.json")'
  file_check "layouts: the same network from either layout" "$d/emb_t.json" \
    'j == __import__("json").load(open("'"$d"'/emb_s.json"))'
  run verify "$d/ref_t.json"
  expect_rc "layouts: verify, data by reference to the compact file" 0
  for c in s t; do
    local o=t
    [ "$c" = t ] && o=s
    run verify "$d/ref_$c.json" --data "$d/$o.npz"
    expect_rc "layouts: a by-reference certificate from $c.npz verifies with --data $o.npz" 0
    run verify "$d/emb_$c.json" --data "$d/$o.npz"
    expect_rc "layouts: an embedded certificate from $c.npz verifies with --data $o.npz" 0
  done
  run verify "$d/emb_t.json" --data "$d/s.json"
  expect_rc "layouts: an embedded certificate from t.npz verifies with --data s.json" 0
  # Another seed's compact data: rejected (digest; embedded: the values differ).
  "$BIN" generate ks25 --N 300 --n 4 --d 3 --V 20 --C 3 --seed 8 --layout tokens --out "$d/other.npz" >/dev/null 2>&1
  run verify "$d/ref_s.json" --data "$d/other.npz"
  expect_rc "layouts: another seed's compact data is rejected" 1
  # Bad options.
  expect_bad_input "layouts: --layout tokens to a .json" "$d/x.json" generate ks25 --N 5 --n 2 --d 2 --layout tokens --out "$d/x.json"
  stderr_mentions "layouts: --layout tokens to a .json" "expected a file name ending in .npz for --layout tokens"
  expect_bad_input "layouts: --layout sideways" "$d/x.npz" generate ks25 --N 5 --n 2 --d 2 --layout sideways --out "$d/x.npz"
  # Hostile compact files: construct, verify --data (both certificate kinds) and export name file, array
  # and position on one line, exit 2, nothing written.
  local emb='embedding=<f8:3,2:1,0,0,1,0.5,0.5' lab='labels=<i8:2:0,1'
  write_npz "$d/h_range.npz" stored 'token_ids=<u2:2,3:0,1,2,2,3,0' "$emb" "$lab"
  write_npz "$d/h_neg.npz" deflated 'token_ids=|i1:2,3:0,1,2,-1,1,0' "$emb" "$lab"
  write_npz "$d/h_float.npz" stored 'token_ids=<f8:2,3:0,1,2,2,1,0' "$emb" "$lab"
  write_npz "$d/h_shape.npz" stored 'token_ids=<i4:6:0,1,2,2,1,0' "$emb" "$lab"
  write_npz "$d/h_labels.npz" stored 'token_ids=<i4:2,3:0,1,2,2,1,0' "$emb" 'labels=<i8:3:0,1,1'
  write_npz "$d/h_both.npz" stored 'token_ids=<i4:2,3:0,1,2,2,1,0' "$emb" 'sequences=<f8:2,3,2:1,0,0,1,1,0,0,1,1,0,0,1' "$lab"
  write_npz "$d/h_noemb.npz" stored 'token_ids=<i4:2,3:0,1,2,2,1,0' "$lab"
  local h want
  for h in "range:token_ids[1][1]: expected a token index in [0, 3)" "neg:token_ids[1][0]: expected a token index in [0, 3)" \
           "float:token_ids: expected token indices of an integer dtype" "shape:token_ids: expected a 2-d array (N, n), got shape (6,)" \
           "labels:labels: expected a non-empty array of shape (N,) = (2,), got (3,)" \
           'both:token_ids: expected either "sequences" (N, n, d) or "token_ids"' \
           'noemb:expected an array named "embedding" of shape (V, d)'; do
    c=${h%%:*}
    want=${h#*:}
    expect_bad_input "layouts: construct ks from h_$c.npz" "$d/x.json" construct ks25 "$d/h_$c.npz" --out "$d/x.json"
    stderr_mentions "layouts: construct ks from h_$c.npz names file and position" "h_$c.npz: $want"
    expect_bad_input "layouts: verify --data h_$c.npz (by reference)" "" verify "$d/ref_t.json" --data "$d/h_$c.npz"
    stderr_mentions "layouts: verify --data h_$c.npz (by reference)" "h_$c.npz: $want"
    expect_bad_input "layouts: verify --data h_$c.npz (embedded)" "" verify "$d/emb_t.json" --data "$d/h_$c.npz"
    stderr_mentions "layouts: verify --data h_$c.npz (embedded)" "h_$c.npz: $want"
  done
  # The certificate's own referenced file replaced by a hostile one: bad input, not a verdict.
  cp "$d/t.npz" "$d/t_saved.npz"
  cp "$d/h_range.npz" "$d/t.npz"
  expect_bad_input "layouts: verify, the referenced compact file replaced by a hostile one" "" verify "$d/ref_t.json"
  stderr_mentions "layouts: verify, the referenced compact file replaced" "t.npz: token_ids[1][1]"
  expect_bad_input "layouts: export coq, the referenced compact file replaced by a hostile one" "$d/coq" export coq "$d/ref_t.json" --out "$d/coq"
  cp "$d/t_saved.npz" "$d/t.npz"
}

SECTIONS=(section_rank section_kruskal section_verify section_verify_many section_export section_manners)
SECTIONS+=(section_names)
SECTIONS+=(section_engine_route)
SECTIONS+=(section_theorem1)
SECTIONS+=(section_dana24)
SECTIONS+=(section_hostile)
SECTIONS+=(section_verify_data)
SECTIONS+=(section_hostile_input)
SECTIONS+=(section_agreement)
SECTIONS+=(section_portable_twins)
SECTIONS+=(section_front)
SECTIONS+=(section_certify)
SECTIONS+=(section_export_ks)
SECTIONS+=(section_model_files)
SECTIONS+=(section_ks_threads)
SECTIONS+=(section_ks_layouts)

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
