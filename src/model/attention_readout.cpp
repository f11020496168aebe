// Certified evaluation of one attention layer read at its query token (attention_readout.hpp).
//
// ERROR ANALYSIS OF THE DOUBLE FILTER (u = 2^-53, eta = 2^-1074, gamma_k = k u / (1 - k u)). A sum of k
// products computed in round-to-nearest in any order, fused or not, is within gamma_k sum |a||b| + k eta of
// the exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 3.1); an operand a' = a + e with
// |e| <= r adds sum r |b|. Every quantity of the bound is a non-negative double computed with each
// operation rounded upward (the next double after round-to-nearest), so each bound holds for the exact
// values. Per example (x_j the exact embedded tokens, x^_j the computed ones, ||.|| the max norm):
//  * embedding: ||x_j - x^_j|| <= ex_j = gamma_{d_in+2} (max_k ||We_k.||_1 ||t_j|| + max_k (|be_k| + |pe_jk|))
//    + (d_in + 2) eta (0 without an embedding: the tokens are the data).
//  * q^_c = fl(sum_l Wq_lc x^_0l + bq_c): |q_c - q^_c| <= eq_c = |Wq_.c|_1 ex_0 + gamma_{D+1} (|Wq_.c|_1
//    ||x^_0|| + |bq_c|) + (D + 1) eta.
//  * u^ = fl(Wk q^) (D): sum_k |u_k - u^_k| <= eu1 = sum_c |Wk_.c|_1 (eq_c + gamma_dh |q^_c|) + D dh eta
//    (the double sum over k and c rearranged exactly).
//  * raw score r^_j = fl(u^ . x^_j): |r_j - r^_j| <= (|u^|_1 + eu1) ex_j + eu1 ||x^_j|| + gamma_D |u^|_1 ||x^_j||
//    + D eta (the key bias bk adds q . bk to every score of a head: softmax ignores it, exactly).
//  * scaled score s^_j = fl(r^_j sc) with sc = fl(1 / fl(sqrt m)) (IEEE sqrt and division are correctly
//    rounded, so |sc - 1/sqrt m| <= gamma_3 sc): |s_j - s^_j| <= sc (1 + 2 gamma_3) |r_j - r^_j| + gamma_5 |s^_j|
//    + eta; d^_j = fl(s^_j - max s^) adds u |d^_j| (relative rounding of the subtraction). With
//    Delta = max_j of these and y = 2 Delta <= 1/2, the exact softmax weights of the exact scores are those of
//    the logits d^_j times factors in [e^-y, e^y].
//  * softmax of d^: e_j = exp_nonpositive_bounded(d^_j) (|e_j - exp(d^_j)| <= rho exp(d^_j) + tau, rho = 2^-44,
//    tau = 2^-1020, proved in numeric/exp_bounded.cpp), S^ = fl(sum e_j) >= 1 (the maximum's e is exp(0) = 1 exactly),
//    a^_j = fl(e_j / S^). Then exp(d^_j) / sum exp(d^) lies within a^_j kappa + 2 tau of a^_j with
//    kappa = 2 (u + 2 rho + gamma_n + 2 n tau) (a product of factors 1 + z_i, 1 / (1 - z_i) with sum z_i <= 2^-10
//    is within 2 sum z_i of 1), and so |a_j - a^_j| <= K a^_j + nu with K = kappa + (y + y^2)(1 + kappa)
//    (e^y - 1 <= y + y^2 for y <= 1/2), nu = 8 tau.
//  * values v^_jc = fl(Wv_.c . x^_j + bv_c): |v - v^| <= ev_c = |Wv_.c|_1 max_j ex_j + gamma_{D+1} (|Wv_.c|_1
//    max_j ||x^_j|| + |bv_c|) + (D + 1) eta; o^_c = fl(sum_j a^_j v^_jc):
//    |o_c - o^_c| <= K (av_c + asum ev_c) + nu (sv_c + n ev_c) + asum ev_c + gamma_n av_c + n eta, with
//    av_c = sum a^_j |v^_jc|, sv_c = sum |v^_jc|, asum = sum a^_j (computed sums of non-negative terms, made upper
//    bounds by the factor 1 + 2 gamma_{n+2}).
//  * out and logits: matrix-vector products with exact weights and enclosed inputs, bounded componentwise:
//    |Wo|^T eo + gamma_{H dv + 2} (|Wo|^T |o^| + |bo| + skip |x^_0|) + skip ex_0, and the same for the read-out.
//  * margin: the differences of computed logits are enclosed by their neighbouring doubles, then widened by
//    the two logits' bounds. Rows of the final layer that are identical (weights and bias, bit for bit) give
//    exactly equal logits: their margin term is exactly 0.
// A non-finite value anywhere makes the filter prove nothing (the example escalates).
//
// MPFR LADDER: the same graph in interval arithmetic with every operation rounded outward (products of an
// interval by an exact double take the end the sign selects; interval by interval the extreme of the four
// end products; exp is increasing, so exp(lo) rounded down and exp(hi) rounded up enclose it; softmax as
// exp(s_j - M) / sum with one constant M, each alpha enclosed as [e_lo / S_hi, e_hi / S_lo]).
//
// FLOAT32 BOUND (u32 = 2^-24, eta32 = 2^-126 so that flushed subnormals are covered). PyTorch's float32
// graph computes x = We t + be (+ pe), Q = Wq^T x_0 + bq, every key K_j = Wk^T x_j + bk, Q . K_j, the scale
// (at most three more roundings: rounding sqrt, a reciprocal, the product, or sqrt(scale) on both sides),
// softmax (x - max, exp, sum, a division or a product by the reciprocal), alpha . V, Wo, the read-out. Each
// dot product of length k is bounded by gamma32_{k+2} sum |a||b| (the +2: inputs and float64 weights rounded
// to float32 once), for any order of evaluation and blocking, fused or not; exp of the float32 library is
// taken within 2^-18 relative (64 units of 2^-24: SLEEF's u10 exp is within 1, PyTorch's fast polynomial
// within 20). Magnitudes of the exact intermediate values come from the double filter's enclosures.
// The bound is a-priori: it holds for every float32 evaluation of that graph, so an example whose exact
// margin is farther than it from the threshold gets PyTorch's float32 verdict too.
#include "memcert/model/attention_readout.hpp"

#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "memcert/numeric/exp_bounded.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/mpfr_array.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/threads.hpp"

