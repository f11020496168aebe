// dana24-aot certification: one forward pass of the last position's logits written once (forward<Ops>)
// and run in three arithmetics:
//  * BallOps<double>: midpoint-radius balls whose radii bound |computed - exact| rigorously (the double
//    filter of the ladder);
//  * BallOps<float>: the same with float32 midpoints, emulating PyTorch's float32 forward, the radii then
//    bounding the distance of ANY float32 evaluation (any order, fused or not) from the exact value;
//  * IntervalOps: MPFR intervals with outward rounding at 128/256/512 bits.
//
// Ball radii. Every radius is a bound computed in double from nonnegative quantities with k correctly
// rounded operations, then passed through rounded_ops_up(x, k) >= x (1 + 2^-53)^k + k 2^-1074: the rounding errors
// of the bound's own evaluation never make it smaller than the exact bound. A ball (m, r) stands for an
// exact value v with |m - v| <= r and, in the float32 pass, |v^ - v| <= r for every float32 evaluation
// v^; then |v^| <= |m| + 2r =: mag. Rules (u: unit roundoff of the midpoint type, eta: its smallest
// subnormal, gamma_n = n u / (1 - n u)):
//  * dot / linear map of n terms (weight w with float32 rounding error e): |w^ x^ - w x| <= |w^| r_x +
//    mag_x e, and summation in any order adds gamma_n sum |w^| mag_x (Higham, Thm 3.1), plus eta per
//    nonzero product for underflow;
//  * a + b: r_a + r_b + u (mag_a + mag_b) (an underflowing sum is exact);
//  * softmax: see softmax() below; GELU: see gelu() below.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <mpfr.h>

#include "memcert/model/dana24_aot.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/threads.hpp"

namespace memcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The bounds of the radii's own evaluation (numeric/dinterval.hpp).
using dbound::gamma_up_exact;
using dbound::rounded_ops_dn;
using dbound::rounded_ops_up;
using dbound::signed_dn;
using dbound::signed_up;

// A weight matrix: exact doubles, row-major, and its float32 rounding with the rounding's error.
struct Mat {
  const double* w = nullptr;
  const float* f = nullptr;
  const double* fe = nullptr;  // |w - f| per entry; null when every entry is a float32
  std::size_t rows = 0, cols = 0;
  Mat sub(std::size_t r0, std::size_t n) const {
    Mat s = *this;
    s.w += r0 * cols;
    s.f += r0 * cols;
    if (s.fe) s.fe += r0 * cols;
    s.rows = n;
    return s;
  }
};

struct Net {
  Mat word_emb, pos_emb, compress, decompress, unemb;
  std::vector<Mat> in_proj, out_proj, w1, b1, w2;
  std::deque<std::vector<float>> f_store;
  std::deque<std::vector<double>> e_store;

  Mat make(const std::vector<double>& w, std::size_t rows, std::size_t cols) {
    Mat m;
    m.w = w.data();
    m.rows = rows;
    m.cols = cols;
    auto& f = f_store.emplace_back(w.size());
    bool exact = true;
    for (std::size_t k = 0; k < w.size(); ++k) {
      f[k] = static_cast<float>(w[k]);  // round to nearest (overflow gives inf: then the float32 pass has no bound)
      exact = exact && static_cast<double>(f[k]) == w[k];
    }
    m.f = f.data();
    if (!exact) {
      auto& e = e_store.emplace_back(w.size());
      for (std::size_t k = 0; k < w.size(); ++k) e[k] = std::abs(w[k] - static_cast<double>(f[k]));  // exact (Sterbenz-like: |w - f| <= ulp)
      m.fe = e.data();
    }
    return m;
  }
  explicit Net(const Dana24Aot& m) {
    word_emb = make(m.word_emb, m.N, m.d);
    pos_emb = make(m.pos_emb, m.S_max, m.d_head);
    unemb = make(m.unemb, m.N, m.d);
    if (m.compress) {
      compress = make(m.compress_w, m.d_head, m.d);
      decompress = make(m.decompress_w, m.d, m.d_head);
    }
    for (std::size_t k = 0; k < m.in_proj.size(); ++k) {
      in_proj.push_back(make(m.in_proj[k], 3 * m.d_head, m.d_head));
      out_proj.push_back(make(m.out_proj[k], m.d_head, m.d_head));
    }
    for (std::size_t l = 0; l < m.mlp_w1.size(); ++l) {
      w1.push_back(make(m.mlp_w1[l], m.width, m.d));
      b1.push_back(make(m.mlp_b1[l], m.width, 1));
      w2.push_back(make(m.mlp_w2[l], m.d, m.width));
    }
  }
};

