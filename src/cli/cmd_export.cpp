// memcert export coq CERT --out DIR [--json]
// A certificate as a Coq development that Coq's kernel checks (docs/COQ.md): DIR/Rank.v states the theorem
// in mathcomp's terms (\rank (map_mx intr A) = r for the integer matrix A of DIR/Matrix.v), DIR/Witness.v
// holds the witnesses and the computations (vm_compute) that check them, DIR/MemcertRank.v is the
// library of checkers and their soundness theorems (proofs/coq/), and DIR/check.sh runs coqc on all of it.
// The certificate is first re-checked by memcert's independent checker: a rejected one is exported never
// (exit 1), a malformed one is bad input (exit 2).
// Kinds: "rank" with an exact rank (rank_lower = rank_upper) of an integer matrix; "kruskal" and "dana24"
// (its exact read-out) in export_coq_kruskal.cpp and export_coq_dana24.cpp; "ks" in export_coq_ks.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "attention_arrays.hpp"
#include "command.hpp"
#include "export_coq_kinds.hpp"
#include "ks_arrays.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
extern const char* const kCoqRankLibrary;  // proofs/coq/MemcertRank.v, embedded at build time
// Kind "theorem1" (export_coq_theorem1.cpp), for a certificate the independent checker accepted. `data`:
// the values of a certificate that references its data file, exactly as the checker read and accepted
// them (null when the certificate embeds its data).
int run_export_coq_theorem1(const std::string& cert_path, const std::string& out, bool json,
                            std::chrono::steady_clock::time_point start, const memcert_checker::AttentionArrays* data);
// Kind "ks" (export_coq_ks.cpp), for a certificate the independent checker accepted. `data`: the
// sequences and labels of a certificate that references its data file, exactly as the checker read and
// accepted them (null when the certificate embeds its data).
int run_export_coq_ks(const std::string& cert_path, const std::string& out, bool json,
                      std::chrono::steady_clock::time_point start, const memcert_checker::KsArrays* data);

namespace cmd_export {

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

struct ExportArgs {
  std::string cert, out;
  bool json = false;
};

u64 mod_of(const Integer& z, u64 p) {
  Integer r = z % Integer(std::to_string(p));  // in (-p, p)
  if (r < 0) r += Integer(std::to_string(p));
  return std::stoull(r.get_str());
}

u64 mul_mod(u64 a, u64 b, u64 p) { return static_cast<u64>(static_cast<u128>(a) * b % p); }

// x^-1 mod p (extended Euclid); 0 when gcd(x, p) != 1.
u64 inv_mod(u64 x, u64 p) {
  i128 t = 0, nt = 1, r = p, nr = x % p;
  while (nr != 0) {
    const i128 q = r / nr;
    i128 tmp = t - q * nt; t = nt; nt = tmp;
    tmp = r - q * nr; r = nr; nr = tmp;
  }
  if (r != 1) return 0;
  if (t < 0) t += p;
  return static_cast<u64>(t);
}

// The inverse modulo p of the square matrix m (entries in [0, p)) by Gauss-Jordan; nullopt when it is
// singular modulo p.
std::optional<std::vector<std::vector<u64>>> inverse_mod(std::vector<std::vector<u64>> m, u64 p) {
  const std::size_t k = m.size();
  std::vector<std::vector<u64>> x(k, std::vector<u64>(k, 0));
  for (std::size_t i = 0; i < k; ++i) x[i][i] = 1 % p;
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    while (piv < k && inv_mod(m[piv][c], p) == 0) ++piv;
    if (piv == k) return std::nullopt;
    std::swap(m[piv], m[c]);
    std::swap(x[piv], x[c]);
    const u64 s = inv_mod(m[c][c], p);
    for (std::size_t j = 0; j < k; ++j) { m[c][j] = mul_mod(m[c][j], s, p); x[c][j] = mul_mod(x[c][j], s, p); }
    for (std::size_t i = 0; i < k; ++i) {
      if (i == c || m[i][c] == 0) continue;
      const u64 f = p - m[i][c];
      for (std::size_t j = 0; j < k; ++j) {
        m[i][j] = static_cast<u64>((m[i][j] + static_cast<u128>(f) * m[c][j]) % p);
        x[i][j] = static_cast<u64>((x[i][j] + static_cast<u128>(f) * x[c][j]) % p);
      }
    }
  }
  return x;
}

