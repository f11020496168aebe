#pragma once
// The multi-head attention layer of mahdavi24 (docs/THEORY.md section 1, eqs. (1)-(6)) in three arithmetics:
//  * exact: the logits a_h = E W_K^h (W_Q^h)^T e are rational for rational weights and data;
//  * interval (MPFR, directed rounding): softmax and everything after it (alpha, p, o, y_hat);
//  * double: a fast approximate forward pass (estimates only, never proofs).
// With skip connection (appendix C), eq. (5) becomes o = W_O^T [o_1; ...; o_H] + e.
#include <cstddef>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/numeric/interval.hpp"

namespace memcert {

// One head: W_K, W_Q (d x d_h), W_V (d x d_v).
struct MhaHead {
  QMatrix WK, WQ, WV;
};
// H heads, W_O (H d_v x d), read-out W_D (d x d_out).
struct MhaWeights {
  std::vector<MhaHead> heads;
  QMatrix WO, WD;
  std::size_t H() const { return heads.size(); }
};

// ---- exact ------------------------------------------------------------------------------------------
// (1) logits E W_K W_Q^T e, exactly. E: n x d, e: length d.
QVector mha_logits_exact(const QMatrix& E, const QMatrix& WK, const QMatrix& WQ, const QVector& e);

// A rational matrix as (integer numerator matrix) / (one common positive denominator): the form used
// for fast exact products (mpz dot products instead of canonicalised mpq arithmetic).
struct ScaledMatrix {
  ZMatrix num;
  Integer den = 1;
  std::size_t rows() const { return num.rows(); }
  std::size_t cols() const { return num.cols(); }
};
ScaledMatrix scaled_from_qmat(const QMatrix& a);
// A rational vector as integer numerators over one common denominator.
struct ScaledVector {
  std::vector<Integer> num;
  Integer den = 1;
};
ScaledVector scaled_from_qvec(const QVector& v);
// y = A x (A transposed when `transpose`), exactly, in scaled form.
ScaledVector scaled_mat_vec(const ScaledMatrix& a, const ScaledVector& x, bool transpose = false);
QVector scaled_to_qvec(const ScaledVector& v);

// Exact logits through the scaled form: E (W_K (W_Q^T e)). Same result as mha_logits_exact, faster.
QVector mha_logits_scaled(const ScaledMatrix& E, const ScaledMatrix& WK, const ScaledMatrix& WQ,
                          const ScaledVector& e);

// ---- interval ---------------------------------------------------------------------------------------
// (2) softmax of exact logits as rigorous enclosures: alpha_j = x_j / sum_k x_k with
// x_k = exp(a_k - max a) (one exp per entry; every alpha_j enclosure is clipped to [0, 1]).
std::vector<Interval> softmax_enclosure(const QVector& logits);
std::vector<Interval> softmax_enclosure(const std::vector<Interval>& logits);

// The whole forward pass as enclosures: alpha_h, p_h (eq. 3), o_h (eq. 4), o (eq. 5), y_hat (eq. 6).
struct MhaIntervalPass {
  std::vector<std::vector<Interval>> alpha;  // H x n
  std::vector<std::vector<Interval>> p;      // H x d (row of Z: [p_1; ...; p_H])
  std::vector<Interval> o;                   // d
  std::vector<Interval> y;                   // d_out
};
MhaIntervalPass mha_forward_interval(const QMatrix& E, const QVector& e, const MhaWeights& w, bool skip);

// ---- double (estimates) -----------------------------------------------------------------------------
struct MhaDoublePass {
  std::vector<std::vector<double>> alpha, p;
  std::vector<double> o, y;
};
MhaDoublePass mha_forward_double(const QMatrix& E, const QVector& e, const MhaWeights& w, bool skip);

// ---- fast enclosure kernel for rows of Z ------------------------------------------------------------
// The logits a + c s of one example for a family of scales c >= 0 (a, s exact, in scaled form), held as
// MPFR enclosures [a_lo, a_hi], [s_lo, s_hi] at precision `prec`: each value of c then costs two
// multiplications and two additions per logit instead of big-integer conversions. s null: s = 0.
// An integer vector known only through bounds, times an exact factor: the values are factor * x_k with
// lo[k] <= x_k <= hi[k] (doubles). What an a-priori-bounded floating-point product gives (logits of examples
// whose exact values nothing needs).
struct ScaledBounds {
  std::vector<double> lo, hi;
  Rational factor = 1;
};

class AffineLogits {
 public:
  AffineLogits(const ScaledVector& a, const ScaledVector* s, mpfr_prec_t prec);
  // The same with a known through bounds: a_k in a.factor [a.lo[k], a.hi[k]] (finite, ordered; s exact).
  AffineLogits(const ScaledBounds& a, const ScaledVector* s, mpfr_prec_t prec);
  AffineLogits(const AffineLogits&) = delete;
  AffineLogits& operator=(const AffineLogits&) = delete;
  AffineLogits(AffineLogits&&) noexcept = default;
  AffineLogits& operator=(AffineLogits&&) noexcept = default;
  std::size_t n() const { return dbl_.empty() ? alo_.size() : dbl_.size() / 3; }
  bool has_s() const { return dbl_.empty() ? slo_.size() > 0 : dbl_s_; }
  // Compacts for storage (Theorem 1 keeps H T of these for its c_network grid): a's ends as doubles rounded
  // outward; s, given again exactly with an integer `factor` that divides every numerator (s = f v with
  // f = factor / s.den enclosed in MPFR once and v_k = s.num_k / factor integers below 2^53, held as
  // doubles), so c s keeps MPFR precision: about 24 bytes per logit instead of 68. s null or factor 0: s = 0
  // (only when the logits have no s or s is zero). Returns false, unchanged, when a value does not fit.
  bool compact(const ScaledVector* s, const Integer* factor);
  // a and s as doubles rounded outward: alo[k] <= a_k <= ahi[k], slo[k] <= s_k <= shi[k] (s = 0 when the
  // logits have none), n values each. For a filter that tries many scales c in double arithmetic (a few
  // ulps of c s wider than bounds()). False when a bound is not finite.
  bool outward_doubles(double* alo, double* ahi, double* slo, double* shi) const;
  // Encloses the logits at scale c (c >= 0, exact): lo[k] <= a_k + c s_k <= hi[k], at the precision of lo/hi.
  void bounds(const Rational& c, mpfr_ptr lo, mpfr_ptr hi, std::size_t k, mpfr_ptr c_lo, mpfr_ptr c_hi,
              mpfr_ptr tmp) const;