// exp and erf of a double, correctly rounded to nearest (MPFR at 53 bits): relative error <= 2^-53, or
// absolute <= 2^-1075 when the result is subnormal.
struct Mpfr53 {
  mpfr_t x;
  Mpfr53() { mpfr_init2(x, 53); }
  ~Mpfr53() { mpfr_clear(x); }
  Mpfr53(const Mpfr53&) = delete;
  Mpfr53& operator=(const Mpfr53&) = delete;
  double exp(double a) {
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_exp(x, x, MPFR_RNDN);
    return mpfr_get_d(x, MPFR_RNDN);
  }
  double erf(double a) {
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_erf(x, x, MPFR_RNDN);
    return mpfr_get_d(x, MPFR_RNDN);
  }
};

template <class F>
struct Ball {
  F m = 0;
  double r = 0;
};

template <class F>
struct BallOps {
  using V = Ball<F>;
  static constexpr bool kFloat = std::is_same_v<F, float>;
  static constexpr double u = kFloat ? 0x1p-24 : 0x1p-53;
  static constexpr double eta = kFloat ? 0x1p-149 : 0x1p-1074;
  // Relative error of exp and erf: float32 (PyTorch's kernels) assumed within 2 ulps; double through MPFR.
  static constexpr double fn = kFloat ? 4 * 0x1p-24 : 0x1p-53;
  static constexpr double kBig = kFloat ? 0x1p120 : 0x1p1000;  // beyond this, overflow is not excluded
  bool overflow = false;
  Mpfr53 mp;
  double inv_sqrt_hd_up = 0;  // an upper bound on 1 / sqrt(d_head / heads)
  F inv_sqrt_hd = 0;          // what the midpoints multiply/divide by
  F sqrt_hd = 0;

  explicit BallOps(std::size_t hd) {
    const double s = std::sqrt(static_cast<double>(hd));
    inv_sqrt_hd_up = rounded_ops_up(1.0 / s, 2);
    inv_sqrt_hd = static_cast<F>(1.0 / s);
    sqrt_hd = static_cast<F>(s);
  }

  static double mag(const V& a) { return std::abs(static_cast<double>(a.m)) + 2 * a.r; }
  void note(double magnitude) {
    if (!(magnitude < kBig)) overflow = true;
  }

