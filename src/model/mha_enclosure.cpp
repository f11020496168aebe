// The MHA representation matrix Z for many examples in double with rigorous radii.
//
// Bound toolkit (u = 2^-53, eta = 2^-1074, gamma_k = k u / (1 - k u)): a dot product of length k computed in
// round-to-nearest, in any order, with or without FMA, satisfies |s^ - s| <= gamma_k sum|x||y| + k eta;
// for non-negative terms the exact sum S obeys S <= (s^ + k eta) / (1 - gamma_k) ("nonneg_upper"). All bound
// arithmetic is rounded upward by stepping to the next double after a round-to-nearest result.
#include "memcert/model/mha_enclosure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "memcert/linalg/nmod/gemm_plain.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/threads.hpp"

namespace memcert {

namespace {

constexpr double kU = 0x1p-53;
constexpr double kEta = 0x1p-1074;
const double kInf = std::numeric_limits<double>::infinity();
using dbound::dn;
using dbound::gamma_up;
using dbound::up;
// Upper bound of an exact non-negative sum of k products computed in round-to-nearest as s.
inline double nonneg_upper(double s, double k, double one_minus_gamma_dn) {
  return dbound::nonneg_sum_up(s, k, one_minus_gamma_dn);
}

}  // namespace

ZEnclosureDouble mha_z_enclosure_double(const std::vector<DMatrix>& contexts, const DMatrix& queries,
                                        const std::vector<DMatrix>& WK, const std::vector<DMatrix>& WQ,
                                        int threads) {
  const std::size_t T = queries.rows(), d = queries.cols(), H = WK.size();
  if (contexts.size() != T) throw std::invalid_argument("mha_z_enclosure_double: contexts and queries differ in T");
  if (WQ.size() != H) throw std::invalid_argument("mha_z_enclosure_double: W_K and W_Q head counts differ");
  const std::size_t n = T ? contexts[0].rows() : 0;
  for (const auto& E : contexts)
    if (E.rows() != n || E.cols() != d) throw std::invalid_argument("mha_z_enclosure_double: context shape");
  const int th = threads <= 0 ? fast_threads() : threads;
  ZEnclosureDouble out{DMatrix(T, H * d, 0.0), DMatrix(T, H * d, 0.0)};
  if (T == 0 || H == 0) return out;

  DMatrix qa = mat_map<double>(queries, [](double x) { return std::fabs(x); });
  const double dd = static_cast<double>(d), nn = static_cast<double>(n);
  const double g_d = gamma_up(dd), g_n = gamma_up(nn);
  const double omg_d = dn(1.0 - g_d), omg_n = dn(1.0 - g_n);
  const double rho = kExpRelErr, tau = kExpAbsErr;

  for (std::size_t h = 0; h < H; ++h) {
    const DMatrix& wq = WQ[h];
    const DMatrix& wk = WK[h];
    const std::size_t dh = wq.cols();
    if (wq.rows() != d || wk.rows() != d || wk.cols() != dh)
      throw std::invalid_argument("mha_z_enclosure_double: W_K / W_Q shapes");
    const double ddh = static_cast<double>(dh), g_dh = gamma_up(ddh), omg_dh = dn(1.0 - g_dh);
    // U = Q W_Q and its error eU.
    DMatrix u(T, dh, 0.0), s1(T, dh, 0.0);
    DMatrix wqa = mat_map<double>(wq, [](double x) { return std::fabs(x); });
    fast_detail::gemm_plain_sub(T, dh, d, queries.data().data(), d, wq.data().data(), dh, u.data().data(), dh, th);
    fast_detail::gemm_plain_sub(T, dh, d, qa.data().data(), d, wqa.data().data(), dh, s1.data().data(), dh, th);
    for (double& x : u.data()) x = -x;
    DMatrix x(T, dh);
    for (std::size_t i = 0; i < T * dh; ++i) {
      const double eu = up(up(g_d * nonneg_upper(-s1.data()[i], dd, omg_d)) + up(dd * kEta));
      x.data()[i] = up(up(g_dh * std::fabs(u.data()[i])) + eu);  // gamma_dh |U^| + eU
    }
    // V = U W_K^T and its error eV = bound of (gamma_dh |U^| + eU) |W_K^T| + d_h eta.
    DMatrix wkt = mat_transpose(wk), wkta = mat_map<double>(wkt, [](double y) { return std::fabs(y); });
    DMatrix v(T, d, 0.0), m(T, d, 0.0);
    fast_detail::gemm_plain_sub(T, d, dh, u.data().data(), dh, wkt.data().data(), d, v.data().data(), d, th);
    fast_detail::gemm_plain_sub(T, d, dh, x.data().data(), dh, wkta.data().data(), d, m.data().data(), d, th);
    for (double& y : v.data()) y = -y;
    for (double& y : m.data()) y = up(nonneg_upper(-y, ddh, omg_dh) + up(ddh * kEta));  // eV

    auto example = [&](std::size_t t) {
      const DMatrix& E = contexts[t];
      const double* vt = v.row(t);
      const double* ev = m.row(t);
      std::vector<double> w(d), a(n), da(n), e(n), alpha(n), ra(n), cj(n);
      for (std::size_t l = 0; l < d; ++l) w[l] = up(up(g_d * std::fabs(vt[l])) + ev[l]);
      double amax = -kInf, dmax = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double* ej = E.row(j);
        // Four interleaved partial sums (any summation order satisfies the gamma_d bound).
        double s4[4] = {0, 0, 0, 0}, a4[4] = {0, 0, 0, 0};
        std::size_t l = 0;
        for (; l + 4 <= d; l += 4)
          for (int q = 0; q < 4; ++q) {
            s4[q] += ej[l + q] * vt[l + q];
            a4[q] += std::fabs(ej[l + q]) * w[l + q];
          }
        for (; l < d; ++l) s4[0] += ej[l] * vt[l], a4[0] += std::fabs(ej[l]) * w[l];
        const double s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
        const double sa = (a4[0] + a4[1]) + (a4[2] + a4[3]);
        a[j] = s;
        da[j] = up(nonneg_upper(sa, dd, omg_d) + up(dd * kEta));
        amax = std::max(amax, s);
      }
      // Softmax with the shift m = amax (exact double); Delta_j = da_j + 2u|s_j|.
      double S = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double sj = a[j] - amax;
        dmax = std::max(dmax, up(da[j] + up(2.0 * kU * std::fabs(sj))));
        e[j] = exp_nonpositive_bounded(sj);
        S += e[j];
      }
      double* zc = out.centre.row(t) + h * d;
      double* zr = out.radius.row(t) + h * d;
      if (!(dmax <= 0.5) || !std::isfinite(S)) {  // hopeless: alpha in [0, 1]
        for (std::size_t i = 0; i < d; ++i) {
          double s = 0;
          for (std::size_t j = 0; j < n; ++j) s = up(s + std::fabs(E(j, i)));
          zc[i] = 0;
          zr[i] = s;
        }
        return;
      }
      const double Uf = up(up(1.0 + up(dmax + up(dmax * dmax))) / dn(1.0 - rho));  // >= e^D / (1 - rho)
      const double Lf = dn(dn(1.0 - dmax) / up(1.0 + rho));                        // <= e^-D / (1 + rho)
      const double Slo = dn(dn(S / up(1.0 + g_n)) - up(nn * tau));
      const double Shi = up(up(S / omg_n) + up(nn * tau));
      const double den_hi = dn(Lf * Slo), den_lo = up(Uf * Shi);
      for (std::size_t j = 0; j < n; ++j) {
        alpha[j] = e[j] / S;
        const double hi = up(up(Uf * up(e[j] + tau)) / den_hi);
        const double lo = std::max(0.0, dn(dn(Lf * dn(e[j] - tau)) / den_lo));
        ra[j] = up(std::max(up(hi - alpha[j]), up(alpha[j] - lo)));
        cj[j] = up(up(g_n * alpha[j]) + ra[j]);
      }
      // p = E^T alpha and its radius (row-wise accumulation: vectorisable, each sum in order j).
      std::vector<double> ps(d, 0.0), prs(d, 0.0);
      for (std::size_t j = 0; j < n; ++j) {
        const double* ej = E.row(j);
        const double aj = alpha[j], cjj = cj[j];
        for (std::size_t i = 0; i < d; ++i) ps[i] += ej[i] * aj;
        for (std::size_t i = 0; i < d; ++i) prs[i] += std::fabs(ej[i]) * cjj;
      }
      for (std::size_t i = 0; i < d; ++i) {
        zc[i] = ps[i];
        zr[i] = up(nonneg_upper(prs[i], nn, omg_n) + up(nn * kEta));
      }
    };
    parallel_for(T, th, example);
  }
  return out;
}

}  // namespace memcert