namespace memcert {

void ReadoutExamples::set_labels(bool classify, const std::int64_t* class_labels, const Rational* exact_targets,
                                 const std::string& tolerance_text) {
  classification = classify;
  if (classify) {
    classes = class_labels;
    return;
  }
  targets = exact_targets;
  const auto tol = rational_parse(tolerance_text);
  if (!tol || *tol < 0) throw InputError("--tolerance: expected an exact non-negative number, got '" + tolerance_text + "'");
  tolerance = *tol;
}


namespace {

constexpr double kU = 0x1p-53, kEta = 0x1p-1074;
constexpr double kU32 = 0x1p-24, kEta32 = 0x1p-126;
constexpr double kTorchExp32 = 0x1p-18;
const double kInf = std::numeric_limits<double>::infinity();

using dbound::add_up;
using dbound::dn;
using dbound::mul_up;
using dbound::up;
double gam(double k, double u) { return dbound::gamma_up(k, u); }

// y[0:n] += a x[0:n]: the one kernel of every product below (vectorizable without reassociation).
__attribute__((target_clones("avx512f", "avx2", "default"))) void axpy(double* y, const double* x, double a,
                                                                        std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void axpy32(float* y, const float* x, float a,
                                                                          std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// The model prepared for the kernels: transposed layouts, float32 copies, norms.
struct Prepared {
  const AttentionReadout& net;
  std::size_t n = 0, N = 0;  // key tokens, all tokens
  std::size_t Hdh = 0, Hdv = 0;
  std::vector<double> WeT, WqA, WkT, WvA, absWo, WrT, absWrT, absWqA, absWkT, absWeT;
  std::vector<float> WeT32, be32, pe32, WqA32, bq32, WkT32, bk32, WvA32, bv32, Wo32, bo32, WrT32, br32;
  double we1max = 0;
  std::vector<double> bpe;            // N: max_k |be_k| + |pe_jk|
  std::vector<double> wq1, wk1, wv1;  // column 1-norms (upward)
  double sc = 1, scu = 1;             // computed scale and an upper bound of the exact one
  float sc32 = 1;
  std::vector<unsigned char> same_row;  // C x C: the final layer's rows c and c' are identical
  // Constants of the bounds.
  double g_emb, g_D1, g_dh, g_D, g_5, g_n, g_H, g_o, inflN, inflH, inflO, inflD, inflI, kappa;
  double G_e, G_D1, G_dh, G_n1, G_H, G_o, kappa32;
  bool classification = true;
  std::vector<double> tol;  // [lo, hi] of the tolerance (regression)

  Prepared(const AttentionReadout& a, const ReadoutExamples& ex) : net(a) {
    const AttentionReadout& m = net;
    n = ex.n;
    N = n + 1;
    Hdh = m.H * m.dh;
    Hdv = m.H * m.dv;
    const std::size_t D = m.D, di = m.d_in;
    if (m.embed) {
      WeT.assign(di * D, 0.0);
      for (std::size_t k = 0; k < D; ++k)
        for (std::size_t i = 0; i < di; ++i) WeT[i * D + k] = m.We[k * di + i];
      for (std::size_t k = 0; k < D; ++k) {
        double s = 0;
        for (std::size_t i = 0; i < di; ++i) s = add_up(s, std::fabs(m.We[k * di + i]));
        we1max = std::max(we1max, s);
      }
    }
    bpe.assign(N, 0.0);
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t k = 0; k < D; ++k) {
        const double b = (m.be.empty() ? 0.0 : std::fabs(m.be[k])) + 0.0;
        const double p = m.pe.empty() ? 0.0 : std::fabs(m.pe[j * D + k]);
        bpe[j] = std::max(bpe[j], add_up(b, p));
      }
    WqA.assign(D * Hdh, 0.0);
    WkT.assign(Hdh * D, 0.0);
    WvA.assign(D * Hdv, 0.0);
    wq1.assign(Hdh, 0.0);
    wk1.assign(Hdh, 0.0);
    wv1.assign(Hdv, 0.0);
    for (std::size_t h = 0; h < m.H; ++h)
      for (std::size_t l = 0; l < D; ++l) {
        for (std::size_t c = 0; c < m.dh; ++c) {
          const double q = m.Wq[(h * D + l) * m.dh + c], k = m.Wk[(h * D + l) * m.dh + c];
          WqA[l * Hdh + h * m.dh + c] = q;
          WkT[(h * m.dh + c) * D + l] = k;
          wq1[h * m.dh + c] = add_up(wq1[h * m.dh + c], std::fabs(q));
          wk1[h * m.dh + c] = add_up(wk1[h * m.dh + c], std::fabs(k));
        }
        for (std::size_t c = 0; c < m.dv; ++c) {
          const double v = m.Wv[(h * D + l) * m.dv + c];
          WvA[l * Hdv + h * m.dv + c] = v;
          wv1[h * m.dv + c] = add_up(wv1[h * m.dv + c], std::fabs(v));
        }
      }
    absWeT.resize(WeT.size());
    for (std::size_t i = 0; i < WeT.size(); ++i) absWeT[i] = std::fabs(WeT[i]);
    absWqA.resize(WqA.size());
    for (std::size_t i = 0; i < WqA.size(); ++i) absWqA[i] = std::fabs(WqA[i]);
    absWkT.resize(WkT.size());
    for (std::size_t i = 0; i < WkT.size(); ++i) absWkT[i] = std::fabs(WkT[i]);
    absWo.resize(m.Wo.size());
    for (std::size_t i = 0; i < m.Wo.size(); ++i) absWo[i] = std::fabs(m.Wo[i]);
    if (m.readout) {
      WrT.assign(m.d_o * m.C, 0.0);
      absWrT.assign(m.d_o * m.C, 0.0);
      for (std::size_t c = 0; c < m.C; ++c)
        for (std::size_t k = 0; k < m.d_o; ++k) {
          WrT[k * m.C + c] = m.Wr[c * m.d_o + k];
          absWrT[k * m.C + c] = std::fabs(m.Wr[c * m.d_o + k]);
        }
    }
    auto f32 = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
    WeT32 = f32(WeT), be32 = f32(m.be), pe32 = f32(m.pe), WqA32 = f32(WqA), bq32 = f32(m.bq), WkT32 = f32(WkT);
    bk32 = f32(m.bk), WvA32 = f32(WvA), bv32 = f32(m.bv), Wo32 = f32(m.Wo), bo32 = f32(m.bo), WrT32 = f32(WrT);
    br32 = f32(m.br);
    if (m.scale_m != 1) {
      const double r = std::sqrt(double(m.scale_m));
      sc = 1.0 / r;
      scu = mul_up(sc, up(1.0 + up(2.0 * gam(3, kU))));
      sc32 = float(1.0 / std::sqrt(double(m.scale_m)));
    }
    // Identical final-layer rows: equal logits whatever the input.
    same_row.assign(m.C * m.C, 0);
    for (std::size_t c = 0; c < m.C; ++c)
      for (std::size_t e = 0; e < m.C; ++e) {
        if (c == e) continue;
        bool same = true;
        if (m.readout) {
          for (std::size_t k = 0; k < m.d_o && same; ++k) same = m.Wr[c * m.d_o + k] == m.Wr[e * m.d_o + k];
          if (same && !m.br.empty()) same = m.br[c] == m.br[e];
        } else {
          same = !m.skip;
          for (std::size_t i = 0; i < Hdv && same; ++i) same = m.Wo[i * m.d_o + c] == m.Wo[i * m.d_o + e];
          if (same && !m.bo.empty()) same = m.bo[c] == m.bo[e];
        }
        same_row[c * m.C + e] = same;
      }
    const double nn = double(n);
    g_emb = gam(double(di + 2), kU);
    g_D1 = gam(double(D + 1), kU);
    g_dh = gam(double(m.dh), kU);
    g_D = gam(double(D), kU);
    g_5 = gam(5, kU);
    g_n = gam(nn, kU);
    g_H = gam(double(Hdv + 2), kU);
    g_o = gam(double(m.d_o + 1), kU);
    inflN = up(1.0 + up(2.0 * gam(nn + 2, kU)));
    inflH = up(1.0 + up(2.0 * gam(double(Hdv + 2), kU)));
    inflO = up(1.0 + up(2.0 * gam(double(m.d_o + 2), kU)));
    inflD = up(1.0 + up(2.0 * gam(double(D + 2), kU)));
    inflI = up(1.0 + up(2.0 * gam(double(di + 2), kU)));
    kappa = up(2.0 * up(up(up(kU + 2.0 * kExpRelErr) + g_n) + up(2.0 * nn * kExpAbsErr)));
    G_e = gam(double(di + 4), kU32);
    G_D1 = gam(double(D + 3), kU32);
    G_dh = gam(double(m.dh + 6), kU32);
    G_n1 = gam(nn + 3, kU32);
    G_H = gam(double(Hdv + 3), kU32);
    G_o = gam(double(m.d_o + 3), kU32);
    kappa32 = up(2.0 * up(up(up(2.0 * kTorchExp32) + G_n1) + up(2.0 * kU32 + (nn + 1) * 0x1p-120)));
    classification = ex.classification;
    if (!classification) tol = {rational_to_double_down(ex.tolerance), rational_to_double_up(ex.tolerance)};
  }
};

// Per-thread scratch.
struct Work {
  std::vector<double> tok, xin, x, xinf, exd, Xb, ex32, ex32v, ex32T, mq, mq32, r, r2, mag, mag2, xT, xaT, q, u, raw, s, dd, del, e, al, V, ev, o, eo, AV, SV, eO32,
      out, eout, m1, e1, lg, elg, m2, e2, Mout, eOut32, eL;
  std::vector<float> tok32, x32, xT32, q32, w32, raw32, al32, V32, o32, out32, lg32;
};

void load_tokens(const ReadoutExamples& ex, std::size_t t, double* tok) {
  const std::size_t d = ex.d;
  if (ex.q32) {
    const Float32Le* q = ex.q32 + t * ex.q_stride;
    for (std::size_t i = 0; i < d; ++i) tok[i] = q[i].value();
  } else {
    const double* q = ex.q64 + t * ex.q_stride;
    std::copy(q, q + d, tok);
  }
  if (ex.k32) {
    const Float32Le* k = ex.k32 + t * ex.k_stride;
    for (std::size_t i = 0; i < ex.n * d; ++i) tok[d + i] = k[i].value();
  } else {
    const double* k = ex.k64 + t * ex.k_stride;
    std::copy(k, k + ex.n * d, tok + d);
  }
}

// Targets of a regression example as doubles enclosing them.
void target_bounds(const ReadoutExamples& ex, std::size_t t, std::size_t c, std::size_t C, double& lo, double& hi) {
  const Rational& q = ex.targets[t * C + c];
  lo = rational_to_double_down(q);
  hi = rational_to_double_up(q);
}

// The margin's enclosure from enclosed logits (centre lg, radius elg).
bool margin_from_logits(const Prepared& P, const ReadoutExamples& ex, std::size_t t, const double* lg, const double* elg,
                        double& lo, double& hi) {
  const std::size_t C = P.net.C;
  if (P.classification) {
    const std::size_t y = std::size_t(ex.classes[t]);
    lo = kInf;
    hi = kInf;
    for (std::size_t c = 0; c < C; ++c) {
      if (c == y) continue;
      double l, h;
      if (P.same_row[y * C + c]) {
        l = h = 0.0;
      } else {
        const double dl = lg[y] - lg[c], err = add_up(elg[y], elg[c]);
        l = dn(dn(dl) - err);
        h = up(up(dl) + err);
      }
      lo = std::min(lo, l);
      hi = std::min(hi, h);
    }
  } else {
    double Elo = 0, Ehi = 0;
    for (std::size_t c = 0; c < C; ++c) {
      double tl, th;
      target_bounds(ex, t, c, C, tl, th);
      const double dlo = dn(dn(lg[c] - th) - elg[c]), dhi = up(up(lg[c] - tl) + elg[c]);
      const double mhi = std::max(std::fabs(dlo), std::fabs(dhi));
      const double mlo = dlo > 0 ? dlo : dhi < 0 ? -dhi : 0.0;
      Elo = std::max(Elo, mlo);
      Ehi = std::max(Ehi, mhi);
    }
    lo = dn(P.tol[0] - Ehi);
    hi = up(P.tol[1] - Elo);
  }
  return std::isfinite(lo) && std::isfinite(hi) && lo <= hi;
}

// The double filter (and, from its enclosures, the float32 bound beta). False: nothing proved.
bool double_pass(const Prepared& P, const ReadoutExamples& ex, std::size_t t, Work& w, double& lo, double& hi,
                 double& beta) {
  const AttentionReadout& m = P.net;
  const std::size_t n = P.n, N = P.N, D = m.D, di = m.d_in, dh = m.dh, dv = m.dv, Hdh = P.Hdh, Hdv = P.Hdv;
  beta = kInf;
  w.tok.resize(N * di);
  load_tokens(ex, t, w.tok.data());
  w.xin.assign(N, 0.0);
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t i = 0; i < di; ++i) w.xin[j] = std::max(w.xin[j], std::fabs(w.tok[j * di + i]));
  // Embedding.
  w.exd.assign(N, 0.0);
  w.ex32.assign(N, 0.0);
  w.ex32v.assign(N * D, 0.0);  // componentwise float32 token errors
  if (m.embed) {
    w.x.assign(N * D, 0.0);
    for (std::size_t j = 0; j < N; ++j) {
      double* xr = &w.x[j * D];
      if (!m.be.empty()) std::copy(m.be.begin(), m.be.end(), xr);
      for (std::size_t i = 0; i < di; ++i) {
        const double a = w.tok[j * di + i];
        if (a != 0) axpy(xr, &P.WeT[i * D], a, D);
      }
      if (!m.pe.empty()) axpy(xr, &m.pe[j * D], 1.0, D);
      const double mag = add_up(mul_up(P.we1max, w.xin[j]), P.bpe[j]);
      w.exd[j] = add_up(mul_up(P.g_emb, mag), double(di + 2) * kEta);
      // float32: gamma32_{d_in+4} (sum_i |We_ki| |t_ji| + |be_k| + |pe_jk|), per coordinate k
      double* ev = &w.ex32v[j * D];
      for (std::size_t i = 0; i < di; ++i) {
        const double a = std::fabs(w.tok[j * di + i]);
        if (a != 0) axpy(ev, &P.absWeT[i * D], a, D);
      }
      for (std::size_t k = 0; k < D; ++k) {
        const double b = add_up(m.be.empty() ? 0.0 : std::fabs(m.be[k]), m.pe.empty() ? 0.0 : std::fabs(m.pe[j * D + k]));
        ev[k] = add_up(mul_up(P.G_e, add_up(add_up(mul_up(ev[k], P.inflI), double(di) * kEta), b)), double(di + 4) * kEta32);
        w.ex32[j] = std::max(w.ex32[j], ev[k]);
      }
    }
  } else {
    w.x = w.tok;
    for (std::size_t j = 0; j < N; ++j) {
      for (std::size_t k = 0; k < D; ++k)
        w.ex32[j] = std::max(w.ex32[j], w.ex32v[j * D + k] = add_up(mul_up(kU32, std::fabs(w.x[j * D + k])), kEta32));
    }
  }
  w.xinf.assign(N, 0.0);
  w.Xb.assign(N, 0.0);
  double exmax = 0, xinfmax = 0, Xbmax = 0, ex32max = 0;
  for (std::size_t j = 0; j < N; ++j) {
    for (std::size_t k = 0; k < D; ++k) w.xinf[j] = std::max(w.xinf[j], std::fabs(w.x[j * D + k]));
    w.Xb[j] = add_up(w.xinf[j], w.exd[j]);
    if (j > 0) {
      exmax = std::max(exmax, w.exd[j]);
      xinfmax = std::max(xinfmax, w.xinf[j]);
      Xbmax = std::max(Xbmax, w.Xb[j]);
      ex32max = std::max(ex32max, w.ex32[j]);
    }
  }
  if (!std::isfinite(Xbmax) || !std::isfinite(w.Xb[0])) return false;
  w.xT.assign(D * n, 0.0);
  w.xaT.assign(D * n, 0.0);
  w.ex32T.assign(D * n, 0.0);
  for (std::size_t j = 1; j < N; ++j)
    for (std::size_t k = 0; k < D; ++k) w.ex32T[k * n + (j - 1)] = w.ex32v[j * D + k];
  for (std::size_t j = 1; j < N; ++j)
    for (std::size_t k = 0; k < D; ++k) w.xaT[k * n + (j - 1)] = std::fabs(w.xT[k * n + (j - 1)] = w.x[j * D + k]);
  // Queries of every head, values of every key.
  w.q.assign(Hdh, 0.0);
  if (!m.bq.empty()) std::copy(m.bq.begin(), m.bq.end(), w.q.begin());
  w.mq.assign(Hdh, 0.0);    // |Wq|^T |x^_0|, for the float32 bound
  w.mq32.assign(Hdh, 0.0);  // |Wq|^T ex32_0 (the float32 query token's errors)
  for (std::size_t l = 0; l < D; ++l) {
    if (w.x[l] != 0) {
      axpy(w.q.data(), &P.WqA[l * Hdh], w.x[l], Hdh);
      axpy(w.mq.data(), &P.absWqA[l * Hdh], std::fabs(w.x[l]), Hdh);
    }
    axpy(w.mq32.data(), &P.absWqA[l * Hdh], w.ex32v[l], Hdh);
  }
  w.V.assign(n * Hdv, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    double* vr = &w.V[j * Hdv];
    if (!m.bv.empty()) std::copy(m.bv.begin(), m.bv.end(), vr);
    for (std::size_t k = 0; k < D; ++k) {
      const double a = w.x[(j + 1) * D + k];
      if (a != 0) axpy(vr, &P.WvA[k * Hdv], a, Hdv);
    }
  }
  w.ev.assign(Hdv, 0.0);
  for (std::size_t i = 0; i < Hdv; ++i) {
    const double b = m.bv.empty() ? 0.0 : std::fabs(m.bv[i]);
    w.ev[i] = add_up(add_up(mul_up(P.wv1[i], exmax), mul_up(P.g_D1, add_up(mul_up(P.wv1[i], xinfmax), b))),
                     double(D + 1) * kEta);
  }
  w.o.assign(Hdv, 0.0);
  w.eo.assign(Hdv, 0.0);
  w.AV.assign(Hdv, 0.0);
  w.SV.assign(Hdv, 0.0);
  w.eO32.assign(Hdv, 0.0);
  w.u.resize(D);
  w.r.resize(D);
  w.r2.resize(D);
  w.mag.resize(n);
  w.mag2.resize(n);
  w.raw.resize(n);
  w.s.resize(n);
  w.dd.resize(n);
  w.del.resize(n);
  w.e.resize(n);
  w.al.resize(n);
  const double ex0 = w.exd[0], xinf0 = w.xinf[0], Xb0 = w.Xb[0], ex320 = w.ex32[0];
  const double nn = double(n), nu = 8.0 * kExpAbsErr, nu32 = 0x1p-120;
  for (std::size_t h = 0; h < m.H; ++h) {
    const double* q = &w.q[h * dh];
    std::fill(w.u.begin(), w.u.end(), 0.0);
    double eu1 = 0;
    // float32 score bound: sum_c coefA_c |K_jc| is bounded through r = |Wk| coefA and |x_j| componentwise,
    // the rest through column norms (see the header comment).
    double A3 = 0;
    std::fill(w.r.begin(), w.r.end(), 0.0);
    std::fill(w.r2.begin(), w.r2.end(), 0.0);
    for (std::size_t c = 0; c < dh; ++c) {
      const std::size_t hc = h * dh + c;
      if (q[c] != 0) axpy(w.u.data(), &P.WkT[hc * D], q[c], D);
      const double bqc = m.bq.empty() ? 0.0 : std::fabs(m.bq[hc]), bkc = m.bk.empty() ? 0.0 : std::fabs(m.bk[hc]);
      const double eq = add_up(add_up(mul_up(P.wq1[hc], ex0), mul_up(P.g_D1, add_up(mul_up(P.wq1[hc], xinf0), bqc))),
                               double(D + 1) * kEta);
      eu1 = add_up(eu1, mul_up(P.wk1[hc], add_up(eq, mul_up(P.g_dh, std::fabs(q[c])))));
      const double MQ = add_up(std::fabs(q[c]), eq);
      // sum_l |Wq_lc| |x_0l| <= (|Wq|^T |x^_0|)_c + |Wq_.c|_1 ex_0 (the product itself rounded: inflated)
      const double magQ = add_up(add_up(mul_up(w.mq[hc], P.inflD), double(D) * kEta), mul_up(P.wq1[hc], ex0));
      const double eQ0 = add_up(mul_up(w.mq32[hc], P.inflD), double(D) * kEta);  // sum_l |Wq_lc| ex32_0l
      const double eQ = add_up(add_up(eQ0, mul_up(P.G_D1, add_up(add_up(magQ, eQ0), bqc))), double(D + 3) * kEta32);
      const double PQ = add_up(MQ, eQ), bG = mul_up(bkc, up(1.0 + P.G_D1));
      const double coefA = add_up(add_up(mul_up(eQ, up(1.0 + P.G_D1)), mul_up(MQ, P.G_D1)), mul_up(mul_up(P.G_dh, PQ), up(1.0 + P.G_D1)));
      axpy(w.r.data(), &P.absWkT[hc * D], coefA, D);
      const double coef2 = mul_up(add_up(add_up(eQ, MQ), mul_up(P.G_dh, PQ)), up(1.0 + P.G_D1));
      axpy(w.r2.data(), &P.absWkT[hc * D], coef2, D);  // sum_c coef2_c |Wk_kc|, against ex32_jk
      A3 = add_up(A3, add_up(add_up(mul_up(eQ, bG), mul_up(mul_up(MQ, P.G_D1), bkc)), mul_up(mul_up(P.G_dh, PQ), bG)));
    }
    eu1 = add_up(eu1, double(D * dh) * kEta);
    double u1 = 0;
    for (std::size_t k = 0; k < D; ++k) u1 = add_up(u1, std::fabs(w.u[k]));
    std::fill(w.raw.begin(), w.raw.end(), 0.0);
    for (std::size_t k = 0; k < D; ++k)
      if (w.u[k] != 0) axpy(w.raw.data(), &w.xT[k * n], w.u[k], n);
    double r1 = 0;
    for (std::size_t k = 0; k < D; ++k) r1 = add_up(r1, w.r[k] = add_up(mul_up(w.r[k], P.inflD), double(dh) * kEta));
    std::fill(w.mag.begin(), w.mag.end(), 0.0);
    std::fill(w.mag2.begin(), w.mag2.end(), 0.0);
    for (std::size_t k = 0; k < D; ++k) {
      if (w.r[k] != 0) axpy(w.mag.data(), &w.xaT[k * n], w.r[k], n);
      const double r2k = add_up(mul_up(w.r2[k], P.inflD), double(dh) * kEta);
      if (r2k != 0) axpy(w.mag2.data(), &w.ex32T[k * n], r2k, n);
    }
    double mx = -kInf, d32max = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double exj = w.exd[j + 1], xj = w.xinf[j + 1];
      const double err = add_up(add_up(add_up(mul_up(add_up(u1, eu1), exj), mul_up(eu1, xj)), mul_up(P.g_D, mul_up(u1, xj))),
                                double(D) * kEta);
      if (m.scale_m == 1) {
        w.s[j] = w.raw[j];
        w.del[j] = err;
      } else {
        w.s[j] = w.raw[j] * P.sc;
        w.del[j] = add_up(add_up(mul_up(P.scu, err), mul_up(P.g_5, std::fabs(w.s[j]))), kEta);
      }
      mx = std::max(mx, w.s[j]);
      const double magK = add_up(add_up(mul_up(w.mag[j], P.inflD), double(D) * kEta), mul_up(r1, exj));
      const double e2 = add_up(mul_up(w.mag2[j], P.inflD), double(D) * kEta);
      const double d32 = mul_up(P.scu, add_up(add_up(magK, e2), A3));
      d32max = std::max(d32max, add_up(d32, double(dh + 6) * kEta32));
    }
    if (!std::isfinite(mx)) return false;
    double Delta = 0, Delta32 = 0;
    for (std::size_t j = 0; j < n; ++j) {
      w.dd[j] = w.s[j] - mx;
      Delta = std::max(Delta, add_up(w.del[j], mul_up(kU, std::fabs(w.dd[j]))));
    }
    for (std::size_t j = 0; j < n; ++j)
      Delta32 = std::max(Delta32, add_up(d32max, mul_up(kU32, add_up(std::fabs(w.dd[j]), mul_up(2.0, add_up(Delta, d32max))))));
    const double y = mul_up(2.0, Delta);
    if (!(y <= 0.5)) return false;
    double S = 0;
    for (std::size_t j = 0; j < n; ++j) S += (w.e[j] = exp_nonpositive_bounded(w.dd[j]));
    for (std::size_t j = 0; j < n; ++j) w.al[j] = w.e[j] / S;
    const double K = add_up(P.kappa, mul_up(add_up(y, mul_up(y, y)), up(1.0 + P.kappa)));
    const double y32 = mul_up(2.0, Delta32);
    const double K32 = y32 <= 0.5 ? add_up(P.kappa32, mul_up(add_up(y32, mul_up(y32, y32)), up(1.0 + P.kappa32))) : kInf;
    const double a32 = add_up(up(1.0 + K32), mul_up(nn, nu32));  // upper bound of sum of float32 alphas
    for (std::size_t c = 0; c < dv; ++c) {
      const std::size_t i = h * dv + c;
      double o = 0, av = 0, sv = 0, asum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double v = w.V[j * Hdv + i];
        o += w.al[j] * v;
        av += w.al[j] * std::fabs(v);
        sv += std::fabs(v);
        asum += w.al[j];
      }
      av = add_up(mul_up(av, P.inflN), nn * kEta);
      sv = add_up(mul_up(sv, P.inflN), nn * kEta);
      asum = mul_up(asum, P.inflN);
      const double ev = w.ev[i];
      w.o[i] = o;
      w.eo[i] = add_up(add_up(add_up(mul_up(K, add_up(av, mul_up(asum, ev))), mul_up(nu, add_up(sv, mul_up(nn, ev)))),
                              add_up(mul_up(asum, ev), mul_up(P.g_n, av))),
                       nn * kEta);
      // float32: the exact sum_j alpha_j |V_jc| and sum_j |V_jc|, then the float32 error of o.
      const double AV = add_up(mul_up(up(1.0 + K), add_up(av, mul_up(asum, ev))), mul_up(nu, add_up(sv, mul_up(nn, ev))));
      const double SV = add_up(sv, mul_up(nn, ev));
      const double bvc = m.bv.empty() ? 0.0 : std::fabs(m.bv[i]);
      const double eV = add_up(add_up(mul_up(P.wv1[i], ex32max), mul_up(P.G_D1, add_up(mul_up(P.wv1[i], add_up(Xbmax, ex32max)), bvc))),
                               double(D + 3) * kEta32);
      w.AV[i] = AV;
      w.SV[i] = SV;
      w.eO32[i] = add_up(add_up(add_up(mul_up(K32, AV), mul_up(nu32, SV)), mul_up(a32, eV)),
                         add_up(mul_up(mul_up(P.G_n1, a32), add_up(AV, eV)), (nn + 1) * kEta32));
    }
  }
  // Output projection.
  const std::size_t d_o = m.d_o;
  w.out.assign(d_o, 0.0);
  if (!m.bo.empty()) std::copy(m.bo.begin(), m.bo.end(), w.out.begin());
  w.e1.assign(d_o, 0.0);
  w.m1.assign(d_o, 0.0);
  w.eOut32.assign(d_o, 0.0);
  w.Mout.assign(d_o, 0.0);
  for (std::size_t i = 0; i < Hdv; ++i) {
    if (w.o[i] != 0) axpy(w.out.data(), &m.Wo[i * d_o], w.o[i], d_o);
    axpy(w.e1.data(), &P.absWo[i * d_o], w.eo[i], d_o);
    axpy(w.m1.data(), &P.absWo[i * d_o], std::fabs(w.o[i]), d_o);
    axpy(w.eOut32.data(), &P.absWo[i * d_o], w.eO32[i], d_o);
    axpy(w.Mout.data(), &P.absWo[i * d_o], w.AV[i], d_o);
  }
  if (m.skip) axpy(w.out.data(), w.x.data(), 1.0, d_o);
  w.eout.assign(d_o, 0.0);
  const double HdvEta = double(Hdv + 2) * kEta, HdvEta32 = double(Hdv + 3) * kEta32;
  for (std::size_t k = 0; k < d_o; ++k) {
    const double b = m.bo.empty() ? 0.0 : std::fabs(m.bo[k]);
    const double sk = m.skip ? std::fabs(w.x[k]) : 0.0;
    w.eout[k] = add_up(add_up(add_up(mul_up(w.e1[k], P.inflH), mul_up(P.g_H, add_up(add_up(mul_up(w.m1[k], P.inflH), b), sk))),
                              m.skip ? ex0 : 0.0),
                       HdvEta);
    const double Mo = add_up(add_up(mul_up(w.Mout[k], P.inflH), b), m.skip ? Xb0 : 0.0);
    w.Mout[k] = Mo;
    w.eOut32[k] = add_up(add_up(add_up(mul_up(mul_up(w.eOut32[k], P.inflH), up(1.0 + P.G_H)), mul_up(P.G_H, Mo)),
                                m.skip ? ex320 : 0.0),
                         HdvEta32);
  }
  // Read-out.
  const std::size_t C = m.C;
  const double* lg = w.out.data();
  const double* elg = w.eout.data();
  const double* eL = w.eOut32.data();
  if (m.readout) {
    w.lg.assign(C, 0.0);
    if (!m.br.empty()) std::copy(m.br.begin(), m.br.end(), w.lg.begin());
    w.e2.assign(C, 0.0);
    w.m2.assign(C, 0.0);
    w.eL.assign(C, 0.0);
    std::vector<double>& M2 = w.elg;  // sum |Wr| Mout, reused below
    M2.assign(C, 0.0);
    for (std::size_t k = 0; k < d_o; ++k) {
      if (w.out[k] != 0) axpy(w.lg.data(), &P.WrT[k * C], w.out[k], C);
      axpy(w.e2.data(), &P.absWrT[k * C], w.eout[k], C);
      axpy(w.m2.data(), &P.absWrT[k * C], std::fabs(w.out[k]), C);
      axpy(w.eL.data(), &P.absWrT[k * C], w.eOut32[k], C);
      axpy(M2.data(), &P.absWrT[k * C], w.Mout[k], C);
    }
    for (std::size_t c = 0; c < C; ++c) {
      const double b = m.br.empty() ? 0.0 : std::fabs(m.br[c]);
      w.eL[c] = add_up(add_up(mul_up(mul_up(w.eL[c], P.inflO), up(1.0 + P.G_o)), mul_up(P.G_o, add_up(mul_up(M2[c], P.inflO), b))),
                       double(d_o + 3) * kEta32);
      M2[c] = add_up(add_up(mul_up(w.e2[c], P.inflO), mul_up(P.g_o, add_up(mul_up(w.m2[c], P.inflO), b))), double(d_o + 1) * kEta);
    }
    lg = w.lg.data();
    elg = w.elg.data();
    eL = w.eL.data();
  }
  if (!margin_from_logits(P, ex, t, lg, elg, lo, hi)) return false;
  // float32 bound of the margin.
  if (P.classification) {
    const std::size_t yc = std::size_t(ex.classes[t]);
    double other = 0;
    for (std::size_t c = 0; c < C; ++c)
      if (c != yc) other = std::max(other, eL[c]);
    beta = add_up(eL[yc], other);
  } else {
    beta = 0;
    for (std::size_t c = 0; c < C; ++c) beta = std::max(beta, eL[c]);
  }
  if (!std::isfinite(beta)) beta = kInf;
  return true;
}

