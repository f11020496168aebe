// Double kernels with rigorous error bounds; see float_kernels.hpp for the conventions.
#include "kernel/float_kernels.hpp"

#include <mpfr.h>

#include <algorithm>
#include <atomic>

#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

namespace memcert_checker {

namespace {
const double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = 0x1p-53;
constexpr double kEta = 0x1p-1074;
std::atomic<unsigned> g_threads{0};
}  // namespace

unsigned checker_threads() {
  if (unsigned k = g_threads.load()) return k;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}
void set_checker_threads(unsigned k) { g_threads.store(k); }

void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t, unsigned)>& fn) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex m;
  auto work = [&](unsigned w) {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < count;) fn(i, w);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
      next.store(count);  // the others stop at their next index
    }
  };
  const std::size_t helpers = std::min<std::size_t>(threads > 0 ? threads - 1 : 0, count > 0 ? count - 1 : 0);
  std::vector<std::thread> pool;
  try {
    for (std::size_t i = 0; i < helpers; ++i)
      pool.emplace_back([&work, i] {
        work(static_cast<unsigned>(i + 1));
        if (mpfr_buildopt_tls_p()) mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);  // without TLS the caches are global
      });
  } catch (...) {  // could not start a thread: the running ones and this one do the work
  }
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

double gamma_up(std::size_t k) {
  const double nu = up(static_cast<double>(k) * kU);  // >= k u
  if (!(nu < 0.5)) return kInf;
  return up(nu / dn(1.0 - nu));  // >= k u / (1 - k u)
}

void midrad(double lo, double hi, double& m, double& r) {
  if (lo == hi) {
    m = lo;
    r = 0;
    return;
  }
  m = 0.5 * lo + 0.5 * hi;  // any value will do: r covers the distance to both ends
  r = std::max(up(hi - m), up(m - lo));
}

// With E = em + dE (|dE| <= er) and alpha = am + da (|da| <= ar), for each column c
//   |p_c - sum_j em_jc am_j| <= sum_j (|em_jc| ar_j + er_jc (|am_j| + ar_j)),
// and s_c = fl(sum_j em_jc am_j) (n products, n - 1 additions, round-to-nearest) satisfies
//   |s_c - sum_j em_jc am_j| <= gamma_n sum_j |em_jc| |am_j| + n eta.
// So |p_c - s_c| <= sum_j (|em_jc| q_j + er_jc b_j) + n eta with q_j >= ar_j + gamma_n |am_j| and
// b_j >= |am_j| + ar_j (both rounded upward). That sum S_c has 2n non-negative products; its
// round-to-nearest value f_c satisfies S_c <= f_c + gamma_2n S_c + 2n eta, i.e.
// S_c <= (f_c + 2n eta) / (1 - gamma_2n). centre_c = s_c, radius_c = that bound + n eta, rounded up.
bool column_abs_bounds(const double* em, const double* er, std::size_t n, std::size_t d, std::vector<double>& out) {
  out.assign(d, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < d; ++c) out[c] += std::fabs(em[j * d + c]) + er[j * d + c];
  // n + 1 roundings per chain in round-to-nearest: divided by 1 - gamma_{n+1}, rounded upward.
  const double g = gamma_up(n + 1);
  if (!std::isfinite(g)) return false;
  const double dn1 = dn(1.0 - g);
  for (double& x : out) {
    x = up(x / dn1);
    if (!std::isfinite(x)) return false;
  }
  return true;
}

bool mix_enclosure(const double* em, const double* er, const double* am, const double* ar, std::size_t n,
                   std::size_t d, double* centre, double* radius, const double* colabs) {
  const double gn = gamma_up(n), g2n = gamma_up(2 * n);
  if (!std::isfinite(g2n)) return false;
  const double denom = dn(1.0 - g2n);                                  // <= 1 - gamma_2n, > 0
  const double tail2n = up(static_cast<double>(2 * n) * kEta), tailn = up(static_cast<double>(n) * kEta);
  std::vector<double> q(n), b(n);
  for (std::size_t j = 0; j < n; ++j) {
    q[j] = up(ar[j] + up(gn * std::fabs(am[j])));
    b[j] = up(std::fabs(am[j]) + ar[j]);
  }
  std::fill(centre, centre + d, 0.0);
  std::fill(radius, radius + d, 0.0);
  // Rows whose weight bound b_j = |am_j| + ar_j is below 2^-500 (a saturated softmax) are left out of the
  // sums: their |E_jc alpha_j| <= (|em_jc| + er_jc) b_j add up to at most wt colabs_c with wt = max b_j
  // and colabs_c >= sum over all rows of |em_jc| + er_jc (column_abs_bounds), added to the radius at the
  // end. (Products with such weights run on subnormal numbers, a hundred times slower.)
  const double kTiny = std::ldexp(1.0, -500);
  std::vector<double> own;  // column bounds computed here when the caller has none
  double wt = 0;
  for (std::size_t j = 0; j < n; ++j) {  // column sums, row by row (j ascending for every c)
    const double* e = em + j * d;
    const double* r = er + j * d;
    if (b[j] < kTiny) {
      if (b[j] == 0) continue;  // alpha_j = 0 and E_j is finite: no contribution
      wt = std::max(wt, b[j]);  // bounded by wt colabs_c below, the row not read
      continue;
    }
    for (std::size_t c = 0; c < d; ++c) {
      centre[c] += e[c] * am[j];
      radius[c] += std::fabs(e[c]) * q[j];
      radius[c] += r[c] * b[j];
    }
  }
  if (wt > 0 && !colabs) {
    if (!column_abs_bounds(em, er, n, d, own)) return false;
    colabs = own.data();
  }
  for (std::size_t c = 0; c < d; ++c) {
    radius[c] = up(up(up(up(radius[c] + tail2n) / denom)) + tailn);
    if (wt > 0) radius[c] = up(radius[c] + up(up(wt * colabs[c]) + kEta));
    if (!std::isfinite(centre[c]) || !std::isfinite(radius[c])) return false;
  }
  return true;
}

}  // namespace memcert_checker