// The columns of the inverse of A[rows, cols] modulo p, as Coq lists.
std::optional<std::vector<std::vector<u64>>> minor_inverse_columns(const std::vector<std::vector<Integer>>& a,
                                                                   const std::vector<std::size_t>& rows,
                                                                   const std::vector<std::size_t>& cols, u64 p) {
  std::vector<std::vector<u64>> m(rows.size(), std::vector<u64>(cols.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < cols.size(); ++j) m[i][j] = mod_of(a[rows[i]][cols[j]], p);
  auto x = inverse_mod(std::move(m), p);
  if (!x) return std::nullopt;
  std::vector<std::vector<u64>> columns(cols.size(), std::vector<u64>(rows.size()));
  for (std::size_t l = 0; l < rows.size(); ++l)
    for (std::size_t j = 0; j < cols.size(); ++j) columns[j][l] = (*x)[l][j];
  return columns;
}

// c independent coordinates of the c vectors `k` (rows) modulo p: the pivot columns of their echelon
// form; nullopt when the vectors are dependent modulo p.
std::optional<std::vector<std::size_t>> pivot_columns(const std::vector<std::vector<Integer>>& k, u64 p) {
  const std::size_t c = k.size(), n = c ? k[0].size() : 0;
  std::vector<std::vector<u64>> m(c, std::vector<u64>(n));
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t j = 0; j < n; ++j) m[i][j] = mod_of(k[i][j], p);
  std::vector<std::size_t> piv;
  std::size_t r = 0;
  for (std::size_t j = 0; j < n && r < c; ++j) {
    std::size_t i = r;
    while (i < c && m[i][j] == 0) ++i;
    if (i == c) continue;
    std::swap(m[i], m[r]);
    const u64 s = inv_mod(m[r][j], p);
    for (std::size_t t = r + 1; t < c; ++t) {
      const u64 f = mul_mod(m[t][j], s, p);
      if (f == 0) continue;
      for (std::size_t l = j; l < n; ++l) m[t][l] = static_cast<u64>((m[t][l] + static_cast<u128>(p - f) * m[r][l]) % p);
    }
    piv.push_back(j);
    ++r;
  }
  if (r < c) return std::nullopt;
  return piv;
}

template <class T>
std::string coq_list(const std::vector<T>& v, const std::function<std::string(const T&)>& show) {
  std::string s = "[::";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "; " : " ") + show(v[i]);
  return s + "]";
}

std::string coq_nat_list(const std::vector<std::size_t>& v) {
  return coq_list<std::size_t>(v, [](const std::size_t& x) { return std::to_string(x); });
}

template <class T>
std::string coq_zmat(const std::vector<std::vector<T>>& rows, const std::function<std::string(const T&)>& show,
                     const std::string& indent) {
  if (rows.empty()) return "[::]";
  std::string s = "[::\n";
  for (std::size_t i = 0; i < rows.size(); ++i) s += indent + coq_list<T>(rows[i], show) + (i + 1 < rows.size() ? ";\n" : "\n");
  return s + indent + "]";
}

std::string z_text(const Integer& z) { return z.get_str(); }
std::string u64_text(const u64& x) { return std::to_string(x); }

// The scale of a rational vector to the integers with no common factor (same span).
std::vector<Integer> integer_vector(const std::vector<Rational>& v) {
  Integer l = 1, g = 0;
  for (const Rational& q : v) l = lcm(l, Integer(q.get_den()));
  std::vector<Integer> out;
  for (const Rational& q : v) out.push_back(Integer(q.get_num()) * (l / Integer(q.get_den())));
  for (const Integer& z : out) g = gcd(g, z);
  if (g > 1)
    for (Integer& z : out) z /= g;
  return out;
}