  V weight(const Mat& W, std::size_t k) const {
    if constexpr (kFloat) return {W.f[k], W.fe ? W.fe[k] : 0.0};
    else return {W.w[k], 0.0};
  }
  V add(const V& a, const V& b) {
    const double A = mag(a), B = mag(b);
    note(A + B);
    return {static_cast<F>(a.m + b.m), rounded_ops_up(a.r + b.r + u * (A + B), 8)};
  }
  V sum(const std::vector<V>& xs) {
    F m = 0;
    double r = 0, s = 0;
    for (const V& x : xs) {
      m = static_cast<F>(m + x.m);
      r += x.r;
      s += mag(x);
    }
    note(s);
    const double n = static_cast<double>(xs.size());
    return {m, rounded_ops_up(r + gamma_up_exact(n, u) * s, 4 * n + 4)};
  }
  // sum_j w_j x_j (+ bias) with weight balls given by (wm, we) (we null: exact weights).
  V dotw(const F* wm, const double* we, const V* x, std::size_t n, const V* bias = nullptr) {
    F acc = 0;
    double r = 0, s = 0, nnz = 0;
    for (std::size_t j = 0; j < n; ++j) {
      acc = static_cast<F>(acc + wm[j] * x[j].m);
      const double aw = std::abs(static_cast<double>(wm[j])), X = mag(x[j]), e = we ? we[j] : 0.0;
      r += aw * x[j].r + X * e;
      s += aw * X;
      if ((aw > 0 || e > 0) && X > 0) ++nnz;
    }
    if (nnz == 0 && r == 0 && !bias) return {acc, 0.0};  // every product exactly 0 in any evaluation
    double terms = static_cast<double>(n);
    if (bias) {
      acc = static_cast<F>(acc + bias->m);
      r += bias->r;
      s += mag(*bias);
      terms += 1;
    }
    note(s);
    return {acc, rounded_ops_up(r + gamma_up_exact(terms, u) * s + nnz * eta, 8 * terms + 8)};
  }
  // y = W x (+ b), W rows x cols.
  void lin(const Mat& W, const V* x, V* y, const Mat* b = nullptr) {
    for (std::size_t i = 0; i < W.rows; ++i) {
      V bias;
      if (b) bias = weight(*b, i);
      if constexpr (kFloat) y[i] = dotw(W.f + i * W.cols, W.fe ? W.fe + i * W.cols : nullptr, x, W.cols, b ? &bias : nullptr);
      else y[i] = dotw(W.w + i * W.cols, nullptr, x, W.cols, b ? &bias : nullptr);
    }
  }
  V dot(const V* a, const V* b, std::size_t n) {
    F acc = 0;
    double r = 0, s = 0, nnz = 0;
    for (std::size_t j = 0; j < n; ++j) {
      acc = static_cast<F>(acc + a[j].m * b[j].m);
      const double A = mag(a[j]), B = mag(b[j]);
      r += A * b[j].r + B * a[j].r;
      s += A * B;
      if (A > 0 && B > 0) ++nnz;
    }
    note(s);
    const double nn = static_cast<double>(n);
    return {acc, rounded_ops_up(r + gamma_up_exact(nn, u) * s + nnz * eta, 8 * nn + 8)};
  }
  // q / sqrt(d_head / heads): PyTorch divides q by the float32 rounding of math.sqrt(E) (relative error of
  // the result <= 2.01 u); the double pass multiplies by the rounded 1/sqrt(E) (<= 3.01 u). Bound 4 u.
  V scale(const V& q) {
    F m;
    if constexpr (kFloat) m = q.m / sqrt_hd;
    else m = q.m * inv_sqrt_hd;
    return {m, rounded_ops_up(inv_sqrt_hd_up * (q.r + 4 * u * mag(q)), 8)};
  }
  // Softmax of scores s_0..s_{n-1} (all unmasked). Any evaluation: M^ = max s^ (an unknown constant),
  // x^_j = fl(s^_j - M^) with |x^_j - (s_j - M^)| <= r_j + u tau_j =: rho_j (tau_j >= M^ - s^_j),
  // e^_j = exp(x^_j)(1 + eps) + alpha, |eps| <= fn, |alpha| <= eta, so e^_j = E_j (1 + eta_j) + alpha with
  // E_j = exp(s_j - M^), |eta_j| <= h_j = e^rho_j (1 + fn) - 1 <= rho_j (1 + rho_j) + fn (1 + rho_j (1 + rho_j))
  // (rho_j <= 1). Z = sum E_j >= exp(-r_max) (the arg-max's term), so the alphas are within n eta e^r_max Z:
  // sum e^ = Z (1 +- h'), h' = max h_j + n eta e^r_max, and the computed sum adds gamma_n. The quotient
  // (or reciprocal and product) adds 3u and eta. Hence |w^_j - w_j| <= R_j w_j + A with
  // R_j = (1 + h_j)(1 + 3u) / ((1 - h')(1 - gamma_n)) - 1 (bounding the lower side as well) and
  // A = eta e^r_max (1 + 3u) / ((1 - h')(1 - gamma_n)) + eta; and w_j <= min(1, (w^_j + A) / (1 - R_j)).
  void softmax(std::vector<V>& s) {
    const std::size_t n = s.size();
    F M = s[0].m;
    double top, rmax = 0;
    for (const V& x : s) {
      M = std::max(M, x.m);
      rmax = std::max(rmax, x.r);
    }
    top = -kInf;  // >= every evaluation's max M^ (each s^_k <= m_k + 2 r_k)
    for (const V& x : s) top = std::max(top, signed_up(static_cast<double>(x.m) + 2 * x.r));
    std::vector<F> e(n);
    F Z = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const F x = static_cast<F>(s[j].m - M);
      if constexpr (kFloat) e[j] = std::exp(x);
      else e[j] = mp.exp(x);
      Z = static_cast<F>(Z + e[j]);
    }
    bool fail = !(rmax <= 1);
    std::vector<double> h(n);
    double hmax = 0;
    for (std::size_t j = 0; j < n && !fail; ++j) {
      // tau_j >= M^ - s^_j: (max_k m_k + 2 r_k) - (m_j - 2 r_j), each bound rounded outward.
      const double tau = std::max(0.0, signed_up(top - signed_dn(static_cast<double>(s[j].m) - 2 * s[j].r)));
      const double rho = rounded_ops_up(s[j].r + u * tau, 4);
      if (!(rho <= 1)) {
        fail = true;
        break;
      }
      const double q = rounded_ops_up(rho * (1 + rho), 3);
      h[j] = rounded_ops_up(q + fn * (1 + q), 3);
      hmax = std::max(hmax, h[j]);
    }
    const double er = rounded_ops_up(1 + rmax * (1 + rmax), 3);  // >= e^rmax for rmax <= 1
    const double hp = rounded_ops_up(hmax + static_cast<double>(n) * eta * er, 3);
    const double g = gamma_up_exact(static_cast<double>(n), u);
    fail = fail || !(hp < 0.5) || !(g < 0.5);
    double den = 0, A = kInf;
    if (!fail) {
      den = rounded_ops_dn(rounded_ops_dn(1 - hp, 1) * rounded_ops_dn(1 - g, 1), 1);
      A = rounded_ops_up(eta * er * (1 + 3 * u) / den + eta, 6);
    }
    for (std::size_t j = 0; j < n; ++j) {
      const F w = static_cast<F>(e[j] / Z);
      double r = kInf;
      if (!fail) {
        const double qj = rounded_ops_up((1 + h[j]) * (1 + 3 * u) / den, 4);
        const double R = rounded_ops_up(qj - 1, 1);
        if (R < 1) {
          const double wbar = std::min(1.0, rounded_ops_up((static_cast<double>(w) + A) / rounded_ops_dn(1 - R, 1), 3));
          r = rounded_ops_up(R * wbar + A, 2);
        }
      }
      s[j] = {w, r};
    }
  }
  // GELU(x) = x/2 (1 + erf(x/sqrt 2)). |GELU'| = |Phi(x) + x phi(x)| <= 1 + phi(1) < 1.25. Evaluated at x^
  // (|x^| <= X): t^ = x^ c^ within 2.01u |x^|/sqrt2 of x^/sqrt2; erf is 2/sqrt(pi)-Lipschitz, so
  // e^ = erf(x^/sqrt2) +- (1.62 u X + fn + eta); s^ = fl(1 + e^) adds u (2 + fn + eta); the product
  // x^ 0.5 s^ (any order) adds 2.01u |0.5 x^ s^| + 1.6 eta, with |s^| <= 2.1 once 1.62 u X < 0.05. Total:
  // 1.25 r + 0.5 X (1.62 u X + fn + eta + 2.01 u) + 2.12 u X + 1.6 eta, bounded below by the formula used.
  V gelu(const V& x) {
    const double X = mag(x);
    F m;
    constexpr double kSqrtHalf = 0.70710678118654752440;  // 1/sqrt(2) to nearest (float: as PyTorch's M_SQRT1_2)
    if constexpr (kFloat) m = x.m * 0.5f * (1.0f + std::erf(x.m * static_cast<float>(kSqrtHalf)));
    else m = x.m * 0.5 * (1.0 + mp.erf(x.m * kSqrtHalf));
    if (!(u * X < 0.01)) return {m, kInf};
    return {m, rounded_ops_up(1.25 * x.r + X * (0.82 * u * X + 0.5 * fn + 0.5 * eta + 3.2 * u) + 2 * eta, 12)};
  }
};

