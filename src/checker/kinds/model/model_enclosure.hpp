#pragma once
// Kind "model": the two arithmetics the forward passes of a trained model run in (docs/CERTIFICATES.md,
// kind "model"). Both enclose every exact real value the forward pass computes from the stored weights
// and data (every value a double, exactly):
//  * DoubleEnc: IEEE doubles in midpoint-radius form, |exact - m| <= r, every radius from a rigorous
//    bound (gamma_k bounds of float_kernels.hpp, outward rounding by up()/dn(), exp enclosed by a
//    reduction to [-ln2/2, ln2/2] and a Taylor polynomial with its error bounded, erf by MPFR);
//  * MpfrEnc: MPFR intervals [lo, hi] at a chosen precision with directed rounding.
// A forward pass is written once as a template over the arithmetic (forward_*.cpp). Every operation
// returns false when a value is not finite; nothing is certified then.
#include <mpfr.h>
#include <gmpxx.h>

#include <cstddef>
#include <string>
#include <vector>

namespace memcert_checker::model_kind {

// Bounds [lo, hi] of a margin or an error, exact (the ends of the enclosure as rationals: an MPFR
// enclosure keeps its precision up to the comparison with a tolerance or min_margin).
struct Bounds {
  mpq_class lo, hi;
};

// ---- doubles, midpoint-radius ----------------------------------------------------------------------
struct DoubleEnc {
  static constexpr bool kDouble = true;
  struct Vec {  // entry i in [m_i - r_i, m_i + r_i]
    std::vector<double> m, r;
    std::size_t size() const { return m.size(); }
  };
  struct Mat {  // rows x cols, row-major, entry in [m - r, m + r] (r empty: exact)
    std::size_t rows = 0, cols = 0;
    std::vector<double> m, r;
  };
  explicit DoubleEnc(long /*prec*/ = 53) {}
  void set_exact(Vec& v, const double* x, std::size_t n) const;
  bool set_row(Mat& M, std::size_t i, const Vec& v) const;                           // row i := v
  void row(const Mat& M, std::size_t i, Vec& v) const;                               // v := row i
  void resize(Mat& M, std::size_t rows, std::size_t cols) const;
  void slice(const Vec& v, std::size_t off, std::size_t len, Vec& out) const;  // out := v[off, off + len)
  void place(Vec& dst, std::size_t off, const Vec& src) const;                 // dst[off + i] := src[i]
  // y = W x, W exact (rows x cols, row-major).
  bool mv_exact(const double* W, std::size_t rows, std::size_t cols, const Vec& x, Vec& y) const;
  // y_j = M_j . x for rows j0 <= j < j1 of M (y has j1 - j0 entries).
  bool mv(const Mat& M, std::size_t j0, std::size_t j1, const Vec& x, Vec& y) const;
  // p = sum_{j0 <= j < j1} alpha_{j - j0} M_j.
  bool mix(const Mat& M, std::size_t j0, std::size_t j1, const Vec& alpha, Vec& p) const;
  bool add(Vec& y, const Vec& x) const;                       // y += x
  bool add_exact(Vec& y, const double* b) const;              // y += b (exact, y.size() values)
  bool scale_inv_sqrt(Vec& y, std::size_t k) const;           // y /= sqrt(k)
  bool softmax(Vec& s) const;                                 // s := softmax(s)
  bool gelu(Vec& y) const;                                    // y := y Phi(y) (exact GELU)
  // min_{c != y} (W_y - W_c) . o + (b_y - b_c) enclosed (W: C x cols exact, b: C values or null).
  bool class_margin(const double* W, const double* b, std::size_t C, std::size_t y, const Vec& o, Bounds& out) const;
  // max_c |f_c - target_c| enclosed (targets exact rationals).
  bool abs_error(const Vec& f, const std::vector<mpq_class>& target, Bounds& out) const;
};

// ---- MPFR intervals ---------------------------------------------------------------------------------
class MpfrVec {
 public:
  MpfrVec() = default;
  MpfrVec(const MpfrVec&) = delete;
  MpfrVec& operator=(const MpfrVec&) = delete;
  ~MpfrVec() { clear(); }
  void resize(std::size_t n, mpfr_prec_t prec);  // entries [0, 0] after a change of size or precision
  std::size_t size() const { return lo_.size(); }
  mpfr_ptr lo(std::size_t i) { return &lo_[i]; }
  mpfr_ptr hi(std::size_t i) { return &hi_[i]; }
  mpfr_srcptr lo(std::size_t i) const { return &lo_[i]; }
  mpfr_srcptr hi(std::size_t i) const { return &hi_[i]; }

 private:
  void clear();
  std::vector<__mpfr_struct> lo_, hi_;
  mpfr_prec_t prec_ = 0;
};

struct MpfrEnc {
  static constexpr bool kDouble = false;
  using Vec = MpfrVec;
  struct Mat {
    std::size_t rows = 0, cols = 0;
    MpfrVec v;  // row-major
  };
  mpfr_prec_t prec;
  explicit MpfrEnc(long p) : prec(static_cast<mpfr_prec_t>(p)) {}
  void set_exact(Vec& v, const double* x, std::size_t n) const;
  bool set_row(Mat& M, std::size_t i, const Vec& v) const;
  void row(const Mat& M, std::size_t i, Vec& v) const;
  void resize(Mat& M, std::size_t rows, std::size_t cols) const;
  void slice(const Vec& v, std::size_t off, std::size_t len, Vec& out) const;
  void place(Vec& dst, std::size_t off, const Vec& src) const;
  bool mv_exact(const double* W, std::size_t rows, std::size_t cols, const Vec& x, Vec& y) const;
  bool mv(const Mat& M, std::size_t j0, std::size_t j1, const Vec& x, Vec& y) const;
  bool mix(const Mat& M, std::size_t j0, std::size_t j1, const Vec& alpha, Vec& p) const;
  bool add(Vec& y, const Vec& x) const;
  bool add_exact(Vec& y, const double* b) const;
  bool scale_inv_sqrt(Vec& y, std::size_t k) const;
  bool softmax(Vec& s) const;
  bool gelu(Vec& y) const;
  bool class_margin(const double* W, const double* b, std::size_t C, std::size_t y, const Vec& o, Bounds& out) const;
  bool abs_error(const Vec& f, const std::vector<mpq_class>& target, Bounds& out) const;
};

// exp(x) enclosed in doubles: lo <= exp(x) <= hi (false for x above 709 or NaN).
bool exp_bounds(double x, double& lo, double& hi);

}  // namespace memcert_checker::model_kind
