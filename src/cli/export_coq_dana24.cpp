// memcert export coq, kind "dana24" (docs/COQ.md): the exact parts of the certificate's read-out
// statement (object "readout", docs/papers/dana24.md section 3, step 6c). DIR/Readout.v states, in
// mathcomp's terms over the rationals, that det M <> 0 and that for every example t the logits
// W_U [M, W_O] F~(t) exceed every rival's by at least readout.targets_min_margin > 0 at the label next[t];
// DIR/Data.v holds the numbers (integers over one denominator per matrix), DIR/Witness.v the inverse of
// M's numerator modulo a prime and the computations that check both. The MPFR parts of a dana24
// certificate (the model's forward pass, its arg-max margins and the encoder deviation) are not exported.
#include <sys/stat.h>

#include <algorithm>

#include "command.hpp"
#include "export_coq_kinds.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli::cmd_export {

namespace {

// Entries as exact rationals; the integer numerators over the lcm `den` of their denominators.
struct ScaledRows {
  std::vector<std::vector<Integer>> num;
  Integer den = 1;
};

ScaledRows scale_rows(const std::vector<std::vector<Rational>>& q) {
  ScaledRows s;
  for (const auto& row : q)
    for (const Rational& x : row) s.den = lcm(s.den, Integer(x.get_den()));
  for (const auto& row : q) {
    s.num.emplace_back();
    for (const Rational& x : row) s.num.back().push_back(Integer(x.get_num()) * (s.den / Integer(x.get_den())));
  }
  return s;
}

std::vector<std::vector<Rational>> rational_rows(const nlohmann::json& a) {
  std::vector<std::vector<Rational>> out;
  for (const auto& row : a) {
    out.emplace_back();
    for (const auto& x : row) out.back().emplace_back(x.get<std::string>());
  }
  return out;
}

bool is_prime(u64 n) {
  if (n < 2) return false;
  for (u64 q = 2; q * q <= n; ++q)
    if (n % q == 0) return false;
  return true;
}

}  // namespace