// MPFR intervals at the scope's precision.
struct IntervalOps {
  using V = Interval;
  Interval inv_sqrt_hd, inv_sqrt2, half, one;
  explicit IntervalOps(std::size_t hd)
      : inv_sqrt_hd(Interval(Rational(1)) / interval_sqrt(Interval(Rational(static_cast<long>(hd))))),
        inv_sqrt2(Interval(Rational(1)) / interval_sqrt(Interval(Rational(2)))),
        half(Interval(Rational(0.5))),
        one(Interval(Rational(1))) {}
  static Interval of(double w) { return Interval(Rational(w)); }
  V weight(const Mat& W, std::size_t k) const { return of(W.w[k]); }
  V add(const V& a, const V& b) { return a + b; }
  V sum(const std::vector<V>& xs) {
    V s = xs[0];
    for (std::size_t k = 1; k < xs.size(); ++k) s += xs[k];
    return s;
  }
  void lin(const Mat& W, const V* x, V* y, const Mat* b = nullptr) {
    for (std::size_t i = 0; i < W.rows; ++i) {
      V acc = b ? of(b->w[i]) : V();
      for (std::size_t j = 0; j < W.cols; ++j) {
        const double w = W.w[i * W.cols + j];
        if (w != 0) acc += of(w) * x[j];
      }
      y[i] = std::move(acc);
    }
  }
  V dot(const V* a, const V* b, std::size_t n) {
    V acc;
    for (std::size_t j = 0; j < n; ++j) acc += a[j] * b[j];
    return acc;
  }
  V scale(const V& q) { return q * inv_sqrt_hd; }
  // w_j = 1 / (1 + R_j / e_j), e_j = exp(s_j - c), R_j = sum_{k != j} e_k (prefix and suffix sums): each
  // bound monotone in e_j and R_j, so no dependency widening.
  void softmax(std::vector<V>& s) {
    const std::size_t n = s.size();
    double c = s[0].upper_double_up();
    for (const V& x : s) c = std::max(c, x.upper_double_up());
    if (!std::isfinite(c)) {
      for (V& x : s) x = Interval(Rational(0), Rational(1));
      return;
    }
    const Interval ci = of(c);
    std::vector<V> e(n), pre(n + 1), suf(n + 1);
    for (std::size_t j = 0; j < n; ++j) e[j] = interval_exp(s[j] - ci);
    for (std::size_t j = 0; j < n; ++j) pre[j + 1] = pre[j] + e[j];
    for (std::size_t j = n; j-- > 0;) suf[j] = suf[j + 1] + e[j];  // e_j + ... + e_{n-1}
    for (std::size_t j = 0; j < n; ++j) {
      if (mpfr_sgn(e[j].lo()) <= 0) {
        s[j] = Interval(Rational(0), Rational(1));
        continue;
      }
      const V R = pre[j] + suf[j + 1];
      s[j] = one / (one + R / e[j]);
    }
  }
  V gelu(const V& x) { return x * half * (one + interval_erf(x * inv_sqrt2)); }
};