// PyTorch's float32 forward pass emulated (an estimate: the score product is reassociated as
// (Wk q) . x_j + q . bk).
double float32_margin(const Prepared& P, const ReadoutExamples& ex, std::size_t t, Work& w) {
  const AttentionReadout& m = P.net;
  const std::size_t n = P.n, N = P.N, D = m.D, di = m.d_in, dh = m.dh, dv = m.dv, Hdh = P.Hdh, Hdv = P.Hdv;
  w.tok32.resize(N * di);
  for (std::size_t i = 0; i < N * di; ++i) w.tok32[i] = float(w.tok[i]);
  if (m.embed) {
    w.x32.assign(N * D, 0.0f);
    for (std::size_t j = 0; j < N; ++j) {
      float* xr = &w.x32[j * D];
      if (!P.be32.empty()) std::copy(P.be32.begin(), P.be32.end(), xr);
      for (std::size_t i = 0; i < di; ++i)
        if (w.tok32[j * di + i] != 0) axpy32(xr, &P.WeT32[i * D], w.tok32[j * di + i], D);
      if (!P.pe32.empty()) axpy32(xr, &P.pe32[j * D], 1.0f, D);
    }
  } else {
    w.x32 = w.tok32;
  }
  w.xT32.assign(D * n, 0.0f);
  for (std::size_t j = 1; j < N; ++j)
    for (std::size_t k = 0; k < D; ++k) w.xT32[k * n + (j - 1)] = w.x32[j * D + k];
  w.q32.assign(Hdh, 0.0f);
  if (!P.bq32.empty()) std::copy(P.bq32.begin(), P.bq32.end(), w.q32.begin());
  for (std::size_t l = 0; l < D; ++l)
    if (w.x32[l] != 0) axpy32(w.q32.data(), &P.WqA32[l * Hdh], w.x32[l], Hdh);
  w.V32.assign(n * Hdv, 0.0f);
  for (std::size_t j = 0; j < n; ++j) {
    float* vr = &w.V32[j * Hdv];
    if (!P.bv32.empty()) std::copy(P.bv32.begin(), P.bv32.end(), vr);
    for (std::size_t k = 0; k < D; ++k)
      if (w.x32[(j + 1) * D + k] != 0) axpy32(vr, &P.WvA32[k * Hdv], w.x32[(j + 1) * D + k], Hdv);
  }
  w.w32.resize(D);
  w.raw32.resize(n);
  w.al32.resize(n);
  w.o32.assign(Hdv, 0.0f);
  for (std::size_t h = 0; h < m.H; ++h) {
    std::fill(w.w32.begin(), w.w32.end(), 0.0f);
    float cst = 0;
    for (std::size_t c = 0; c < dh; ++c) {
      const float qc = w.q32[h * dh + c];
      if (qc != 0) axpy32(w.w32.data(), &P.WkT32[(h * dh + c) * D], qc, D);
      if (!P.bk32.empty()) cst += qc * P.bk32[h * dh + c];
    }
    std::fill(w.raw32.begin(), w.raw32.end(), cst);
    for (std::size_t k = 0; k < D; ++k)
      if (w.w32[k] != 0) axpy32(w.raw32.data(), &w.xT32[k * n], w.w32[k], n);
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, w.raw32[j] = w.raw32[j] * P.sc32);
    float S = 0;
    for (std::size_t j = 0; j < n; ++j) S += (w.al32[j] = std::exp(w.raw32[j] - mx));
    for (std::size_t j = 0; j < n; ++j) w.al32[j] /= S;
    for (std::size_t c = 0; c < dv; ++c) {
      float o = 0;
      for (std::size_t j = 0; j < n; ++j) o += w.al32[j] * w.V32[j * Hdv + h * dv + c];
      w.o32[h * dv + c] = o;
    }
  }
  w.out32.assign(m.d_o, 0.0f);
  if (!P.bo32.empty()) std::copy(P.bo32.begin(), P.bo32.end(), w.out32.begin());
  for (std::size_t i = 0; i < Hdv; ++i)
    if (w.o32[i] != 0) axpy32(w.out32.data(), &P.Wo32[i * m.d_o], w.o32[i], m.d_o);
  if (m.skip) axpy32(w.out32.data(), w.x32.data(), 1.0f, m.d_o);
  const float* lg = w.out32.data();
  if (m.readout) {
    w.lg32.assign(m.C, 0.0f);
    if (!P.br32.empty()) std::copy(P.br32.begin(), P.br32.end(), w.lg32.begin());
    for (std::size_t k = 0; k < m.d_o; ++k)
      if (w.out32[k] != 0) axpy32(w.lg32.data(), &P.WrT32[k * m.C], w.out32[k], m.C);
    lg = w.lg32.data();
  }
  if (P.classification) {
    const std::size_t y = std::size_t(ex.classes[t]);
    double best = -kInf;
    for (std::size_t c = 0; c < m.C; ++c)
      if (c != y) best = std::max(best, double(lg[c]));
    return double(lg[y]) - best;
  }
  double err = 0;
  for (std::size_t c = 0; c < m.C; ++c) err = std::max(err, std::fabs(double(lg[c]) - ex.targets[t * m.C + c].get_d()));
  return P.tol[0] - err;
}

