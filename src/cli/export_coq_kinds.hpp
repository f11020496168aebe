#pragma once
// `memcert export coq` for the kinds beyond "rank" (docs/COQ.md): each writes its own Coq files next to
// the libraries proofs/coq/MemcertRank.v and proofs/coq/MemcertKruskal.v / MemcertDana24.v. Called by
// cmd_export.cpp once memcert's independent checker has accepted the certificate.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/qmat/qmat.hpp"

namespace memcert::cli {
extern const char* const kCoqRankLibrary;     // proofs/coq/MemcertRank.v
extern const char* const kCoqKruskalLibrary;  // proofs/coq/MemcertKruskal.v
extern const char* const kCoqDana24Library;   // proofs/coq/MemcertDana24.v

namespace cmd_export {
using u64 = std::uint64_t;
// Shared with the rank export (cmd_export.cpp).
std::optional<std::vector<std::vector<u64>>> minor_inverse_columns(const std::vector<std::vector<Integer>>& a,
                                                                   const std::vector<std::size_t>& rows,
                                                                   const std::vector<std::size_t>& cols, u64 p);
std::optional<std::vector<std::size_t>> pivot_columns(const std::vector<std::vector<Integer>>& k, u64 p);
std::vector<Integer> integer_vector(const std::vector<Rational>& v);
void make_directory(const std::string& dir);

// Each re-reads the accepted certificate at `cert` and writes DIR `out`; returns the exit status.
int export_coq_kruskal(const std::string& cert, const std::string& out, bool json,
                       std::chrono::steady_clock::time_point start);
int export_coq_dana24(const std::string& cert, const std::string& out, bool json,
                      std::chrono::steady_clock::time_point start);

// Shared by the two: Coq text of numbers and lists, and check.sh for a list of files.
std::string coqk_nat_list(const std::vector<std::size_t>& v);
std::string coqk_z_list(const std::vector<Integer>& v);
std::string coqk_zmat(const std::vector<std::vector<Integer>>& rows, const std::string& indent);
std::string coqk_umat(const std::vector<std::vector<u64>>& rows, const std::string& indent);
// compiles `files` in order; the last one's output must hold `closed` "Closed under the global context"
std::string coqk_check_script(const std::vector<std::string>& files, int closed);
extern const char* const kCoqkPrelude;
}  // namespace cmd_export
}  // namespace memcert::cli