// The forward pass of one sequence up to the last position's final residual (length d).
template <class Ops>
std::vector<typename Ops::V> forward(const Dana24Aot& m, const Net& net, Ops& ops, const std::int64_t* seq,
                                     std::size_t S) {
  using V = typename Ops::V;
  const std::size_t d = m.d, dh = m.d_head, H = m.heads, hd = dh / H, L = m.layers, P = m.parallel;
  std::vector<std::vector<V>> X(S, std::vector<V>(d));
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t c = 0; c < d; ++c) X[i][c] = ops.weight(net.word_emb, static_cast<std::size_t>(seq[i]) * d + c);
  std::vector<std::vector<V>> C(S, std::vector<V>(dh)), K(S, std::vector<V>(dh)), Vv(S, std::vector<V>(dh));
  std::vector<V> q(dh), qs(hd), o(dh), scores, col, dec(d), hid(m.width), mo(d);
  for (std::size_t l = 0; l < L; ++l) {
    const std::size_t q0 = l + 1 == L ? S - 1 : 0;  // the positions whose outputs are needed
    for (std::size_t i = 0; i < S; ++i) {
      if (m.compress) {
        ops.lin(net.compress, X[i].data(), C[i].data());
        for (std::size_t c = 0; c < dh; ++c) C[i][c] = ops.add(C[i][c], ops.weight(net.pos_emb, i * dh + c));
      } else {
        for (std::size_t c = 0; c < dh; ++c) C[i][c] = ops.add(X[i][c], ops.weight(net.pos_emb, i * dh + c));
      }
    }
    // (resized in place: GCC 12 warns falsely (-Wfree-nonheap-object) on the fill constructor here)
    std::vector<std::vector<std::vector<V>>> block_out(P);
    for (auto& b : block_out) b.resize(S);
    for (std::size_t p = 0; p < P; ++p) {
      const Mat& W = net.in_proj[l * P + p];
      const Mat Wq = W.sub(0, dh), Wk = W.sub(dh, dh), Wv = W.sub(2 * dh, dh);
      for (std::size_t i = 0; i < S; ++i) {
        ops.lin(Wk, C[i].data(), K[i].data());
        ops.lin(Wv, C[i].data(), Vv[i].data());
      }
      for (std::size_t i = q0; i < S; ++i) {
        ops.lin(Wq, C[i].data(), q.data());
        for (std::size_t h = 0; h < H; ++h) {
          for (std::size_t c = 0; c < hd; ++c) qs[c] = ops.scale(q[h * hd + c]);
          scores.assign(i + 1, V());
          for (std::size_t j = 0; j <= i; ++j) scores[j] = ops.dot(qs.data(), K[j].data() + h * hd, hd);
          ops.softmax(scores);
          col.assign(i + 1, V());
          for (std::size_t c = 0; c < hd; ++c) {
            for (std::size_t j = 0; j <= i; ++j) col[j] = Vv[j][h * hd + c];
            o[h * hd + c] = ops.dot(scores.data(), col.data(), i + 1);
          }
        }
        block_out[p][i].assign(dh, V());
        ops.lin(net.out_proj[l * P + p], o.data(), block_out[p][i].data());
      }
    }
    std::vector<V> parts(P), para(dh);
    for (std::size_t i = q0; i < S; ++i) {
      for (std::size_t c = 0; c < dh; ++c) {
        for (std::size_t p = 0; p < P; ++p) parts[p] = block_out[p][i][c];
        para[c] = P == 0 ? V() : ops.sum(parts);
      }
      if (m.compress) ops.lin(net.decompress, para.data(), dec.data());
      else for (std::size_t c = 0; c < d; ++c) dec[c] = para[c];
      for (std::size_t c = 0; c < d; ++c) X[i][c] = ops.add(dec[c], X[i][c]);
      if (m.width > 0) {
        ops.lin(net.w1[l], X[i].data(), hid.data(), &net.b1[l]);
        for (auto& x : hid) x = ops.gelu(x);
        ops.lin(net.w2[l], hid.data(), mo.data());
        for (std::size_t c = 0; c < d; ++c) X[i][c] = ops.add(mo[c], X[i][c]);
      }
    }
  }
  return std::move(X[S - 1]);
}

