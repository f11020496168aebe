// Coq text shared by the exports of kinds "kruskal" and "dana24" (export_coq_kruskal.cpp,
// export_coq_dana24.cpp; docs/COQ.md).
#include "export_coq_kinds.hpp"

namespace memcert::cli::cmd_export {

const char* const kCoqkPrelude =
    "Set Warnings \"-notation-overridden,-ambiguous-paths\".\n"
    "From Coq Require Import ZArith.\n"
    "From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq fintype bigop.\n"
    "From mathcomp Require Import ssralg ssrnum ssrint rat zmodp matrix mxalgebra ssrZ.\n";

std::string coqk_nat_list(const std::vector<std::size_t>& v) {
  std::string s = "[::";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "; " : " ") + std::to_string(v[i]);
  return s + "]";
}

std::string coqk_z_list(const std::vector<Integer>& v) {
  std::string s = "[::";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "; " : " ") + v[i].get_str();
  return s + "]";
}

std::string coqk_zmat(const std::vector<std::vector<Integer>>& rows, const std::string& indent) {
  if (rows.empty()) return "[::]";
  std::string s = "[::\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    s += indent + coqk_z_list(rows[i]) + (i + 1 < rows.size() ? ";\n" : "\n");
  return s + indent + "]";
}

std::string coqk_umat(const std::vector<std::vector<u64>>& rows, const std::string& indent) {
  if (rows.empty()) return "[::]";
  std::string s = "[::";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    s += (i ? ";\n" + indent + "  " : " ") + std::string("[::");
    for (std::size_t j = 0; j < rows[i].size(); ++j) s += (j ? "; " : " ") + std::to_string(rows[i][j]);
    s += "]";
  }
  return s + "]";
}

std::string coqk_check_script(const std::vector<std::string>& files, int closed) {
  std::string s = R"sh(#!/bin/sh
# Checks this directory with Coq: exit 0 iff coqc accepts the libraries, the data, the witnesses and the
# theorems of the last file, and no theorem rests on an axiom ("Closed under the global context" for
# each). Needs coqc with mathcomp's ssreflect, algebra and zify libraries (Debian: coq
# libcoq-mathcomp-algebra libcoq-mathcomp-zify). Written by `memcert export coq`.
cd "$(dirname "$0")" || exit 2
if ! command -v coqc >/dev/null 2>&1; then
  echo "check.sh: coqc not found (Debian: apt-get install coq libcoq-mathcomp-algebra libcoq-mathcomp-zify)" >&2
  exit 2
fi
)sh";
  for (std::size_t i = 0; i + 1 < files.size(); ++i) s += "coqc -q -Q . Memcert " + files[i] + " || exit 1\n";
  s += "out=$(coqc -q -Q . Memcert " + files.back() + ") || { printf '%s\\n' \"$out\"; exit 1; }\n";
  s += "printf '%s\\n' \"$out\"\n";
  s += "[ \"$(printf '%s\\n' \"$out\" | grep -c 'Closed under the global context')\" -eq " + std::to_string(closed) +
       " ] || { echo \"check.sh: a theorem rests on assumptions\" >&2; exit 1; }\n";
  return s;
}

}  // namespace memcert::cli::cmd_export
