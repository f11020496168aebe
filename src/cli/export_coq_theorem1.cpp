// memcert export coq for kind "theorem1" (docs/COQ.md): a mahdavi24 Theorem 1 certificate as Coq files whose
// theorems, over Coq's real numbers with its exponential, are "the T x H d matrix Z of this attention layer on
// these T examples has rank T" and "the layer reproduces every label" (within the checker's rule for real
// labels; the strict arg-max for class labels). Coq proves them by computing rational enclosures of the
// softmax, of Z and of the read-out (proofs/coq/MemcertTheorem1.v). Called by cmd_export.cpp once the
// independent checker has accepted the certificate.
//   DIR/Theorem1.v        the theorems at the top, their proofs (one vm_compute each), Print Assumptions
//   DIR/Data.v            the contexts, queries, labels and weights as exact rationals; for data by
//                         reference, the contexts and queries of the file's first T examples as the checker
//                         read them and recomputed their digest (the file is not read again)
//   DIR/Witness.v         the precision of the enclosures, T columns of Z and an approximate inverse
//   DIR/MemcertTheorem1.v the library (a copy of proofs/coq/MemcertTheorem1.v)
//   DIR/check.sh          coqc on the four files: exit 0 iff Coq accepts and only the standard axioms
//                         of Coq's real numbers are used
#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "command.hpp"
#include "export_coq_kinds.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
extern const char* const kCoqTheorem1Library;  // proofs/coq/MemcertTheorem1.v, embedded at build time

namespace export_coq_theorem1 {

// check.sh accepts a theorem whose Print Assumptions lists only the axioms of Coq's standard real numbers
// (Reals: ClassicalDedekindReals.sig_forall_dec, sig_not_dec, functional_extensionality_dep) and the excluded
// middle (Classical_Prop.classic), which the standard library's proofs of exp's bounds use.
const char* const kTheorem1CheckScript = R"sh(#!/bin/sh
# Checks this directory with Coq: exit 0 iff coqc accepts the library, the data, the witnesses and the
# theorems of Theorem1.v (whose proofs compute the enclosures), and the theorems rest on no axiom beyond
# the standard ones of Coq's real numbers (Reals) and the excluded middle. Needs coqc (Coq 8.16; its standard library only).
# Written by `memcert export coq`.
cd "$(dirname "$0")" || exit 2
if ! command -v coqc >/dev/null 2>&1; then
  echo "check.sh: coqc not found (Debian: apt-get install coq)" >&2
  exit 2
fi
coqc -q -Q . Memcert MemcertTheorem1.v || exit 1
coqc -q -Q . Memcert Data.v || exit 1
coqc -q -Q . Memcert Witness.v || exit 1
out=$(coqc -q -Q . Memcert Theorem1.v) || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c -E '^(Axioms:|Closed under the global context)$')" -eq 2 ] || {
  echo "check.sh: expected the assumptions of two theorems" >&2; exit 1; }
# The axioms (the unindented lines of the answers) must be the standard ones of Coq's reals and the
# excluded middle its exp lemmas use (Rpower.exp_ineq1_le, exp_increasing).
bad=$(printf '%s\n' "$out" | grep -v -E '^[[:space:]]' | grep -v -x -E 'Axioms:|Closed under the global context' |
  awk 'NF {print $1}' | grep -v -x -E \
  'ClassicalDedekindReals\.sig_forall_dec|ClassicalDedekindReals\.sig_not_dec|FunctionalExtensionality\.functional_extensionality_dep|Classical_Prop\.classic' || true)
[ -z "$bad" ] || { echo "check.sh: a theorem rests on an axiom beyond Coq's reals:" >&2; printf '%s\n' "$bad" >&2; exit 1; }
exit 0
)sh";

using QMat = std::vector<std::vector<Rational>>;

Rational t1_number(const nlohmann::json& v, const std::string& name, const std::string& where) {
  if (!v.is_string()) throw InputError(name + ": " + where + ": expected an exact number as a string");
  return Rational(v.get<std::string>());
}

QMat t1_matrix(const nlohmann::json& v, std::size_t rows, std::size_t cols, const std::string& name,
               const std::string& where) {
  if (!v.is_array() || v.size() != rows) throw InputError(name + ": " + where + ": expected " + std::to_string(rows) + " rows");
  QMat m(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const nlohmann::json& r = v.at(i);
    if (!r.is_array() || r.size() != cols)
      throw InputError(name + ": " + where + "[" + std::to_string(i) + "]: expected " + std::to_string(cols) + " entries");
    for (std::size_t j = 0; j < cols; ++j) m[i].push_back(t1_number(r.at(j), name, where));
  }
  return m;
}