int export_coq_dana24(const std::string& cert_path, const std::string& out, bool json,
                      std::chrono::steady_clock::time_point start) {
  const std::string name = printable_argument(cert_path);
  // The checker accepted it: it is well-formed JSON of the documented shape.
  const nlohmann::json cert = json_parse_text(file_read_all(cert_path), cert_path);
  if (!cert.contains("readout"))
    throw InputError(name + ": readout: expected the object \"readout\" (export coq states its exact read-out; a dana24 "
                     "certificate without it has no exact part to export)");
  const nlohmann::json& ro = cert.at("readout");
  const std::size_t N = cert.at("N").get<std::size_t>(), d = cert.at("d").get<std::size_t>(),
                    H = cert.at("H").get<std::size_t>(), dh = cert.at("dh").get<std::size_t>(),
                    T = cert.at("next").size(), h = H * dh;
  std::vector<std::size_t> next;
  for (const auto& x : cert.at("next")) next.push_back(x.get<std::size_t>());

  // X = [M, W_O] over one denominator (so M and W_O share it), W_U and F~ over one each.
  std::vector<std::vector<Rational>> xq = rational_rows(ro.at("M"));
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t hh = 0; hh < H; ++hh)
      for (std::size_t c = 0; c < dh; ++c) xq[i].emplace_back(cert.at("weights").at("WO").at(hh).at(i).at(c).get<std::string>());
  const ScaledRows X = scale_rows(xq);
  std::vector<std::vector<Integer>> Mn(d), WOn(d);
  for (std::size_t i = 0; i < d; ++i) {
    Mn[i].assign(X.num[i].begin(), X.num[i].begin() + std::ptrdiff_t(d));
    WOn[i].assign(X.num[i].begin() + std::ptrdiff_t(d), X.num[i].end());
  }
  const ScaledRows WU = scale_rows(rational_rows(cert.at("weights").at("WU")));
  const ScaledRows F = scale_rows(rational_rows(ro.at("features_centre")));
  const Rational q(ro.at("targets_min_margin").get<std::string>());

  // det M != 0: the inverse of M's numerator modulo the largest prime below 2^31 that does not divide its
  // determinant (the checker proved the determinant non-zero; it has finitely many prime factors).
  std::optional<std::vector<std::vector<u64>>> inv;
  std::vector<std::size_t> identity(d);
  for (std::size_t i = 0; i < d; ++i) identity[i] = i;
  u64 p = (u64{1} << 31) - 1;
  for (int tries = 0; tries < 200; --p) {
    if (!is_prime(p)) continue;
    ++tries;
    if ((inv = minor_inverse_columns(Mn, identity, identity, p))) break;
  }
  if (!inv) throw std::logic_error("export coq: no prime below 2^31 made the checked M invertible");

  const std::string Ns = std::to_string(N), ds = std::to_string(d), hs = std::to_string(h), Ts = std::to_string(T);
  std::string data_v = "(* The read-out of a dana24 certificate: every matrix as integer numerators (row by row) over one\n"
                       "   positive denominator. X = [M, W_O] shares X_den; W_O holds the " + std::to_string(H) + " heads' " + ds + " x " +
                       std::to_string(dh) + " output matrices side by side;\n   row t of F_num is the feature centre of example t. *)\n"
                       "Set Warnings \"-notation-overridden,-ambiguous-paths\".\n"
                       "From Coq Require Import ZArith.\nFrom mathcomp Require Import ssreflect ssrnat seq.\n\n"
                       "Local Open Scope Z_scope.\n\n" +
                       "Definition M_num : seq (seq Z) :=\n  " + coqk_zmat(Mn, "  ") + ".\n" +
                       "Definition WO_num : seq (seq Z) :=\n  " + coqk_zmat(WOn, "  ") + ".\n" +
                       "Definition X_den : Z := " + X.den.get_str() + ".\n\n" +
                       "Definition WU_num : seq (seq Z) :=\n  " + coqk_zmat(WU.num, "  ") + ".\n" +
                       "Definition WU_den : Z := " + WU.den.get_str() + ".\n\n" +
                       "Definition F_num : seq (seq Z) :=\n  " + coqk_zmat(F.num, "  ") + ".\n" +
                       "Definition F_den : Z := " + F.den.get_str() + ".\n\n" +
                       "Definition next_data : seq nat := " + coqk_nat_list(next) + "%N.\n\n" +
                       "(* The margin q_num / q_den (readout.targets_min_margin). *)\n" +
                       "Definition q_num : Z := " + Integer(q.get_num()).get_str() + ".\n" +
                       "Definition q_den : Z := " + Integer(q.get_den()).get_str() + ".\n";
  std::string witness_v = "(* The witnesses of the read-out theorems and the computations that check them. *)\n" +
                          std::string(kCoqkPrelude) + "From Memcert Require Import MemcertRank MemcertDana24 Data.\n\n" +
                          "Local Open Scope Z_scope.\n\n" +
                          "(* det M <> 0: M_num times det_X is 1 modulo det_p (det_X by columns). *)\n" +
                          "Definition det_p : Z := " + std::to_string(p) + ".\n" +
                          "Definition det_X : seq (seq Z) :=\n  " + coqk_umat(*inv, "  ") + ".\n\n" +
                          "Lemma det_ok : det_check " + ds + "%N M_num X_den det_p det_X = true.\n" +
                          "Proof. by vm_cast_no_check (erefl true). Qed.\n\n" +
                          "Lemma readout_ok : readout_check " + Ns + "%N " + ds + "%N " + hs + "%N " + Ts +
                          "%N M_num WO_num X_den WU_num WU_den F_num F_den next_data q_num q_den = true.\n" +
                          "Proof. by vm_cast_no_check (erefl true). Qed.\n";
  auto qdef = [](const std::string& m, const std::string& n, const std::string& num, const std::string& den) {
    return "qmx_of_Z " + m + " " + n + " " + num + " " + den;
  };
  std::string readout_v =
      "(* Theorems: the exact read-out of a dana24 certificate (docs/papers/dana24.md, section 3, step 6c).\n"
      "   M_invertible:     the " + ds + " x " + ds + " rational matrix M below has det M <> 0.\n"
      "   readout_margins:  for each of the " + Ts + " examples t, the rational logit vector (logits of column t,\n"
      "                     logits = W_U [M, W_O] F) has its maximum uniquely at the label next_data[t] < " + Ns + ":\n"
      "                     it exceeds every other entry by at least margin = q_num / q_den > 0.\n"
      "   The matrices are those of Data.v: integer numerators over one positive denominator each, by\n"
      "   MemcertDana24.v's\n"
      "     qmx_of_Z m n num den : 'M[rat]_(m, n) :=\n"
      "       (int_of_Z den)%:~R^-1 *: map_mx intr (\\matrix_(i < m, j < n) int_of_Z (nth Z0 (nth [::] num i) j))\n"
      "     rat_of_Z num den : rat := (int_of_Z num)%:~R / (int_of_Z den)%:~R.\n"
      "   Not stated here: that the model's own encoder output E(t) is near [M, W_O] F~(t), and the model's\n"
      "   arg-max margins; memcert's checker proves those with MPFR interval arithmetic (docs/COQ.md).\n"
      "   Exported by memcert export coq from a dana24 certificate; check.sh checks it with coqc. *)\n" +
      std::string(kCoqkPrelude) + "From Memcert Require Import MemcertRank MemcertDana24 Data Witness.\n\n" +
      "Local Open Scope ring_scope.\n\n" +
      "Definition M : 'M[rat]_(" + ds + ", " + ds + ") :=\n  " + qdef(ds, ds, "M_num", "X_den") + ".\n" +
      "Definition WO : 'M[rat]_(" + ds + ", " + hs + ") :=\n  " + qdef(ds, hs, "WO_num", "X_den") + ".\n" +
      "Definition WU : 'M[rat]_(" + Ns + ", " + ds + ") :=\n  " + qdef(Ns, ds, "WU_num", "WU_den") + ".\n" +
      "Definition F : 'M[rat]_(" + ds + " + " + hs + ", " + Ts + ") :=\n  (" + qdef(Ts, "(" + ds + " + " + hs + ")", "F_num", "F_den") + ")^T.\n" +
      "Definition logits : 'M[rat]_(" + Ns + ", " + Ts + ") := WU *m row_mx M WO *m F.\n" +
      "Definition margin : rat := rat_of_Z q_num q_den.\n\n" +
      "Theorem M_invertible : \\det M != 0.\n" +
      "Proof. exact: (det_sound det_ok). Qed.\n\n" +
      "Theorem readout_margins :\n  0 < margin /\\\n  (forall t : 'I_" + Ts + ", (nth 0 next_data t < " + Ns + ")%N) /\\\n" +
      "  (forall (t : 'I_" + Ts + ") (l j : 'I_" + Ns + "), (l : nat) = nth 0%N next_data t -> j != l ->\n" +
      "     logits l t - logits j t >= margin).\n" +
      "Proof. exact: (readout_sound readout_ok). Qed.\n\n" +
      "Print Assumptions M_invertible.\nPrint Assumptions readout_margins.\n";

  make_directory(out);
  file_write_atomic(out + "/MemcertRank.v", kCoqRankLibrary);
  file_write_atomic(out + "/MemcertDana24.v", kCoqDana24Library);
  file_write_atomic(out + "/Data.v", data_v);
  file_write_atomic(out + "/Witness.v", witness_v);
  file_write_atomic(out + "/Readout.v", readout_v);
  file_write_atomic(out + "/check.sh",
                    coqk_check_script({"MemcertRank.v", "MemcertDana24.v", "Data.v", "Witness.v", "Readout.v"}, 2));
  if (::chmod((out + "/check.sh").c_str(), 0755) != 0)
    throw InputError(printable_argument(out) + "/check.sh: cannot make it executable");

  nlohmann::json j{{"exported", true}, {"kind", "dana24"}, {"N", N}, {"d", d}, {"H", H}, {"dh", dh}, {"T", T},
                   {"margin", q.get_str()}, {"out", out},
                   {"files", {"Readout.v", "Data.v", "Witness.v", "MemcertRank.v", "MemcertDana24.v", "check.sh"}},
                   {"not_exported", {"the model's forward pass (MPFR)", "the model's arg-max margins (min_margin)",
                                     "readout.encoder_deviation"}}};
  std::string human = "exported " + name + " (the exact read-out of a dana24 certificate, checked by the independent checker) to " +
                      printable_argument(out) + "/Readout.v:\n  M_invertible: det M <> 0 for the " + ds + " x " + ds +
                      " matrix M\n  readout_margins: for each of the " + Ts + " examples, the logits W_U [M, W_O] F~(t) have their "
                      "maximum at the label with margin >= " + q.get_str() +
                      "\n  not exported: the model's forward pass and its margins, the encoder deviation (MPFR; docs/COQ.md)"
                      "\nrun " + printable_argument(out) + "/check.sh to check it with coqc";
  emit(json, j, human, start);
  return kExitHolds;
}

}  // namespace memcert::cli::cmd_export