  // MPFR numbers of one precision packed without their own allocations (significand limbs, exponent and
  // kind in three arrays, read back through MPFR's custom interface): about 17 bytes per number at 64 bits
  // instead of a struct and a heap block (about 64). Theorem 1 keeps one AffineLogits per head and example
  // (H T of them: 4 GB of MPFR blocks at H = 64, T = 4033).
  class Packed {
   public:
    void push(mpfr_srcptr x);
    std::size_t size() const { return kind_.size(); }
    mpfr_prec_t precision() const { return prec_; }
    // A read-only view of number i (its significand is this object's storage: do not modify the view).
    void view(std::size_t i, __mpfr_struct& out) const;

   private:
    mpfr_prec_t prec_ = 0;
    std::size_t limbs_per_ = 0;
    std::vector<mp_limb_t> limbs_;
    std::vector<mpfr_exp_t> exp_;
    std::vector<signed char> kind_;
  };

 private:
  Packed alo_, ahi_, slo_, shi_;  // after compact(): slo_, shi_ hold f's two ends (when s != 0)
  std::vector<double> dbl_;        // after compact(): a_lo, a_hi, v per logit
  bool dbl_s_ = false;
};


// The tokens of one context as double midpoint-radius enclosures (exact when the entries are dyadic), so
// that many rows p = E^T softmax(a) can be enclosed quickly: logits enclosed in MPFR at `prec` bits, the
// softmax and the mixing in double with rigorous error bounds (see mha.cpp). Used by Theorem 1's construction.
class ContextEnclosure {
 public:
  ContextEnclosure(const QMatrix& E, mpfr_prec_t prec);
  // From exact doubles (n x d, row-major): the values themselves, radius 0.
  ContextEnclosure(const double* E, std::size_t n, std::size_t d, mpfr_prec_t prec);
  // From integer numerators over 2^k (n x d, row-major; the values are num 2^-k, each exactly a double):
  // NOT copied -- `num` must outlive this object (it shares ScaledDataset::context_doubles). Each value is
  // formed as num * 2^-k, exact because the result is representable. k > 1074: copied instead.
  ContextEnclosure(const double* num, int k, std::size_t n, std::size_t d, mpfr_prec_t prec);

  std::size_t n() const { return n_; }
  std::size_t d() const { return d_; }
  // Encloses p = E^T softmax(logits): writes a double centre and a double radius per coordinate with
  // |p_k - centre_k| <= radius_k guaranteed (radius rounded upward).
  void mix(const QVector& logits, double* centre, double* radius) const;
  // Same for the exact logits a + c s given in scaled form (s may be null: logits a). Avoids rational
  // canonicalisation: the logits are enclosed directly from integer numerators.
  void mix_scaled(const ScaledVector& a, const ScaledVector* s, const Rational& c, double* centre,
                  double* radius) const;
  // Same for the logits a + c s held as an AffineLogits (c >= 0).
  void mix_affine(const AffineLogits& logits, const Rational& c, double* centre, double* radius) const;
  // Same for the limit row E_j (a token): centre = nearest double, radius = its rounding error bound.
  void token(std::size_t j, double* centre, double* radius) const;

 private:
  void mix_alpha(double* centre, double* radius) const;  // p from this thread's alpha bounds
  void column_bounds();                                   // fills colabs_
  std::size_t n_ = 0, d_ = 0;
  mpfr_prec_t prec_ = 64;
  std::vector<double> em_, er_;  // n*d: E_jc in [em +- er] (er = 0 for dyadic entries; er_ empty when all are)
  const double* ext_ = nullptr;  // shared numerators instead of em_ (er_ then empty): E_jc = ext_[jc] * scale_
  double scale_ = 1.0;           // 2^-k
  // Row j's exact values: a pointer into em_, or the shared numerators scaled into `buf` (d_ doubles).
  const double* row(std::size_t j, double* buf) const;
  std::vector<double> colabs_;   // d: upper bounds on sum_j |em_jc| + er_jc
};

}  // namespace memcert