std::string t1_q(const Rational& q) {
  const Integer num(q.get_num()), den(q.get_den());
  return "(" + num.get_str() + " # " + den.get_str() + ")";
}

std::string t1_qrow(const std::vector<Rational>& r) {
  std::string s = "[";
  for (std::size_t j = 0; j < r.size(); ++j) s += (j ? "; " : "") + t1_q(r[j]);
  return s + "]";
}

std::string t1_qmat(const QMat& m, const std::string& indent) {
  std::string s = "[";
  for (std::size_t i = 0; i < m.size(); ++i) s += (i ? ";\n" + indent + " " : "") + t1_qrow(m[i]);
  return s + "]";
}

std::string t1_qmats(const std::vector<QMat>& ms, const std::string& indent) {
  std::string s = "[";
  for (std::size_t h = 0; h < ms.size(); ++h) s += (h ? ";\n" + indent + " " : "") + t1_qmat(ms[h], indent + "  ");
  return s + "]";
}

// Text from a certificate inside a Coq comment: printable, with no "(*" or "*)" that would open or close a
// comment and no '"' that would open a string (Coq reads strings inside comments).
std::string t1_comment_text(const std::string& text) {
  std::string s = printable_argument(text, 200), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    out += s[i] == '"' ? '\'' : s[i];
    if (i + 1 < s.size() && ((s[i] == '(' && s[i + 1] == '*') || (s[i] == '*' && s[i + 1] == ')'))) out += ' ';
  }
  return out;
}

using LD = long double;
LD ld(const Rational& q) { return static_cast<LD>(q.get_d()); }

}  // namespace export_coq_theorem1

