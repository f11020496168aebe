// memcert export coq, kind "kruskal" (docs/COQ.md): DIR/Kruskal.v states, in mathcomp's terms, that every
// k columns of the integer matrix A of DIR/Vectors.v (its columns are the certificate's vectors, each
// scaled to integers) are linearly independent over the rationals and, unless k is the number of
// vectors, that k+1 of them are dependent; DIR/Witness.v holds one non-singular k x k minor with its
// inverse modulo the certificate's prime for every k-subset, and the exact dependency.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "command.hpp"
#include "export_coq_kinds.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli::cmd_export {

namespace {

// Limits of what export coq exports: Coq finds and checks the witnesses of C(T, k) subsets, k + k^2
// numbers each (docs/COQ.md, "Times").
constexpr double kKruskalMaxSubsets = 100000;
constexpr double kKruskalMaxEntries = 2e6;

}  // namespace

int export_coq_kruskal(const std::string& cert_path, const std::string& out, bool json,
                       std::chrono::steady_clock::time_point start) {
  const std::string name = printable_argument(cert_path);
  // The checker accepted it: it is well-formed JSON of the documented shape.
  const nlohmann::json cert = json_parse_text(file_read_all(cert_path), cert_path);
  const nlohmann::json& vec = cert.at("vectors");
  const std::size_t T = vec.at("rows").get<std::size_t>(), d = vec.at("cols").get<std::size_t>();
  const std::size_t k = cert.at("kruskal_lower").get<std::size_t>(), u = cert.at("kruskal_upper").get<std::size_t>();
  if (k != u)
    throw InputError(name + ": kruskal_lower " + std::to_string(k) + " < kruskal_upper " + std::to_string(u) +
                     ": expected an exact Kruskal rank (export coq states krank = k)");
  double subsets = 1;
  for (std::size_t i = 0; i < k; ++i) subsets = subsets * double(T - i) / double(i + 1);
  subsets = std::floor(subsets + 0.5);
  if (subsets > kKruskalMaxSubsets || subsets * double(k + k * k) > kKruskalMaxEntries)
    throw InputError(name + ": C(" + std::to_string(T) + ", " + std::to_string(k) + ") = " +
                     Integer(subsets).get_str() + " subsets: more than export coq writes (at most " +
                     std::to_string(std::size_t(kKruskalMaxSubsets)) + " subsets and " +
                     std::to_string(std::size_t(kKruskalMaxEntries)) + " witness numbers; docs/COQ.md)");

  // Vector t times the lcm of its denominators (positive): the same independent subsets.
  std::vector<std::vector<Integer>> w(T);
  std::vector<Integer> scale(T);
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<Rational> q;
    for (std::size_t i = 0; i < d; ++i) q.emplace_back(vec.at("data").at(t).at(i).get<std::string>());
    Integer l = 1;
    for (const Rational& x : q) l = lcm(l, Integer(x.get_den()));
    scale[t] = l;
    for (const Rational& x : q) w[t].push_back(Integer(x.get_num()) * (l / Integer(x.get_den())));
  }

  // Lower side: Coq itself finds, for every k-subset, k pivot coordinates modulo the certificate's prime
  // and the inverse of that minor (MemcertKruskal.v's kruskal_witnesses, run when Witness.v is compiled),
  // and verifies them; the checker showed every k-subset independent modulo that prime.
  const nlohmann::json& lower = cert.at("lower");
  u64 p = 2;
  if (lower.at("method") == "exhaustive-mod-p") p = std::stoull(lower.at("prime").get<std::string>());
  const std::size_t count = std::size_t(subsets);

  // Upper side, when k < T: k+1 increasing indices and integer coefficients of an exact dependency
  // among their (scaled) vectors.
  std::vector<std::size_t> dep;
  std::vector<Integer> coef;
  std::size_t t0 = 0;
  if (k < T) {
    const nlohmann::json& upper = cert.at("upper");
    std::vector<std::pair<std::size_t, Rational>> pairs;
    if (upper.at("method") == "dependent-subset") {
      for (std::size_t i = 0; i <= k; ++i)
        pairs.emplace_back(upper.at("subset").at(i).get<std::size_t>(),
                           Rational(upper.at("coefficients").at(i).get<std::string>()));
    } else {  // trivial: k = d < T, so the first d+1 vectors are dependent: a kernel vector of them
      QMatrix m(d, k + 1);
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t t = 0; t <= k; ++t) m(i, t) = Rational(w[t][i]);
      const QMatrix ker = qmat_kernel(m);
      if (ker.cols() == 0) throw std::logic_error("export coq: d+1 vectors in dimension d are independent");
      for (std::size_t t = 0; t <= k; ++t) pairs.emplace_back(t, ker(t, 0) * Rational(scale[t]));  // of the unscaled vectors
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<Rational> c;
    for (const auto& [t, q] : pairs) {
      dep.push_back(t);
      c.push_back(q / Rational(scale[t]));  // sum c_t v_t = sum (c_t / scale_t) (scale_t v_t)
    }
    coef = integer_vector(c);
    while (t0 <= k && coef[t0] == 0) ++t0;
    if (t0 > k) throw std::logic_error("export coq: the checked dependency has no non-zero coefficient");
  }

  const std::string Ts = std::to_string(T), ds = std::to_string(d), ks = std::to_string(k),
                    k1 = std::to_string(k + 1);
  std::string dep_text;
  for (std::size_t i = 0; i < dep.size(); ++i) dep_text += (i ? ", " : "") + std::to_string(dep[i]);
  std::string vectors_v = "(* The " + Ts + " vectors of Z^" + ds + ", one a line: vector j is column j of the " + ds + " x " + Ts +
                          " matrix A of Kruskal.v.\n   Each is the certificate's vector j times a positive integer (the lcm of its "
                          "entries' denominators; 1 for an integer vector). *)\n"
                          "From Coq Require Import ZArith.\nFrom mathcomp Require Import ssreflect seq.\n\n"
                          "Local Open Scope Z_scope.\n\nDefinition V_data : seq (seq Z) :=\n  " + coqk_zmat(w, "  ") + ".\n";
  std::string witness_v = "(* The witnesses of the Kruskal rank " + ks + " of A and the computations that check them. *)\n" +
                          std::string(kCoqkPrelude) + "From Memcert Require Import MemcertRank MemcertKruskal Vectors.\n\n" +
                          "Local Open Scope Z_scope.\n\n" +
                          "(* Every " + ks + "-subset S of the " + Ts + " vectors, in the order of ksub 0 " + Ts + " " + ks +
                          ": the coordinates cols of a " + ks + " x " + ks + "\n   minor of the vectors S and its inverse X modulo lower_p "
                          "(by columns), found by Coq (kruskal_witnesses)\n   and stored as data. *)\n" +
                          "Definition lower_p : Z := " + std::to_string(p) + ".\n" +
                          "Definition lower_W : seq (seq nat * seq (seq Z)) :=\n  Eval vm_compute in kruskal_witnesses " + Ts + " " + ds +
                          " V_data " + ks + " lower_p.\n\n" +
                          "Lemma lower_ok : kruskal_lower_check " + Ts + "%N " + ds + "%N V_data " + ks + "%N lower_p lower_W = true.\n" +
                          "Proof. by vm_cast_no_check (erefl true). Qed.\n";
  if (k < T)
    witness_v += "\n(* The vectors upper_S are dependent: sum_t upper_c[t] v_(upper_S[t]) = 0, and upper_c[" + std::to_string(t0) +
                 "] <> 0. *)\n" +
                 "Definition upper_S : seq nat := " + coqk_nat_list(dep) + "%N.\n" +
                 "Definition upper_c : seq Z := " + coqk_z_list(coef) + ".\n\n" +
                 "Lemma upper_ok : kruskal_upper_check " + Ts + "%N " + ds + "%N V_data " + ks + "%N upper_S upper_c " +
                 std::to_string(t0) + "%N = true.\n" +
                 "Proof. by vm_cast_no_check (erefl true). Qed.\n";
  std::string incr = [&](const std::string& n) {
    return "(forall i j : 'I_" + n + ", (i < j)%N -> (s i < s j)%N)";
  }(ks);
  std::string kruskal_v =
      "(* Theorem: the " + ds + " x " + Ts + " integer matrix A below (its columns are the vectors of Vectors.v: the certificate's\n"
      "   vectors, each times a positive integer that clears its denominators) has Kruskal rank " + ks +
      ":\n   every " + ks + " of its columns are linearly independent over the rationals" +
      (k < T ? ",\n   and some " + k1 + " of them (columns " + dep_text + ") are dependent." : "\n   (" + ks + " is the number of columns).") +
      "\n   A_independent: for every strictly increasing s : 'I_" + ks + " -> 'I_" + Ts + " (a choice of " + ks +
      " columns), the " + ds + " x " + ks + "\n   submatrix colsub s A has rank " + ks + "." +
      (k < T ? "\n   A_dependent: for some strictly increasing s : 'I_" + k1 + " -> 'I_" + Ts + ", colsub s A has rank at most " + ks + "." : "") +
      "\n   Exported by memcert export coq from a kruskal certificate; check.sh checks it with coqc. *)\n" +
      kCoqkPrelude + "From Memcert Require Import MemcertRank MemcertKruskal Vectors Witness.\n\n" +
      "Definition A : 'M[int]_(" + ds + ", " + Ts + ") :=\n  \\matrix_(i < " + ds + ", j < " + Ts +
      ") int_of_Z (nth Z0 (nth [::] V_data j) i).\n\n" +
      "Theorem A_independent : forall s : 'I_" + ks + " -> 'I_" + Ts + ", " + incr + " ->\n  \\rank (map_mx (intr : int -> rat) (colsub s A)) = " +
      ks + "%N.\nProof. exact: (kruskal_lower_sound lower_ok). Qed.\n" +
      (k < T ? "\nTheorem A_dependent : exists s : 'I_" + k1 + " -> 'I_" + Ts + ",\n  (forall i j : 'I_" + k1 +
                   ", (i < j)%N -> (s i < s j)%N) /\\ (\\rank (map_mx (intr : int -> rat) (colsub s A)) <= " + ks +
                   ")%N.\nProof. exact: (kruskal_upper_sound upper_ok). Qed.\n"
             : "") +
      "\nPrint Assumptions A_independent.\n" + (k < T ? "Print Assumptions A_dependent.\n" : "");

  make_directory(out);
  file_write_atomic(out + "/MemcertRank.v", kCoqRankLibrary);
  file_write_atomic(out + "/MemcertKruskal.v", kCoqKruskalLibrary);
  file_write_atomic(out + "/Vectors.v", vectors_v);
  file_write_atomic(out + "/Witness.v", witness_v);
  file_write_atomic(out + "/Kruskal.v", kruskal_v);
  file_write_atomic(out + "/check.sh",
                    coqk_check_script({"MemcertRank.v", "MemcertKruskal.v", "Vectors.v", "Witness.v", "Kruskal.v"}, k < T ? 2 : 1));
  if (::chmod((out + "/check.sh").c_str(), 0755) != 0)
    throw InputError(printable_argument(out) + "/check.sh: cannot make it executable");

  nlohmann::json j{{"exported", true}, {"kind", "kruskal"}, {"count", T}, {"dim", d}, {"kruskal_rank", k},
                   {"subsets", count}, {"out", out},
                   {"files", {"Kruskal.v", "Vectors.v", "Witness.v", "MemcertRank.v", "MemcertKruskal.v", "check.sh"}}};
  if (k < T) j["dependent_subset"] = dep;
  std::string human = "exported " + name + " (Kruskal rank " + ks + " of " + Ts + " vectors in dimension " + ds +
                      ", checked by the independent checker) to " + printable_argument(out) + "/Kruskal.v:\n  A_independent: every " +
                      ks + " columns of A are independent (" + std::to_string(count) + " subsets, each a minor with its inverse modulo " +
                      std::to_string(p) + ")" +
                      (k < T ? "\n  A_dependent: columns " + dep_text + " are dependent (an exact integer dependency)" : "") +
                      "\nrun " + printable_argument(out) + "/check.sh to check it with coqc";
  emit(json, j, human, start);
  return kExitHolds;
}

}  // namespace memcert::cli::cmd_export
