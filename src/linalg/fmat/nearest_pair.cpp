// Blocked-Gram nearest-pair filter (nearest_pair.hpp): all pairwise squared distances of a block of points
// against another block from one matrix product, each enclosed by a proved bound, so that the m^2 d work
// runs at matrix-product speed and only the pairs the bound cannot rule out are looked at one by one.
//
// ERROR BOUND of one Gram-route distance. For points a, b (exact doubles after the exact power-of-two
// scaling) let N_a = ||a||^2, G = a.b, D = ||a - b||^2 = N_a + N_b - 2G, u = 2^-53, eta = 2^-1074 and
// gamma_k = k u / (1 - k u). The computed values are
//   n_a = fl(sum_c a_c^2) (recursive):  |n_a - N_a| <= gamma_d N_a + d eta / 2,
//   g = fl(a.b) (gemm_plain_sub, any order, FMA or not): |g - G| <= gamma_{d+1} sum_c |a_c b_c| + d eta
//       <= gamma_{d+1} sqrt(N_a N_b) + d eta <= gamma_{d+1} (N_a + N_b) / 2 + d eta,
//   s = fl(n_a + n_b), x = fl(s - 2 g) (2 g exact): |x - (s - 2g)| <= u |x|, |s - (n_a + n_b)| <= u s.
// With W >= N_a + N_b and W >= n_a + n_b: |x| <= (1 + u)((1 + u) W + (1 + gamma) W + 2 d eta) <= 2.1 W +
// 3 d eta, hence |x - D| <= u|x| + u W + gamma_d W + d eta + gamma_{d+1} W + 2 d eta
//                        <= (2 gamma_{d+1} + 4u) W + 6 d eta  =: c W + a0.
// W is the sum of per-point upper bounds U_a >= max(n_a, N_a): N_a <= (n_a + d eta) / (1 - gamma_d), all
// rounded upward. The radius computed in round-to-nearest as fl(fl(c' fl(U_a + U_b)) + 2 a0) with c' >=
// c (1 + 2^-40) is >= c W + a0 ((1 + 2^-40)(1 - u)^3 >= 1). Then lo = fl(fl(x - rad)(1 - 2^-50)) <= D and
// hi = fl(fl(x + rad)(1 + 2^-50)) >= D: for a positive difference (1 + u)^2 (1 - 2^-50) < 1 and
// (1 - u)^2 (1 + 2^-50) > 1; a non-positive one keeps its sign; subnormal results are exact or round
// towards the unrounded operand.
// FLOAT ROUTE (every scaled value a float): g = fl_24(a.b) from sgemm_plain, |g - G| <= gamma_d^(24)
// sqrt(N_a N_b) + d eta_f (u_f = 2^-24, eta_f = 2^-149), the rest in double as above: c = gamma_d^(24) +
// gamma_d + 4u and a0 = 2 d eta_f + 6 d eta in the same derivation (gamma_d^(24) < 0.01 keeps |x| <=
// 2.1 W + 3 d eta); the radius uses 2 a0 as above.
#include "memcert/linalg/fmat/nearest_pair.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/progress.hpp"
#include "memcert/linalg/nmod/gemm_plain.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/filter.hpp"
#include "sgemm_internal.hpp"

