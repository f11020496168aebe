#!/bin/sh
# Compiles the Coq libraries of memcert's exported certificates (docs/COQ.md) with coqc, under the logical
# name Memcert: exit 0 iff Coq accepts them and their theorems rest on no axiom.
# Needs coqc with mathcomp's ssreflect, algebra and zify libraries (scripts/install-deps.sh installs them:
# coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra libcoq-mathcomp-zify).
set -eu
cd "$(dirname "$0")"
if ! command -v coqc >/dev/null 2>&1; then
  echo "build.sh: coqc not found (Debian: apt-get install coq libcoq-mathcomp-algebra libcoq-mathcomp-zify)" >&2
  exit 2
fi
coqc -q -Q . Memcert MemcertRank.v
coqc -q -Q . Memcert MemcertKs.v
coqc -q -Q . Memcert MemcertKruskal.v
coqc -q -Q . Memcert MemcertDana24.v
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/Axioms.v" <<'COQ'
From Memcert Require Import MemcertRank MemcertKruskal MemcertDana24.
Print Assumptions rank_lower_sound.
Print Assumptions rank_upper_sound.
Print Assumptions rank_eq_full.
Print Assumptions rank_eq_kernel.
Print Assumptions kruskal_lower_sound.
Print Assumptions kruskal_upper_sound.
Print Assumptions det_sound.
Print Assumptions readout_sound.
COQ
cat > "$tmp/AxiomsKs.v" <<'COQ'
From Memcert Require Import MemcertKs.
Print Assumptions check_sound.
Print Assumptions check_at_sound.
COQ
out=$(coqc -q -Q . Memcert "$tmp/Axioms.v"; coqc -q -Q . Memcert "$tmp/AxiomsKs.v")
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c 'Closed under the global context')" -eq 10 ] || {
  echo "build.sh: a theorem rests on assumptions" >&2; exit 1; }