// ---- MPFR intervals ---------------------------------------------------------------------------------

struct Mp {
  mpfr_prec_t prec;
  mpfr_t t1, t2, t3, t4, a, b;
  explicit Mp(mpfr_prec_t p) : prec(p) { mpfr_inits2(p, t1, t2, t3, t4, a, b, (mpfr_ptr)0); }
  ~Mp() { mpfr_clears(t1, t2, t3, t4, a, b, (mpfr_ptr)0); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  // [lo, hi] += w [xl, xh] (w exact).
  void acc_w(mpfr_ptr lo, mpfr_ptr hi, double w, mpfr_srcptr xl, mpfr_srcptr xh) {
    if (w == 0) return;
    mpfr_mul_d(t1, w > 0 ? xl : xh, w, MPFR_RNDD);
    mpfr_add(lo, lo, t1, MPFR_RNDD);
    mpfr_mul_d(t1, w > 0 ? xh : xl, w, MPFR_RNDU);
    mpfr_add(hi, hi, t1, MPFR_RNDU);
  }
  // [lo, hi] += [al, ah] [bl, bh].
  void acc_ii(mpfr_ptr lo, mpfr_ptr hi, mpfr_srcptr al, mpfr_srcptr ah, mpfr_srcptr bl, mpfr_srcptr bh) {
    mpfr_mul(t1, al, bl, MPFR_RNDD);
    mpfr_mul(t2, al, bh, MPFR_RNDD);
    mpfr_mul(t3, ah, bl, MPFR_RNDD);
    mpfr_mul(t4, ah, bh, MPFR_RNDD);
    mpfr_min(t1, t1, t2, MPFR_RNDD);
    mpfr_min(t3, t3, t4, MPFR_RNDD);
    mpfr_min(t1, t1, t3, MPFR_RNDD);
    mpfr_add(lo, lo, t1, MPFR_RNDD);
    mpfr_mul(t1, al, bl, MPFR_RNDU);
    mpfr_mul(t2, al, bh, MPFR_RNDU);
    mpfr_mul(t3, ah, bl, MPFR_RNDU);
    mpfr_mul(t4, ah, bh, MPFR_RNDU);
    mpfr_max(t1, t1, t2, MPFR_RNDU);
    mpfr_max(t3, t3, t4, MPFR_RNDU);
    mpfr_max(t1, t1, t3, MPFR_RNDU);
    mpfr_add(hi, hi, t1, MPFR_RNDU);
  }
};

void mpfr_pass(const Prepared& P, const ReadoutExamples& ex, std::size_t t, mpfr_prec_t prec, double& lo_d,
               double& hi_d) {
  const AttentionReadout& m = P.net;
  const std::size_t n = P.n, N = P.N, D = m.D, di = m.d_in, dh = m.dh, dv = m.dv, Hdv = P.Hdv, C = m.C, d_o = m.d_o;
  std::vector<double> tok(N * di);
  load_tokens(ex, t, tok.data());
  Mp mp(prec);
  MpfrArray xl(N * D, prec), xh(N * D, prec);
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t k = 0; k < D; ++k) {
      mpfr_ptr l = xl[j * D + k], h = xh[j * D + k];
      if (!m.embed) {
        mpfr_set_d(l, tok[j * di + k], MPFR_RNDD);
        mpfr_set_d(h, tok[j * di + k], MPFR_RNDU);
        continue;
      }
      mpfr_set_d(l, m.be.empty() ? 0.0 : m.be[k], MPFR_RNDD);
      mpfr_set_d(h, m.be.empty() ? 0.0 : m.be[k], MPFR_RNDU);
      for (std::size_t i = 0; i < di; ++i) {
        const double a = tok[j * di + i], wgt = m.We[k * di + i];
        if (a == 0 || wgt == 0) continue;
        mpfr_set_d(mp.a, a, MPFR_RNDN);  // exact (precision >= 53)
        mpfr_mul_d(mp.t1, mp.a, wgt, MPFR_RNDD);
        mpfr_add(l, l, mp.t1, MPFR_RNDD);
        mpfr_mul_d(mp.t1, mp.a, wgt, MPFR_RNDU);
        mpfr_add(h, h, mp.t1, MPFR_RNDU);
      }
      if (!m.pe.empty()) {
        mpfr_add_d(l, l, m.pe[j * D + k], MPFR_RNDD);
        mpfr_add_d(h, h, m.pe[j * D + k], MPFR_RNDU);
      }
    }
  MpfrArray ql(dh, prec), qh(dh, prec), ul(D, prec), uh(D, prec), sl(n, prec), sh(n, prec), el(n, prec), eh(n, prec);
  MpfrArray vl(n, prec), vh(n, prec), ol(Hdv, prec), oh(Hdv, prec);
  mpfr_t slo, shi, M, Sl, Sh;
  mpfr_inits2(prec, slo, shi, M, Sl, Sh, (mpfr_ptr)0);
  mpfr_set_ui(slo, 1, MPFR_RNDN);
  mpfr_set_ui(shi, 1, MPFR_RNDN);
  if (m.scale_m != 1) {
    mpfr_set_ui(mp.a, static_cast<unsigned long>(m.scale_m), MPFR_RNDN);  // exact (64-bit unsigned long)
    mpfr_rec_sqrt(slo, mp.a, MPFR_RNDD);
    mpfr_rec_sqrt(shi, mp.a, MPFR_RNDU);
  }
  for (std::size_t h = 0; h < m.H; ++h) {
    for (std::size_t c = 0; c < dh; ++c) {
      const double b = m.bq.empty() ? 0.0 : m.bq[h * dh + c];
      mpfr_set_d(ql[c], b, MPFR_RNDD);
      mpfr_set_d(qh[c], b, MPFR_RNDU);
      for (std::size_t l = 0; l < D; ++l) mp.acc_w(ql[c], qh[c], m.Wq[(h * D + l) * dh + c], xl[l], xh[l]);
    }
    for (std::size_t k = 0; k < D; ++k) {
      mpfr_set_zero(ul[k], 1);
      mpfr_set_zero(uh[k], 1);
      for (std::size_t c = 0; c < dh; ++c) mp.acc_w(ul[k], uh[k], m.Wk[(h * D + k) * dh + c], ql[c], qh[c]);
    }
    for (std::size_t j = 0; j < n; ++j) {
      mpfr_set_zero(sl[j], 1);
      mpfr_set_zero(sh[j], 1);
      for (std::size_t k = 0; k < D; ++k) {
        const std::size_t jk = (j + 1) * D + k;
        if (!m.embed) mp.acc_w(sl[j], sh[j], tok[(j + 1) * di + k], ul[k], uh[k]);
        else mp.acc_ii(sl[j], sh[j], ul[k], uh[k], xl[jk], xh[jk]);
      }
      // times the scale s in [slo, shi] (s > 0)
      mpfr_mul(sl[j], sl[j], mpfr_sgn(sl[j]) >= 0 ? slo : shi, MPFR_RNDD);
      mpfr_mul(sh[j], sh[j], mpfr_sgn(sh[j]) >= 0 ? shi : slo, MPFR_RNDU);
    }
    mpfr_set(M, sh[0], MPFR_RNDU);
    for (std::size_t j = 1; j < n; ++j) mpfr_max(M, M, sh[j], MPFR_RNDU);
    mpfr_set_zero(Sl, 1);
    mpfr_set_zero(Sh, 1);
    for (std::size_t j = 0; j < n; ++j) {
      mpfr_sub(mp.t1, sl[j], M, MPFR_RNDD);
      mpfr_exp(el[j], mp.t1, MPFR_RNDD);
      mpfr_sub(mp.t1, sh[j], M, MPFR_RNDU);
      mpfr_exp(eh[j], mp.t1, MPFR_RNDU);
      mpfr_add(Sl, Sl, el[j], MPFR_RNDD);
      mpfr_add(Sh, Sh, eh[j], MPFR_RNDU);
    }
    for (std::size_t j = 0; j < n; ++j) {  // alpha_j in [el / Sh, min(1, eh / Sl)]
      mpfr_div(el[j], el[j], Sh, MPFR_RNDD);
      mpfr_div(eh[j], eh[j], Sl, MPFR_RNDU);
      if (mpfr_cmp_ui(eh[j], 1) > 0) mpfr_set_ui(eh[j], 1, MPFR_RNDU);
    }
    for (std::size_t c = 0; c < dv; ++c) {
      const std::size_t i = h * dv + c;
      mpfr_set_zero(ol[i], 1);
      mpfr_set_zero(oh[i], 1);
      const double b = m.bv.empty() ? 0.0 : m.bv[i];
      for (std::size_t j = 0; j < n; ++j) {
        mpfr_set_d(vl[j], b, MPFR_RNDD);
        mpfr_set_d(vh[j], b, MPFR_RNDU);
        for (std::size_t k = 0; k < D; ++k)
          mp.acc_w(vl[j], vh[j], m.Wv[(h * D + k) * dv + c], xl[(j + 1) * D + k], xh[(j + 1) * D + k]);
        // alpha >= 0: the lower end takes v's lower end, the upper end v's upper end.
        mpfr_mul(mp.t1, mpfr_sgn(vl[j]) >= 0 ? el[j] : eh[j], vl[j], MPFR_RNDD);
        mpfr_add(ol[i], ol[i], mp.t1, MPFR_RNDD);
        mpfr_mul(mp.t1, mpfr_sgn(vh[j]) >= 0 ? eh[j] : el[j], vh[j], MPFR_RNDU);
        mpfr_add(oh[i], oh[i], mp.t1, MPFR_RNDU);
      }
    }
  }
  MpfrArray outl(d_o, prec), outh(d_o, prec);
  for (std::size_t k = 0; k < d_o; ++k) {
    const double b = m.bo.empty() ? 0.0 : m.bo[k];
    mpfr_set_d(outl[k], b, MPFR_RNDD);
    mpfr_set_d(outh[k], b, MPFR_RNDU);
    for (std::size_t i = 0; i < Hdv; ++i) mp.acc_w(outl[k], outh[k], m.Wo[i * d_o + k], ol[i], oh[i]);
    if (m.skip) {
      mpfr_add(outl[k], outl[k], xl[k], MPFR_RNDD);
      mpfr_add(outh[k], outh[k], xh[k], MPFR_RNDU);
    }
  }
  mpfr_t lo, hi;
  mpfr_inits2(prec, lo, hi, (mpfr_ptr)0);
  if (P.classification) {
    const std::size_t y = std::size_t(ex.classes[t]);
    mpfr_set_inf(lo, 1);
    mpfr_set_inf(hi, 1);
    for (std::size_t c = 0; c < C; ++c) {
      if (c == y) continue;
      if (P.same_row[y * C + c]) {
        mpfr_set_zero(mp.t3, 1);
        mpfr_set_zero(mp.t4, 1);
      } else if (m.readout) {
        mpfr_set_d(mp.t3, m.br.empty() ? 0.0 : m.br[y], MPFR_RNDD);
        mpfr_sub_d(mp.t3, mp.t3, m.br.empty() ? 0.0 : m.br[c], MPFR_RNDD);
        mpfr_set_d(mp.t4, m.br.empty() ? 0.0 : m.br[y], MPFR_RNDU);
        mpfr_sub_d(mp.t4, mp.t4, m.br.empty() ? 0.0 : m.br[c], MPFR_RNDU);
        mpfr_t wl, wh, accl, acch;
        mpfr_inits2(prec, wl, wh, accl, acch, (mpfr_ptr)0);
        mpfr_set(accl, mp.t3, MPFR_RNDD);
        mpfr_set(acch, mp.t4, MPFR_RNDU);
        for (std::size_t k = 0; k < d_o; ++k) {
          const double a = m.Wr[y * d_o + k], b = m.Wr[c * d_o + k];
          if (a == b) continue;
          mpfr_set_d(wl, a, MPFR_RNDD);
          mpfr_sub_d(wl, wl, b, MPFR_RNDD);
          mpfr_set_d(wh, a, MPFR_RNDU);
          mpfr_sub_d(wh, wh, b, MPFR_RNDU);
          mp.acc_ii(accl, acch, wl, wh, outl[k], outh[k]);
        }
        mpfr_set(mp.t3, accl, MPFR_RNDD);
        mpfr_set(mp.t4, acch, MPFR_RNDU);
        mpfr_clears(wl, wh, accl, acch, (mpfr_ptr)0);
      } else {
        mpfr_sub(mp.t3, outl[y], outh[c], MPFR_RNDD);
        mpfr_sub(mp.t4, outh[y], outl[c], MPFR_RNDU);
      }
      mpfr_min(lo, lo, mp.t3, MPFR_RNDD);
      mpfr_min(hi, hi, mp.t4, MPFR_RNDU);
    }
  } else {
    mpfr_t Elo, Ehi, ll, lh;
    mpfr_inits2(prec, Elo, Ehi, ll, lh, (mpfr_ptr)0);
    mpfr_set_zero(Elo, 1);
    mpfr_set_zero(Ehi, 1);
    for (std::size_t c = 0; c < C; ++c) {
      if (m.readout) {
        const double b = m.br.empty() ? 0.0 : m.br[c];
        mpfr_set_d(ll, b, MPFR_RNDD);
        mpfr_set_d(lh, b, MPFR_RNDU);
        for (std::size_t k = 0; k < d_o; ++k) mp.acc_w(ll, lh, m.Wr[c * d_o + k], outl[k], outh[k]);
      } else {
        mpfr_set(ll, outl[c], MPFR_RNDD);
        mpfr_set(lh, outh[c], MPFR_RNDU);
      }
      const Rational& q = ex.targets[t * C + c];
      mpfr_sub_q(mp.t1, ll, q.get_mpq_t(), MPFR_RNDD);  // d_lo
      mpfr_sub_q(mp.t2, lh, q.get_mpq_t(), MPFR_RNDU);  // d_hi
      // |d| in [mlo, mhi]
      if (mpfr_sgn(mp.t1) > 0) mpfr_set(mp.t3, mp.t1, MPFR_RNDD);
      else if (mpfr_sgn(mp.t2) < 0) mpfr_neg(mp.t3, mp.t2, MPFR_RNDD);
      else mpfr_set_zero(mp.t3, 1);
      mpfr_abs(mp.t4, mp.t1, MPFR_RNDU);
      mpfr_abs(mp.a, mp.t2, MPFR_RNDU);
      mpfr_max(mp.t4, mp.t4, mp.a, MPFR_RNDU);
      mpfr_max(Elo, Elo, mp.t3, MPFR_RNDD);
      mpfr_max(Ehi, Ehi, mp.t4, MPFR_RNDU);
    }
    mpfr_set_q(mp.a, ex.tolerance.get_mpq_t(), MPFR_RNDD);
    mpfr_sub(lo, mp.a, Ehi, MPFR_RNDD);
    mpfr_set_q(mp.a, ex.tolerance.get_mpq_t(), MPFR_RNDU);
    mpfr_sub(hi, mp.a, Elo, MPFR_RNDU);
    mpfr_clears(Elo, Ehi, ll, lh, (mpfr_ptr)0);
  }
  lo_d = mpfr_get_d(lo, MPFR_RNDD);
  hi_d = mpfr_get_d(hi, MPFR_RNDU);
  if (mpfr_nan_p(lo) || mpfr_nan_p(hi)) {
    lo_d = -kInf;
    hi_d = kInf;
  }
  mpfr_clears(lo, hi, slo, shi, M, Sl, Sh, (mpfr_ptr)0);
}