std::vector<std::size_t> index_list(const nlohmann::json& v) {
  std::vector<std::size_t> out;
  for (const auto& x : v) out.push_back(x.get<std::size_t>());
  return out;
}

const char* const kCheckScript = R"sh(#!/bin/sh
# Checks this directory with Coq: exit 0 iff coqc accepts the library, the data, the witnesses and the
# theorem of Rank.v, and the theorem rests on no axiom ("Closed under the global context").
# Needs coqc with mathcomp's ssreflect, algebra and zify libraries (Debian: coq libcoq-mathcomp-algebra
# libcoq-mathcomp-zify). Written by `memcert export coq`.
cd "$(dirname "$0")" || exit 2
if ! command -v coqc >/dev/null 2>&1; then
  echo "check.sh: coqc not found (Debian: apt-get install coq libcoq-mathcomp-algebra libcoq-mathcomp-zify)" >&2
  exit 2
fi
coqc -q -Q . Memcert MemcertRank.v || exit 1
coqc -q -Q . Memcert Matrix.v || exit 1
coqc -q -Q . Memcert Witness.v || exit 1
out=$(coqc -q -Q . Memcert Rank.v) || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
case "$out" in
  *"Closed under the global context"*) exit 0 ;;
  *) echo "check.sh: the theorem rests on assumptions" >&2; exit 1 ;;
esac
)sh";

const char* const kCoqPrelude =
    "Set Warnings \"-notation-overridden,-ambiguous-paths\".\n"
    "From Coq Require Import ZArith.\n"
    "From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq fintype bigop.\n"
    "From mathcomp Require Import ssralg ssrint rat zmodp matrix mxalgebra ssrZ.\n";

void make_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw InputError(printable_argument(dir) + ": cannot create the directory (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(printable_argument(dir) + ": expected a directory");
}