namespace memcert {

namespace {


constexpr double kU = 0x1p-53, kEta = 0x1p-1074;

using dbound::gamma_up;  // gamma_k rounded upward (k u < 1/2 for every d this runs on)

// The power of two 2^e with max |x| * 2^e in [1, 2), when every value is finite and scales exactly
// (nothing lost to underflow); nullopt otherwise. 2^0 when every value is zero.
std::optional<int> exact_scale_exponent(const std::vector<const double*>& pts, std::size_t d) {
  double mx = 0;
  for (const double* p : pts)
    for (std::size_t c = 0; c < d; ++c) {
      if (!std::isfinite(p[c])) return std::nullopt;
      mx = std::max(mx, std::fabs(p[c]));
    }
  if (mx == 0) return 0;
  int e = 0;
  std::frexp(mx, &e);  // mx = f 2^e, f in [1/2, 1)
  const int s = 1 - e;
  if (s < 0) {  // scaling down can lose bits to underflow; 2^s and 2^-s are normal doubles here (s >= -1023)
    const double down = std::ldexp(1.0, s), up = std::ldexp(1.0, -s);
    for (const double* p : pts)
      for (std::size_t c = 0; c < d; ++c)
        if ((p[c] * down) * up != p[c]) return std::nullopt;
  }
  return s;
}

// Direct enclosure of ||a - b||^2 from the differences (separation_filter's bound: differences, squares
// and a recursive sum of d terms, relative error gamma_{d+2} plus d half-units of underflow, doubled to
// cover the rounding of the ends themselves); no cancellation, so tight for near-duplicate points.
struct DirectBound {
  double rel, abs_err;
  explicit DirectBound(std::size_t d) {
    const double nu = static_cast<double>(d + 2) * kU;
    rel = 2 * nu / (1 - nu);
    abs_err = 2 * static_cast<double>(d) * kEta;
  }
  void enclose(const double* a, const double* b, std::size_t d, double& lo, double& hi) const {
    double s = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const double w = a[c] - b[c];
      s += w * w;
    }
    lo = (s - abs_err) * (1 - rel);
    hi = (s + abs_err) * (1 + rel);
  }
};

}  // namespace

void nearest_pair_candidates_prune(std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                                   std::vector<double>& cand_lo, double best_hi) {
  std::size_t k = 0;
  for (std::size_t r = 0; r < candidates.size(); ++r)
    if (!(cand_lo[r] > best_hi)) candidates[k] = candidates[r], cand_lo[k++] = cand_lo[r];
  candidates.resize(k);
  cand_lo.resize(k);
}