// Exact margin enclosures from the double pass: min over c != y of (U_y - U_c) . h as balls, the row
// difference rounded with its exact rounding error as the weight's radius (0 when the rows agree).
struct Enclosure {
  double lo = -kInf, hi = kInf;
};
Enclosure margin_double(const Dana24Aot& m, BallOps<double>& ops, const std::vector<Ball<double>>& h, std::size_t y) {
  const std::size_t d = m.d;
  std::vector<double> D(d), De(d);
  Enclosure out;
  out.lo = kInf;
  out.hi = kInf;
  for (std::size_t c = 0; c < m.N; ++c) {
    if (c == y) continue;
    for (std::size_t j = 0; j < d; ++j) {  // TwoSum (Knuth): D + err = U_y - U_c exactly (finite weights)
      const double a = m.unemb[y * d + j], b = -m.unemb[c * d + j];
      const double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
      D[j] = s;
      De[j] = std::isfinite(s) ? std::abs(err) : kInf;
    }
    const Ball<double> b = ops.dotw(D.data(), De.data(), h.data(), d);
    double lo, hi;
    if (!std::isfinite(b.m) || !(b.r < kInf)) return Enclosure{};
    if (b.r == 0) lo = hi = b.m;
    else {
      lo = dbound::sub_dn(b.m, b.r);
      hi = dbound::add_up(b.m, b.r);
    }
    out.lo = std::min(out.lo, lo);
    out.hi = std::min(out.hi, hi);
  }
  if (ops.overflow) return Enclosure{};
  return out;
}

struct F32Result {
  double margin = 0, bound = kInf;
};
F32Result margin_float(const Dana24Aot& m, const Net& net, BallOps<float>& ops, const std::vector<Ball<float>>& h,
                       std::size_t y) {
  std::vector<Ball<float>> logits(m.N);
  ops.lin(net.unemb, h.data(), logits.data());
  F32Result out;
  double worst_other = -kInf, rmax = 0;
  for (std::size_t c = 0; c < m.N; ++c)
    if (c != y) {
      worst_other = std::max(worst_other, static_cast<double>(logits[c].m));
      rmax = std::max(rmax, logits[c].r);
    }
  out.margin = static_cast<double>(logits[y].m) - worst_other;
  const double B = rounded_ops_up(logits[y].r + rmax + 0x1p-52 * std::abs(out.margin), 4);
  out.bound = (ops.overflow || !std::isfinite(out.margin) || !(B < kInf)) ? kInf : B;
  return out;
}