// `cert_path` was accepted by the independent checker (kind "theorem1").
// `data_file`: the values of the file a certificate with data by reference names, as the checker read and
// accepted them (null for embedded data).
int run_export_coq_theorem1(const std::string& cert_path, const std::string& out, bool json,
                            std::chrono::steady_clock::time_point start, const memcert_checker::AttentionArrays* data_file) {
  using namespace export_coq_theorem1;
  const std::string name = printable_argument(cert_path);
  const nlohmann::json cert = json_parse_text(file_read_all(cert_path), cert_path);
  const nlohmann::json& data = cert.at("data");
  // As the checker decides (theorem1_read.cpp): a "data" object with a "file" replaces contexts and queries.
  const bool by_reference = data.is_object() && data.contains("file");
  if (!by_reference && (!data.contains("contexts") || !data.contains("queries")))
    throw InputError(name + ": data: expected the contexts and queries embedded in the certificate or a data file "
                     "(export coq writes them into Data.v)");
  const std::size_t H = cert.at("H").get<std::size_t>(), n = cert.at("n").get<std::size_t>(),
                    d = cert.at("d").get<std::size_t>(), dh = cert.at("dh").get<std::size_t>(),
                    dv = cert.at("dv").get<std::size_t>(), dout = cert.at("d_out").get<std::size_t>(),
                    T = cert.at("T").get<std::size_t>();
  const bool skip = cert.value("skip", false);
  const bool classes = data.contains("class_labels");
  if (H == 0 || n == 0 || d == 0 || dv == 0 || dout == 0 || T == 0 || T > H * d)
    throw InputError(name + ": expected positive sizes and T <= H d (export coq states rank(Z) = T)");

  // The data and weights, exactly. Data by reference: the checker read the file (data.file, found as
  // `verify` finds it), recomputed the digest of its first T examples and checked the certificate on
  // their values (doubles, each the dyadic rational it equals): the same values here.
  std::vector<QMat> E(T);
  QMat e;
  if (by_reference) {
    if (!data_file || data_file->n != n || data_file->d != d || data_file->T < T ||
        data_file->context_values() != data_file->T * n * d || data_file->queries.size() != data_file->T * d)
      throw std::logic_error("export coq: the referenced data disagree with what the checker accepted");
    for (std::size_t t = 0; t < T; ++t) {
      E[t].assign(n, std::vector<Rational>(d));
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t c = 0; c < d; ++c) E[t][j][c] = Rational(data_file->context_value((t * n + j) * d + c));
    }
    e.assign(T, std::vector<Rational>(d));
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < d; ++c) e[t][c] = Rational(data_file->queries[t * d + c]);
  } else {
    for (std::size_t t = 0; t < T; ++t)
      E[t] = t1_matrix(data.at("contexts").at(t), n, d, name, "data.contexts[" + std::to_string(t) + "]");
    e = t1_matrix(data.at("queries"), T, d, name, "data.queries");
  }
  std::vector<QMat> WQ(H), WK(H), WV(H);
  for (std::size_t h = 0; h < H; ++h) {
    const nlohmann::json& hd = cert.at("weights").at("heads").at(h);
    const std::string w = "weights.heads[" + std::to_string(h) + "]";
    WQ[h] = t1_matrix(hd.at("WQ"), d, dh, name, w + ".WQ");
    WK[h] = t1_matrix(hd.at("WK"), d, dh, name, w + ".WK");
    WV[h] = t1_matrix(hd.at("WV"), d, dv, name, w + ".WV");
  }
  const QMat WO = t1_matrix(cert.at("weights").at("WO"), H * dv, d, name, "weights.WO");
  const QMat WD = t1_matrix(cert.at("weights").at("WD"), d, dout, name, "weights.WD");
  QMat Y;
  std::vector<std::size_t> cls;
  if (classes) {
    for (const auto& c : data.at("class_labels")) cls.push_back(c.get<std::size_t>());
    if (cls.size() != T) throw InputError(name + ": data.class_labels: expected " + std::to_string(T) + " labels");
  } else {
    Y = t1_matrix(data.at("labels"), T, dout, name, "data.labels");
  }

  // Z's centres in long double (witnesses only: Coq recomputes everything from the exact data), the largest
  // |logit - row max| for the precision of the exp enclosures.
  const std::size_t m = H * d;
  std::vector<std::vector<LD>> Zc(T, std::vector<LD>(m, 0));
  LD span = 0;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t h = 0; h < H; ++h) {
      std::vector<LD> kq(dh, 0), a(n, 0);
      for (std::size_t k = 0; k < dh; ++k)
        for (std::size_t c = 0; c < d; ++c) kq[k] += ld(WQ[h][c][k]) * ld(e[t][c]);
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t c = 0; c < d; ++c) {
          LD s = 0;
          for (std::size_t k = 0; k < dh; ++k) s += ld(WK[h][c][k]) * kq[k];
          a[j] += ld(E[t][j][c]) * s;
        }
      const LD mx = *std::max_element(a.begin(), a.end());
      LD S = 0;
      for (std::size_t j = 0; j < n; ++j) {
        span = std::max(span, mx - a[j]);
        a[j] = std::exp(a[j] - mx);
        S += a[j];
      }
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t c = 0; c < d; ++c) Zc[t][h * d + c] += a[j] / S * ld(E[t][j][c]);
    }
  if (!std::isfinite(static_cast<double>(span)))
    throw InputError(name + ": the logits overflow a long double (export coq needs their spread)");
  // Coq encloses exp x below -64 by [0, exp(-64)] (MemcertTheorem1.iexpc): |x| <= 64 sets the precision.
  const unsigned bits = static_cast<unsigned>(std::ceil(std::log2(static_cast<double>(std::min<LD>(span, 64)) + 1))) + 1;
  const unsigned kexp = 2 * bits + 40, prec = kexp + 64;

  // T columns of Z with a well-conditioned block (complete pivoting), M[l][i] = Z[i][C[l]], R ~ M^-1.
  std::vector<std::size_t> C;
  {
    std::vector<std::vector<LD>> A = Zc;
    std::vector<bool> row_used(T, false), col_used(m, false);
    for (std::size_t s = 0; s < T; ++s) {
      std::size_t bi = 0, bj = 0;
      LD best = -1;
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < m; ++j)
          if (!row_used[i] && !col_used[j] && std::fabs(A[i][j]) > best) { best = std::fabs(A[i][j]); bi = i; bj = j; }
      if (!(best > 0)) {
        std::cerr << "undecided: " << name << ": Z's centres have no " << T << " independent columns in long double (nothing exported)\n";
        return kExitUndecided;
      }
      row_used[bi] = col_used[bj] = true;
      C.push_back(bj);
      for (std::size_t i = 0; i < T; ++i) {
        if (row_used[i]) continue;
        const LD f = A[i][bj] / A[bi][bj];
        for (std::size_t j = 0; j < m; ++j) A[i][j] -= f * A[bi][j];
      }
    }
    std::sort(C.begin(), C.end());
  }
  std::vector<std::vector<LD>> M(T, std::vector<LD>(T)), Rinv(T, std::vector<LD>(T, 0));
  for (std::size_t l = 0; l < T; ++l)
    for (std::size_t i = 0; i < T; ++i) M[l][i] = Zc[i][C[l]];
  {
    std::vector<std::vector<LD>> A = M;
    for (std::size_t i = 0; i < T; ++i) Rinv[i][i] = 1;
    for (std::size_t col = 0; col < T; ++col) {
      std::size_t piv = col;
      for (std::size_t i = col + 1; i < T; ++i) if (std::fabs(A[i][col]) > std::fabs(A[piv][col])) piv = i;
      std::swap(A[col], A[piv]);
      std::swap(Rinv[col], Rinv[piv]);
      const LD p = A[col][col];
      if (p == 0) {
        std::cerr << "undecided: " << name << ": Z's selected block is singular in long double (nothing exported)\n";
        return kExitUndecided;
      }
      for (std::size_t j = 0; j < T; ++j) { A[col][j] /= p; Rinv[col][j] /= p; }
      for (std::size_t i = 0; i < T; ++i) {
        if (i == col || A[i][col] == 0) continue;
        const LD f = A[i][col];
        for (std::size_t j = 0; j < T; ++j) { A[i][j] -= f * A[col][j]; Rinv[i][j] -= f * Rinv[col][j]; }
      }
    }
  }
  // R as dyadic rationals with 50 significant bits for its largest entry.
  LD rmax = 0;
  for (const auto& r : Rinv) for (LD x : r) rmax = std::max(rmax, std::fabs(x));
  const int rexp = 50 - static_cast<int>(std::ceil(std::log2(static_cast<double>(rmax) + 1)));
  QMat R(T, std::vector<Rational>(T));
  for (std::size_t a = 0; a < T; ++a)
    for (std::size_t l = 0; l < T; ++l) {
      Integer num;
      mpz_set_d(num.get_mpz_t(), static_cast<double>(std::nearbyint(std::ldexp(Rinv[a][l], rexp))));
      Integer den = 1;
      Rational q;
      if (rexp >= 0) {
        mpz_mul_2exp(den.get_mpz_t(), den.get_mpz_t(), static_cast<unsigned>(rexp));
        q = Rational(mpq_class(num, den));
      } else {
        mpz_mul_2exp(num.get_mpz_t(), num.get_mpz_t(), static_cast<unsigned>(-rexp));
        q = Rational(mpq_class(num, den));
      }
      q.canonicalize();
      R[a][l] = q;
    }
  LD resid = 0;
  for (std::size_t a = 0; a < T; ++a) {
    LD row = 0;
    for (std::size_t i = 0; i < T; ++i) {
      LD s = (a == i) ? 1 : 0;
      for (std::size_t l = 0; l < T; ++l) s -= ld(R[a][l]) * M[l][i];
      row += std::fabs(s);
    }
    resid = std::max(resid, row);
  }
  if (!(resid < 0.5)) {
    std::cerr << "undecided: " << name << ": Z is too close to rank < T for the exported enclosures (|I - R M| ~ "
              << static_cast<double>(resid) << "; nothing exported)\n";
    return kExitUndecided;
  }

  // The files.
  const std::string Ts = std::to_string(T), Hs = std::to_string(H), ds = std::to_string(d),
                    ms = std::to_string(m), douts = std::to_string(dout);
  // Data by reference: the file and its digest, said in the comments (the definitions are as for embedded data).
  const std::string referenced =
      by_reference ? "\n   E and e are the first " + Ts + " examples of the data file " +
                         t1_comment_text(data.at("file").get<std::string>()) +
                         " the certificate references,\n   as memcert's checker read them and recomputed their digest (" +
                         t1_comment_text(data.at("digest").get<std::string>()) + ")."
                   : "";
  std::string data_v =
      "(* The " + Ts + " examples and the attention layer of " + name + " (memcert export coq), as exact rationals.\n"
      "   E[t] is example t's context (n rows of d), e[t] its query; head h has WQ[h], WK[h] (d x dh) and WV[h] (d x dv);\n"
      "   WO is H dv x d, WD d x d_out" + (skip ? "; the read-out adds the query (skip connection)" : "") + "." +
      referenced + " *)\n"
      "From Coq Require Import QArith List.\nImport ListNotations.\n\nLocal Open Scope Q_scope.\n\n"
      "Definition n : nat := " + std::to_string(n) + ".\nDefinition d : nat := " + ds + ".\nDefinition H : nat := " + Hs +
      ".\nDefinition dh : nat := " + std::to_string(dh) + ".\nDefinition dv : nat := " + std::to_string(dv) +
      ".\nDefinition d_out : nat := " + douts + ".\nDefinition T : nat := " + Ts + ".\n"
      "Definition skip : bool := " + (skip ? "true" : "false") + ".\n\n"
      "Definition E : list (list (list Q)) :=\n  " + t1_qmats(E, "  ") + ".\n\n"
      "Definition e : list (list Q) :=\n  " + t1_qmat(e, "  ") + ".\n\n"
      "Definition WQ : list (list (list Q)) :=\n  " + t1_qmats(WQ, "  ") + ".\n\n"
      "Definition WK : list (list (list Q)) :=\n  " + t1_qmats(WK, "  ") + ".\n\n"
      "Definition WV : list (list (list Q)) :=\n  " + t1_qmats(WV, "  ") + ".\n\n"
      "Definition WO : list (list Q) :=\n  " + t1_qmat(WO, "  ") + ".\n\n"
      "Definition WD : list (list Q) :=\n  " + t1_qmat(WD, "  ") + ".\n\n";
  if (classes) {
    data_v += "(* The class of example t. *)\nDefinition cls : list nat := [";
    for (std::size_t t = 0; t < T; ++t) data_v += (t ? "; " : "") + std::to_string(cls[t]);
    data_v += "]%nat.\n";
  } else {
    data_v += "(* The labels: Y[t] in Q^d_out. *)\nDefinition Y : list (list Q) :=\n  " + t1_qmat(Y, "  ") + ".\n";
  }
  std::string cols = "[";
  for (std::size_t l = 0; l < T; ++l) cols += (l ? "; " : "") + std::to_string(C[l]);
  cols += "]%nat";
  const std::string witness_v =
      "(* Witnesses for Theorem1.v (memcert export coq); no theorem depends on their values being right:\n"
      "   a wrong one makes a check false.  prec: enclosures are rounded outward to multiples of 2^-prec;\n"
      "   kexp: exp x = exp(x / 2^kexp)^(2^kexp); cols: T columns of Z; Rwit: an approximate inverse of\n"
      "   M = Z[:, cols]^T (M[l][i] = Z[i][cols[l]]). *)\n"
      "From Coq Require Import QArith List.\nImport ListNotations.\n\nLocal Open Scope Q_scope.\n\n"
      "Definition prec : nat := " + std::to_string(prec) + ".\nDefinition kexp : nat := " + std::to_string(kexp) +
      ".\n\nDefinition cols : list nat := " + cols + ".\n\nDefinition Rwit : list (list Q) :=\n  " + t1_qmat(R, "  ") + ".\n";
  const std::string rank_stmt =
      "Theorem Z_rank_T : forall c : nat -> R,\n"
      "  (forall col, (col < H * d)%nat -> rsum T (fun t => c t * Zm t col) = 0) ->\n"
      "  forall t, (t < T)%nat -> c t = 0.";
  const std::string label_stmt =
      classes ? "Theorem reproduces_classes : forall t, (t < T)%nat ->\n"
                "  (nth t cls 0 < d_out)%nat /\\\n"
                "  forall r, (r < d_out)%nat -> r <> nth t cls 0%nat -> y_hat t r < y_hat t (nth t cls 0%nat)."
              : "Theorem reproduces_labels : forall t r, (t < T)%nat -> (r < d_out)%nat ->\n"
                "  Rabs (y_hat t r - Q2R (at2 Y t r)) <= Q2R (tolQ (at2 Y t r)).";
  const std::string theorem_v =
      "(* Theorem (mahdavi24 Theorem 1, for the " + Ts + " examples and the weights of Data.v): the " + Ts + " x " + ms +
      " matrix Z of this\n   " + Hs + "-head attention layer on these " + Ts + " examples has rank " + Ts +
      " (Z_rank_T: its rows are linearly independent over the reals), and the\n   layer's read-out " +
      (classes ? "puts every example's class strictly ahead of every other output (reproduces_classes).\n"
               : "reproduces every label within |y_hat - y| <= 2^-20 max(1, |y|) (reproduces_labels).\n") +
      "\n"
      "   Over Coq's real numbers R, with MemcertTheorem1.v's definitions (Section Model):\n"
      "     logit h t j = E[t]_j WK[h] WQ[h]^T e[t]                 (an exact rational)\n"
      "     alpha h t j = exp (logit h t j) / sum_k exp (logit h t k) (Rtrigo_def.exp, the softmax)\n"
      "     p h t c     = sum_j alpha h t j E[t]_(j,c),   Zm t (h d + c) = p h t c   (row t of Z)\n"
      "     y_hat t     = WD^T (WO^T [WV[1]^T p 1 t; ...; WV[H]^T p H t]" + (skip ? " + e[t]" : "") + ")\n"
      "   tolQ y = 2^-20 max(1, |y|), a rational.\n" +
      (by_reference ? std::string("   The examples (E and e of Data.v) are the first ") + Ts + " of the data file " +
                          t1_comment_text(data.at("file").get<std::string>()) + " the certificate references\n   (digest " +
                          t1_comment_text(data.at("digest").get<std::string>()) + ", recomputed by memcert's checker).\n"
                    : std::string()) +
      "\n"
      "   Exported by memcert export coq from " + name + " (kind theorem1); the proofs compute rational enclosures\n"
      "   of every exp, of Z and of y_hat (MemcertTheorem1." + (classes ? "check_classes" : "check_labels") +
      ", by vm_compute) and apply\n   its soundness theorem. check.sh checks it with coqc. *)\n"
      "From Coq Require Import QArith Reals List.\nFrom Memcert Require Import MemcertTheorem1 Data Witness.\n\n"
      "Open Scope R_scope.\n\n"
      "Definition Zm (t col : nat) : R := Z n d dh E e WQ WK t col.\n"
      "Definition y_hat (t r : nat) : R := yhat n d H dh dv E e WQ WK WV WO WD skip t r.\n\n" +
      "(* One computation of the enclosures for both theorems (the kernel runs it with its virtual machine). *)\n"
      "Lemma checks : " + std::string(classes ? "check_classes" : "check_labels") +
      " n d H dh dv d_out T E e WQ WK WV WO WD skip prec kexp cols Rwit " + (classes ? "cls" : "Y") + " = true.\n"
      "Proof. vm_cast_no_check (eq_refl true). Qed.\n\n" +
      rank_stmt + "\nProof. exact (proj1 (" + (classes ? "check_classes_sound" : "check_labels_sound") +
      " _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ checks)). Qed.\n\n" + label_stmt + "\nProof. exact (proj2 (" +
      (classes ? "check_classes_sound" : "check_labels_sound") +
      " _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ checks)). Qed.\n\nPrint Assumptions Z_rank_T.\nPrint Assumptions " +
      (classes ? "reproduces_classes" : "reproduces_labels") + ".\n";

  cmd_export::make_directory(out);
  file_write_atomic(out + "/MemcertTheorem1.v", kCoqTheorem1Library);
  file_write_atomic(out + "/Data.v", data_v);
  file_write_atomic(out + "/Witness.v", witness_v);
  file_write_atomic(out + "/Theorem1.v", theorem_v);
  file_write_atomic(out + "/check.sh", kTheorem1CheckScript);
  if (::chmod((out + "/check.sh").c_str(), 0755) != 0)
    throw InputError(printable_argument(out) + "/check.sh: cannot make it executable");

  nlohmann::json j{{"exported", true}, {"kind", "theorem1"}, {"T", T}, {"H", H}, {"n", n}, {"d", d},
                   {"labels", classes ? "classes" : "real"}, {"prec", prec}, {"kexp", kexp}, {"out", out},
                   {"files", {"Theorem1.v", "Data.v", "Witness.v", "MemcertTheorem1.v", "check.sh"}}};
  const std::string human = "exported " + name + " (theorem1: rank(Z) = " + Ts + " for the " + Ts + " x " + ms +
                            " matrix Z, and the read-out, checked by the independent checker) to " +
                            printable_argument(out) + "/Theorem1.v\nrun " + printable_argument(out) +
                            "/check.sh to check it with coqc";
  emit(json, j, human, start);
  return kExitHolds;
}

}  // namespace memcert::cli