std::optional<std::vector<std::pair<std::size_t, std::size_t>>> nearest_pair_candidates_gram(
    const std::vector<const double*>& pts, std::size_t d, int threads, std::size_t block, const char** route) {
  const std::size_t m = pts.size();
  std::vector<std::pair<std::size_t, std::size_t>> candidates;
  if (m < 2) return candidates;
  std::optional<int> scale = exact_scale_exponent(pts, d);
  if (!scale) return std::nullopt;
  block = std::max<std::size_t>(block, 1);
  const double dd = static_cast<double>(d);
  const double gd = gamma_up(dd), gd1 = gamma_up(dd + 1);
  // c' = (2 gamma_{d+1} + 4u)(1 + 2^-40), a0' = 2 * 6 d eta (see the header comment).
  double cw = next_up(next_up(next_up(2 * gd1) + 4 * kU) * (1 + 0x1p-40));
  double a0 = next_up(12 * dd * kEta);
  const double dn_gd = next_down(1 - gd);
  // x 2^scale as one multiplication (exact: checked above) when 2^scale is a normal double; only data
  // that are all subnormal need more, and take ldexp.
  const bool one_factor = *scale >= -1022 && *scale <= 1023;
  const double factor = one_factor ? std::ldexp(1.0, *scale) : 0;
  auto scaled = [&](double x) { return one_factor ? x * factor : std::ldexp(x, *scale); };
  // Scaled norms n_a and upper bounds U_a >= max(n_a, N_a); the float route when every scaled value is
  // a float (float32 data: the scaled values lie in (-2, 2), so only float underflow can spoil that).
  std::vector<double> nrm(m), nup(m);
  bool use_float = d <= 100000;  // keeps gamma_d^(24) < 0.01, as the bound assumes
  for (std::size_t i = 0; i < m; ++i) {
    double s = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const double x = scaled(pts[i][c]);
      use_float = use_float && static_cast<double>(static_cast<float>(x)) == x;
      s += x * x;
    }
    nrm[i] = s;
    nup[i] = dbound::nonneg_sum_up(s, dd, dn_gd);
  }
  if (route) *route = use_float ? "float" : "double";
  // The float route's products: |g - G| <= gamma_d^(24) (N_a + N_b) / 2 + d eta_f (sgemm_internal.hpp), so
  // the same derivation gives |x - D| <= (gamma_d^(24) + gamma_d + 4u) W + 2 d eta_f + 3 d eta.
  if (use_float) {
    const double gf = gamma_up(dd, 0x1p-24);
    cw = next_up(next_up(next_up(gf + gd) + 4 * kU) * (1 + 0x1p-40));
    a0 = next_up(2 * next_up(next_up(2 * dd * 0x1p-149) + next_up(6 * dd * kEta)));
  }
  const int nthreads = threads <= 0 ? fast_threads() : threads;
  const DirectBound direct(d);
  std::vector<double> a, bt, c, ra(d), rb(d);
  std::vector<float> af, btf, cf;
  double best_hi = std::numeric_limits<double>::infinity();
  std::vector<double> cand_lo;
  std::size_t prune_at = 4096;
  auto prune = [&] { nearest_pair_candidates_prune(candidates, cand_lo, best_hi); };
  auto scaled_row = [&](std::size_t i, double* out) {
    for (std::size_t k = 0; k < d; ++k) out[k] = scaled(pts[i][k]);
  };
  const std::size_t nblocks = (m + block - 1) / block, total = nblocks * (nblocks + 1) / 2;
  std::size_t done = 0;
  for (std::size_t j0 = 0; j0 < m; j0 += block) {
    const std::size_t nj = std::min(block, m - j0);
    // B^T: d x nj (the float route pads the columns to a multiple of 32 with zeros), column j the
    // scaled point j0 + j.
    const std::size_t ldb = use_float ? (nj + 31) / 32 * 32 : nj;
    if (use_float) btf.assign(d * ldb, 0.0f);
    else bt.assign(d * ldb, 0.0);
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t k = 0; k < d; ++k) {
        const double x = scaled(pts[j0 + j][k]);
        if (use_float) btf[k * ldb + j] = static_cast<float>(x);
        else bt[k * ldb + j] = x;
      }
    for (std::size_t i0 = 0; i0 <= j0; i0 += block) {
      const std::size_t ni = std::min(block, m - i0);
      a.resize(ni * d);
      for (std::size_t i = 0; i < ni; ++i) scaled_row(i0 + i, a.data() + i * d);
      // c = -fl(A B^T) (double route), cf = fl(A B^T) (float route).
      if (use_float) {
        af.assign(a.begin(), a.end());
        cf.resize(ni * ldb);
        fast_detail::sgemm_plain(ni, ldb, d, af.data(), btf.data(), cf.data(), nthreads);
      } else {
        c.assign(ni * ldb, 0.0);
        fast_detail::gemm_plain_sub(ni, nj, d, a.data(), d, bt.data(), ldb, c.data(), ldb, nthreads);
      }
      for (std::size_t i = 0; i < ni; ++i) {
        const std::size_t gi = i0 + i;
        const double* crow = use_float ? nullptr : c.data() + i * ldb;
        const float* cfrow = use_float ? cf.data() + i * ldb : nullptr;
        for (std::size_t j = (i0 == j0 ? i + 1 : 0); j < nj; ++j) {
          const std::size_t gj = j0 + j;
          const double mg = use_float ? -static_cast<double>(cfrow[j]) : crow[j];
          const double x = (nrm[gi] + nrm[gj]) + 2 * mg;
          const double rad = cw * (nup[gi] + nup[gj]) + a0;
          // Ruled out as a nearest pair when the lower end exceeds the best upper end: the Gram enclosure
          // first, then the direct enclosure (tight where the Gram route cancels: near-duplicates), which
          // decides and also refines best_hi.
          double lo = 0;
          const Decision ruled_out = decide(
              [&] {
                lo = (x - rad) * (1 - 0x1p-50);
                return lo > best_hi ? UncertainBool::certain(true) : UncertainBool::indeterminate();
              },
              [&] {
                double hi = (x + rad) * (1 + 0x1p-50);
                scaled_row(gi, ra.data());
                scaled_row(gj, rb.data());
                double lo2 = 0, hi2 = 0;
                direct.enclose(ra.data(), rb.data(), d, lo2, hi2);
                lo = std::max(lo, lo2);
                hi = std::min(hi, hi2);
                if (hi < best_hi) best_hi = hi;
                return UncertainBool::certain(lo > best_hi);  // NaN keeps the pair
              });
          if (!ruled_out.value.certainly_true()) candidates.emplace_back(gi, gj), cand_lo.push_back(lo);
        }
      }
      if (candidates.size() > prune_at) prune(), prune_at = std::max<std::size_t>(4096, 2 * candidates.size());
      progress_tick("separation: blocked Gram", ++done, total);
    }
  }
  prune();
  return candidates;
}

}  // namespace memcert