// One MPFR pass; the margin enclosure as an interval.
Interval margin_interval(const Dana24Aot& m, const Net& net, const std::int64_t* seq, std::size_t S, std::size_t y) {
  IntervalOps ops(m.heads == 0 ? 1 : m.d_head / m.heads);
  const std::vector<Interval> h = forward(m, net, ops, seq, S);
  const std::size_t d = m.d;
  Interval best;
  bool first = true;
  for (std::size_t c = 0; c < m.N; ++c) {
    if (c == y) continue;
    Interval acc;
    for (std::size_t j = 0; j < d; ++j) {
      const double a = m.unemb[y * d + j], b = m.unemb[c * d + j];
      if (a == b) continue;  // an exact 0 term
      acc += (IntervalOps::of(a) - IntervalOps::of(b)) * h[j];
    }
    if (first) best = acc;
    else best = Interval() - interval_max(Interval() - best, Interval() - acc);  // min
    first = false;
  }
  return best;
}

}  // namespace

ModelVerdicts dana24_aot_certify(const Dana24Aot& m, const Dana24AotData& data, const CertifyOptions& opt) {
  dana24_aot_check_data(m, data);
  const std::size_t first = opt.first_of(data.T);
  const std::size_t count = opt.count_of(data.T);
  ModelVerdicts v = model_verdicts_undecided(count);
  if (count == 0) return v;
  const Net net(m);
  const std::size_t hd = m.layers > 0 ? m.d_head / m.heads : 1;
  std::mutex progress_mutex;
  std::size_t done = 0;
  const int threads = opt.threads ? static_cast<int>(opt.threads) : fast_threads();
  parallel_for(count, threads, [&](std::size_t k) {
    const std::size_t t = first + k;
    const std::int64_t* seq = data.sequences.data() + t * data.S;
    const auto y = static_cast<std::size_t>(data.next[t]);
    // The double filter.
    ExampleVerdict verdict = ExampleVerdict::undecided;
    short bits = 0;
    {
      BallOps<double> ops(hd);
      const auto h = forward(m, net, ops, seq, data.S);
      const Enclosure e = margin_double(m, ops, h, y);
      v.margin_lo[k] = e.lo;
      v.margin_hi[k] = e.hi;
      if (e.lo > 0) verdict = ExampleVerdict::correct;
      else if (e.hi <= 0) verdict = ExampleVerdict::wrong;
      if (verdict != ExampleVerdict::undecided) bits = 53;
    }
    for (int prec : {128, 256, 512}) {
      if (verdict != ExampleVerdict::undecided || prec > opt.max_bits) break;
      Interval::PrecisionScope scope(prec);
      Interval e;
      try {
        e = margin_interval(m, net, seq, data.S, y);
      } catch (const std::domain_error&) {  // an interval division by one containing 0: no enclosure here
        continue;
      }
      // Both enclosures hold: keep their intersection.
      v.margin_lo[k] = std::max(v.margin_lo[k], e.lower_double_down());
      v.margin_hi[k] = std::min(v.margin_hi[k], e.upper_double_up());
      if (e.is_positive()) verdict = ExampleVerdict::correct;
      else if (mpfr_sgn(e.hi()) <= 0) verdict = ExampleVerdict::wrong;
      if (verdict != ExampleVerdict::undecided) bits = static_cast<short>(prec);
    }
    v.verdict[k] = verdict;
    v.bits[k] = bits;
    // PyTorch's float32 pass.
    {
      BallOps<float> ops(hd);
      const auto h = forward(m, net, ops, seq, data.S);
      const F32Result f = margin_float(m, net, ops, h, y);
      v.float32_margin[k] = f.margin;
      v.float32_error_bound[k] = f.bound;
      bool disagree = true;  // exact comparisons: lo - bound > 0 iff lo > bound
      if (verdict == ExampleVerdict::correct) disagree = !(v.margin_lo[k] > f.bound);
      else if (verdict == ExampleVerdict::wrong) disagree = !(-v.margin_hi[k] >= f.bound);
      v.float32_disagreement[k] = disagree ? 1 : 0;
    }
    if (opt.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      opt.progress(++done, count);
    }
  });
  return v;
}

}  // namespace memcert