int run_export_coq(const ExportArgs& args) {
  auto start = std::chrono::steady_clock::now();
  struct stat st {};
  if (::stat(args.cert.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(args.cert.c_str(), R_OK) != 0)
    throw InputError(printable_argument(args.cert) + ": cannot open (expected a certificate file)");
  memcert_checker::Budget budget;
  const RunBudget& rb = run_budget();
  budget.max_seconds = rb.max_seconds > 0 ? rb.max_seconds : 1e300;
  budget.max_bytes = rb.max_memory_mb > 0 ? rb.max_memory_mb * 1024 * 1024 : 1e300;
  progress("export: independent checker", 0, 1);
  // Referenced data are found as `verify CERT` finds them (the file the certificate names, as written or
  // beside the certificate). A ks certificate's sequences and a theorem1 certificate's contexts and queries
  // are kept as the checker read them: the export writes the very data the checker accepted, never a
  // second read of the file.
  std::optional<memcert_checker::KsArrays> ks_data;
  const memcert_checker::KsArraysSupplier ks_read = ks_arrays_supplier("", args.cert);
  const memcert_checker::KsArraysSupplier ks_keep = [&](const std::string& file, memcert_checker::KsArrays& a,
                                                         std::string& error) {
    if (!ks_read(file, a, error)) return false;
    ks_data = a;
    return true;
  };
  std::optional<memcert_checker::AttentionArrays> t1_data;
  std::size_t t1_reads = 0;  // the checker asks once; the export writes only the one read it checked
  const memcert_checker::ArraysSupplier t1_read = attention_arrays_supplier("", args.cert);
  const memcert_checker::ArraysSupplier t1_keep = [&](const std::string& file, memcert_checker::AttentionArrays& a,
                                                       std::string& error) {
    ++t1_reads;
    t1_data.reset();
    if (!t1_read(file, a, error)) return false;
    t1_data = a;
    return true;
  };
  const memcert_checker::Verdict v =
      memcert_checker::verify_certificate_file(args.cert, budget, nullptr, t1_keep, &ks_keep);
  progress("export: independent checker", 1, 1);
  const std::string name = printable_argument(args.cert);
  if (v.malformed) throw InputError(name + ": " + printable_argument(v.reason, 600));
  if (v.undecided) {
    std::cerr << "undecided: " << name << ": " << printable_argument(v.reason, 600) << " (nothing exported)\n";
    return kExitUndecided;
  }
  if (!v.valid && v.kind.empty())
    throw InputError(name + ": expected a certificate (a JSON object with a string \"kind\")");
  if (!v.valid) {
    emit(args.json, {{"exported", false}, {"kind", v.kind}, {"reason", v.reason}},
         "REJECTED: " + name + ": rejected by the independent checker: " + printable_argument(v.reason, 600) +
             " (nothing exported)",
         start);
    return kExitNegative;
  }
  const std::string kind = memcert_checker::kind_name(v.kind);  // "mahdavi24" is "theorem1", "ks25" is "ks"
  if (kind == "ks") return run_export_coq_ks(args.cert, args.out, args.json, start, ks_data ? &*ks_data : nullptr);
  if (kind == "theorem1")
    return run_export_coq_theorem1(args.cert, args.out, args.json, start, t1_data && t1_reads == 1 ? &*t1_data : nullptr);
  if (v.kind == "kruskal") return export_coq_kruskal(args.cert, args.out, args.json, start);
  if (v.kind == "dana24") return export_coq_dana24(args.cert, args.out, args.json, start);
  if (v.kind != "rank")
    throw InputError(name + ": kind: expected \"rank\", \"kruskal\", \"dana24\", \"ks\" or \"theorem1\" (the kinds `export coq` supports), "
                     "got another kind");

  // The checker accepted it: it is well-formed JSON of the documented shape.
  const nlohmann::json cert = json_parse_text(file_read_all(args.cert), args.cert);
  const nlohmann::json& mat = cert.at("matrix");
  const std::size_t m = mat.at("rows").get<std::size_t>(), n = mat.at("cols").get<std::size_t>();
  const std::size_t k = cert.at("rank_lower").get<std::size_t>(), u = cert.at("rank_upper").get<std::size_t>();
  if (k != u)
    throw InputError(name + ": rank_lower " + std::to_string(k) + " < rank_upper " + std::to_string(u) +
                     ": expected an exact rank (export coq states rank A = r)");
  std::vector<std::vector<Integer>> a(m, std::vector<Integer>(n));
  QMatrix aq(m, n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const Rational q(mat.at("data").at(i).at(j).get<std::string>());
      if (q.get_den() != 1)
        throw InputError(name + ": matrix.data[" + std::to_string(i) + "][" + std::to_string(j) +
                         "]: expected an integer (export coq states theorems about integer matrices)");
      a[i][j] = q.get_num();
      aq(i, j) = q;
    }

  // Lower side: the certificate's minor, its inverse modulo the certificate's prime (the checker proved
  // the minor non-zero modulo that prime, so the inverse exists).
  const nlohmann::json& lower = cert.at("lower");
  std::vector<std::size_t> rows, cols;
  u64 p = 2;
  if (lower.at("method") == "minor-mod-p") {
    rows = index_list(lower.at("rows"));
    cols = index_list(lower.at("cols"));
    p = std::stoull(lower.at("prime").get<std::string>());
  }
  const auto xc = minor_inverse_columns(a, rows, cols, p);
  if (!xc) throw std::logic_error("export coq: the checked minor is singular modulo its prime");

  // Upper side, when the rank is below min(m, n): n - r integer kernel vectors (the certificate's own, or
  // the exact kernel when it proves the bound otherwise), independent by a non-singular c x c block.
  const std::size_t c = n - k;
  const bool full = k == std::min(m, n);
  std::vector<std::vector<Integer>> kernel;
  std::vector<std::size_t> free;
  std::vector<std::vector<u64>> kxc;
  u64 kp = 0;
  if (!full) {
    const nlohmann::json& upper = cert.at("upper");
    if (upper.at("method") == "kernel") {
      for (const auto& vec : upper.at("kernel")) {
        std::vector<Rational> q;
        for (const auto& x : vec) q.emplace_back(x.get<std::string>());
        kernel.push_back(integer_vector(q));
      }
    } else {
      const QMatrix kq = qmat_kernel(aq);  // n x c, its columns a basis of the kernel
      if (kq.cols() != c) throw std::logic_error("export coq: the exact kernel disagrees with the checked rank");
      for (std::size_t t = 0; t < c; ++t) {
        std::vector<Rational> q(n);
        for (std::size_t j = 0; j < n; ++j) q[j] = kq(j, t);
        kernel.push_back(integer_vector(q));
      }
    }
    // 2^61 - 1 first, then other primes near 2^61 until the block is non-singular modulo one of them.
    const u64 primes[] = {2305843009213693951ull, 2305843009213693921ull, 2305843009213693907ull, 2305843009213693669ull};
    std::vector<std::size_t> identity(c);
    for (std::size_t t = 0; t < c; ++t) identity[t] = t;
    for (const u64 q : primes) {
      auto piv = pivot_columns(kernel, q);
      if (!piv) continue;
      auto inv = minor_inverse_columns(kernel, identity, *piv, q);
      if (!inv) continue;
      free = *piv;
      kxc = *inv;
      kp = q;
      break;
    }
    if (kp == 0) throw std::logic_error("export coq: no prime made the kernel block non-singular");
  }

  // The files.
  const std::string ms = std::to_string(m), ns = std::to_string(n), ks = std::to_string(k);
  const std::function<std::string(const Integer&)> zshow = z_text;
  const std::function<std::string(const u64&)> ushow = u64_text;
  std::string matrix_v = std::string("(* The ") + ms + " x " + ns + " integer matrix A, row by row (memcert export coq). *)\n" +
                         "From Coq Require Import ZArith.\nFrom mathcomp Require Import ssreflect seq.\n" +
                         "\nLocal Open Scope Z_scope.\n\nDefinition A_data : seq (seq Z) :=\n  " +
                         coq_zmat<Integer>(a, zshow, "  ") + ".\n";
  std::string witness_v = std::string("(* The witnesses of rank A = ") + ks + " and the computations that check them. *)\n" +
                          kCoqPrelude + "From Memcert Require Import MemcertRank Matrix.\n\n" +
                          "Local Open Scope Z_scope.\n\n" +
                          "(* rank A >= " + ks + ": the minor A[lower_rows, lower_cols] times X is 1 modulo lower_p (X by columns). *)\n" +
                          "Definition lower_p : Z := " + std::to_string(p) + ".\n" +
                          "Definition lower_rows : seq nat := " + coq_nat_list(rows) + "%N.\n" +
                          "Definition lower_cols : seq nat := " + coq_nat_list(cols) + "%N.\n" +
                          "Definition lower_X : seq (seq Z) :=\n  " + coq_zmat<u64>(*xc, ushow, "  ") + ".\n\n" +
                          "Lemma lower_ok : rank_lower_check " + ms + "%N " + ns + "%N A_data " + ks +
                          "%N lower_p lower_rows lower_cols lower_X = true.\n" +
                          "Proof. by vm_cast_no_check (erefl true). Qed.\n";
  if (!full) {
    witness_v += std::string("\n(* rank A <= ") + ns + " - " + std::to_string(c) + ": the vectors of upper_kernel satisfy A v = 0, and\n" +
                 "   their columns upper_free form a block with an inverse modulo upper_p (upper_X, by columns). *)\n" +
                 "Definition upper_kernel : seq (seq Z) :=\n  " + coq_zmat<Integer>(kernel, zshow, "  ") + ".\n" +
                 "Definition upper_p : Z := " + std::to_string(kp) + ".\n" +
                 "Definition upper_free : seq nat := " + coq_nat_list(free) + "%N.\n" +
                 "Definition upper_X : seq (seq Z) :=\n  " + coq_zmat<u64>(kxc, ushow, "  ") + ".\n\n" +
                 "Lemma upper_ok : rank_upper_check " + ms + "%N " + ns + "%N A_data " + std::to_string(c) +
                 "%N upper_kernel upper_p upper_free upper_X = true.\n" +
                 "Proof. by vm_cast_no_check (erefl true). Qed.\n";
  }
  std::string rank_v = std::string("(* Theorem: the ") + ms + " x " + ns + " integer matrix A of Matrix.v has rank " + ks +
                       " (over the rationals).\n   Exported by memcert export coq from a rank certificate; check.sh checks it with coqc. *)\n" +
                       kCoqPrelude + "From Memcert Require Import MemcertRank Matrix Witness.\n\n" +
                       "Definition A : 'M[int]_(" + ms + ", " + ns + ") :=\n  \\matrix_(i < " + ms + ", j < " + ns +
                       ") int_of_Z (nth Z0 (nth [::] A_data i) j).\n\n" +
                       "Theorem A_rank : \\rank (map_mx (intr : int -> rat) A) = " + ks + "%N.\n" +
                       (full ? "Proof. exact: (rank_eq_full (erefl _) lower_ok). Qed.\n"
                             : "Proof. exact: (rank_eq_kernel (isT : (" + ks + " <= " + ns + ")%N) lower_ok upper_ok). Qed.\n") +
                       "\nPrint Assumptions A_rank.\n";

  make_directory(args.out);
  file_write_atomic(args.out + "/MemcertRank.v", kCoqRankLibrary);
  file_write_atomic(args.out + "/Matrix.v", matrix_v);
  file_write_atomic(args.out + "/Witness.v", witness_v);
  file_write_atomic(args.out + "/Rank.v", rank_v);
  file_write_atomic(args.out + "/check.sh", kCheckScript);
  if (::chmod((args.out + "/check.sh").c_str(), 0755) != 0)
    throw InputError(printable_argument(args.out) + "/check.sh: cannot make it executable");

  nlohmann::json j{{"exported", true}, {"kind", "rank"}, {"rows", m}, {"cols", n}, {"rank", k}, {"out", args.out},
                   {"files", {"Rank.v", "Matrix.v", "Witness.v", "MemcertRank.v", "check.sh"}},
                   {"upper", full ? "trivial" : "kernel"}};
  std::string human = "exported " + name + " (rank " + ks + " of the " + ms + " x " + ns + " integer matrix, checked by the "
                      "independent checker) to " + printable_argument(args.out) + "/Rank.v:\n  Theorem A_rank : \\rank (map_mx (intr : int -> rat) A) = " +
                      ks + "%N.\n  lower: the " + ks + " x " + ks + " minor with its inverse modulo " + std::to_string(p) +
                      (full ? "\n  upper: rank <= min(rows, cols)" : "\n  upper: " + std::to_string(c) + " integer kernel vectors") +
                      "\nrun " + printable_argument(args.out) + "/check.sh to check it with coqc";
  emit(args.json, j, human, start);
  return kExitHolds;
}

const CommandRegistrar reg{{95, [](CLI::App& root, auto bind) {
  CLI::App* parent = root.add_subcommand("export", "Write a certificate as a proof another system checks");
  parent->require_subcommand(1);
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = parent->add_subcommand("coq", "A rank, kruskal, dana24 (read-out), ks or theorem1 certificate as Coq files whose theorems Coq's kernel checks (docs/COQ.md)");
  sub->add_option("CERT", args->cert, "Certificate file (JSON), re-checked by the independent checker first")->required();
  sub->add_option("--out", args->out, "Directory to write (created if absent): the theorem file (Rank.v, Kruskal.v, Readout.v, Ks.v or Theorem1.v), the data, the witnesses, the libraries, check.sh")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_export_coq(*args); });
}}};

}  // namespace cmd_export
}  // namespace memcert::cli