ExampleVerdict decide(bool classification, double lo, double hi) {
  if (classification) {
    if (lo > 0) return ExampleVerdict::correct;
    if (hi <= 0) return ExampleVerdict::wrong;
  } else {
    if (lo >= 0) return ExampleVerdict::correct;
    if (hi < 0) return ExampleVerdict::wrong;
  }
  return ExampleVerdict::undecided;
}

}  // namespace

void attention_readout_check(const AttentionReadout& m) {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("attention_readout: ") + what);
  };
  need(m.H > 0 && m.D > 0 && m.dh > 0 && m.dv > 0 && m.d_o > 0 && m.C > 0 && m.d_in > 0, "empty dimension");
  need(m.embed ? m.We.size() == m.D * m.d_in : m.D == m.d_in, "embedding shape");
  need(m.be.empty() || (m.embed && m.be.size() == m.D), "embedding bias shape");
  need(m.pe.empty() || m.pe.size() == m.pe_rows * m.D, "positional rows");
  need(m.Wq.size() == m.H * m.D * m.dh && m.Wk.size() == m.Wq.size(), "Wq/Wk shape");
  need(m.bq.empty() || m.bq.size() == m.H * m.dh, "bq shape");
  need(m.bk.empty() || m.bk.size() == m.H * m.dh, "bk shape");
  need(m.Wv.size() == m.H * m.D * m.dv, "Wv shape");
  need(m.bv.empty() || m.bv.size() == m.H * m.dv, "bv shape");
  need(m.Wo.size() == m.H * m.dv * m.d_o, "Wo shape");
  need(m.bo.empty() || m.bo.size() == m.d_o, "bo shape");
  need(!m.skip || m.d_o == m.D, "skip needs d_o == D");
  need(m.readout ? m.Wr.size() == m.C * m.d_o : m.C == m.d_o, "read-out shape");
  need(m.br.empty() || (m.readout && m.br.size() == m.C), "read-out bias shape");
  need(m.scale_m >= 1, "scale");
}

