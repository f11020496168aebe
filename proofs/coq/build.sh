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
coqc -q -Q . Memcert MemcertTheorem1.v
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
cat > "$tmp/AxiomsTheorem1.v" <<'COQ'
From Memcert Require Import MemcertTheorem1.
Print Assumptions check_labels_sound.
Print Assumptions check_classes_sound.
COQ
out=$(coqc -q -Q . Memcert "$tmp/Axioms.v"; coqc -q -Q . Memcert "$tmp/AxiomsKs.v")
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c 'Closed under the global context')" -eq 10 ] || {
  echo "build.sh: a theorem rests on assumptions" >&2; exit 1; }
# MemcertTheorem1.v states its theorems over Coq's real numbers: they rest on the axioms of Reals and the
# excluded middle its exp lemmas use, and on nothing else.
out1=$(coqc -q -Q . Memcert "$tmp/AxiomsTheorem1.v")
printf '%s\n' "$out1"
[ "$(printf '%s\n' "$out1" | grep -c '^Axioms:$')" -eq 2 ] || { echo "build.sh: expected two answers" >&2; exit 1; }
bad=$(printf '%s\n' "$out1" | grep -v -E '^[[:space:]]' | grep -v -x 'Axioms:' | awk 'NF {print $1}' | grep -v -x -E \
  'ClassicalDedekindReals\.sig_forall_dec|ClassicalDedekindReals\.sig_not_dec|FunctionalExtensionality\.functional_extensionality_dep|Classical_Prop\.classic' || true)
[ -z "$bad" ] || { echo "build.sh: MemcertTheorem1 rests on other axioms: $bad" >&2; exit 1; }