void attention_readout_margin_mpfr(const AttentionReadout& net, const ReadoutExamples& ex, std::size_t t, long bits,
                                   double& lo, double& hi) {
  attention_readout_check(net);
  const Prepared P(net, ex);
  mpfr_pass(P, ex, t, mpfr_prec_t(bits), lo, hi);
}

void attention_readout_margin_double(const AttentionReadout& net, const ReadoutExamples& ex, std::size_t t, double& lo,
                                     double& hi) {
  attention_readout_check(net);
  const Prepared P(net, ex);
  Work w;
  double beta;
  if (!double_pass(P, ex, t, w, lo, hi, beta)) {
    lo = 1;
    hi = 0;
  }
}

ModelVerdicts attention_readout_certify(const AttentionReadout& net, const ReadoutExamples& ex,
                                        const CertifyOptions& opts) {
  attention_readout_check(net);
  if (net.d_in != ex.d) throw std::invalid_argument("attention_readout_certify: token width");
  if (ex.n == 0) throw std::invalid_argument("attention_readout_certify: no key tokens");
  if (!net.pe.empty() && net.pe_rows < ex.n + 1) throw std::invalid_argument("attention_readout_certify: positional rows");
  const Prepared P(net, ex);
  const std::size_t first = opts.first_of(ex.T);
  const std::size_t count = opts.count_of(ex.T);
  ModelVerdicts r = model_verdicts_undecided(count);
  const int threads = opts.threads ? int(opts.threads) : fast_threads();
  constexpr std::size_t kBlock = 64;
  const std::size_t blocks = (count + kBlock - 1) / kBlock;
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  parallel_for(blocks, threads, [&](std::size_t b) {
    thread_local Work w;
    const std::size_t from = b * kBlock, to = std::min(count, from + kBlock);
    for (std::size_t i = from; i < to; ++i) {
      const std::size_t t = first + i;
      double lo = -kInf, hi = kInf, beta = kInf;
      ExampleVerdict v = ExampleVerdict::undecided;
      short bits = 0;
      if (double_pass(P, ex, t, w, lo, hi, beta)) {
        v = decide(P.classification, lo, hi);
        if (v != ExampleVerdict::undecided) bits = 53;
      } else {
        lo = -kInf;
        hi = kInf;
        w.tok.resize(P.N * net.d_in);
        load_tokens(ex, t, w.tok.data());
      }
      for (int p : {128, 256, 512}) {
        if (v != ExampleVerdict::undecided || p > opts.max_bits) break;
        double l, h;
        mpfr_pass(P, ex, t, p, l, h);
        if (l > lo) lo = l;  // both enclose the margin: keep the tighter ends
        if (h < hi) hi = h;
        v = decide(P.classification, lo, hi);
        if (v != ExampleVerdict::undecided) bits = short(p);
      }
      r.verdict[i] = v;
      r.margin_lo[i] = lo;
      r.margin_hi[i] = hi;
      r.bits[i] = bits;
      r.float32_margin[i] = float32_margin(P, ex, t, w);
      r.float32_error_bound[i] = beta;
      bool dis = true;
      if (v == ExampleVerdict::correct)
        dis = P.classification ? !(dn(lo - beta) > 0) : !(dn(lo - beta) >= 0);
      else if (v == ExampleVerdict::wrong)
        dis = P.classification ? !(up(hi + beta) <= 0) : !(up(hi + beta) < 0);
      r.float32_disagreement[i] = dis ? 1 : 0;
    }
    const std::size_t d = done.fetch_add(to - from) + (to - from);
    if (opts.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      opts.progress(d, count);
    }
  });
  return r;
}

}  // namespace memcert
