// Modular Gaussian elimination in double: recursive (column-halving) LU with
// row pivoting over F_p, p < 2^26, entries as centred residues in doubles. The trailing updates and the
// triangular solves are products C -= A B done by fast_detail::gemm_sub (vectorised FMA, delayed
// reduction, exact: see dmod_gemm.cpp); the narrow base case also delays reductions while the
// accumulated magnitude provably stays below 2^53. Every value computed is the exact residue, so the
// outcome (rank, pivots, kernel) is identical to the u64 elimination's for any thread count.
#include "memcert/linalg/nmod/dmod.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "dmod_internal.hpp"
#include "memcert/numeric/modp.hpp"

namespace memcert {

using fast_detail::ModCtx;
using fast_detail::reduce_one;

std::uint64_t prime_fast(std::size_t i) {
  static std::mutex mu;
  static std::vector<std::uint64_t> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::uint64_t c = cache.empty() ? (std::uint64_t(1) << 23) - 1 : cache.back() - 2;
  while (cache.size() <= i) {
    while (!modp::is_prime_u64(c)) c -= 2;
    cache.push_back(c);
    c -= 2;
  }
  return cache[i];
}

namespace {

inline double centre(std::uint64_t u, std::uint64_t p) {
  return u > (p - 1) / 2 ? static_cast<double>(u) - static_cast<double>(p) : static_cast<double>(u);
}
inline std::uint64_t uncentre(double x, std::uint64_t p) {
  return x < 0 ? static_cast<std::uint64_t>(x + static_cast<double>(p)) : static_cast<std::uint64_t>(x);
}
inline double inverse_centred(double x, std::uint64_t p) { return centre(modp::nmod_inv(uncentre(x, p), p), p); }

// Reduction for the panel kernel: |x| <= 2^53 - p and |x / p| < 2^51 (true for every panel value: they are
// bounded by h + kmax h^2, and for p = 3 kmax is capped at 10^6), so the 1.5*2^52 rounding is exact and no
// libm call is needed; branch-free so that the loops vectorise.
inline double reduce_panel(double x, double pp, double pinv, double h) {
  constexpr double kMagic = 0x1.8p52;
  const double q = (x * pinv + kMagic) - kMagic;
  double r = x - q * pp;
  r = r > h ? r - pp : r;
  r = r < -h ? r + pp : r;
  return r;
}

// Elimination of a transposed panel T (w columns of mm contiguous rows). Records the row swaps (local
// indices, in order) and the pivot columns (local). See Elim::base for the exactness argument.
__attribute__((target_clones("avx512f", "avx2", "default"))) void panel_eliminate(
    double* T, std::size_t mm, std::size_t w, const ModCtx& M, std::uint64_t p, bool delay,
    std::vector<std::pair<std::size_t, std::size_t>>& swaps, std::vector<std::size_t>& pivk) {
  const double pp = M.p, pinv = M.pinv, h = M.h;
  std::size_t rr = 0;
  for (std::size_t k = 0; k < w && rr < mm; ++k) {
    double* col = T + k * mm;
    if (delay)
      for (std::size_t i = rr; i < mm; ++i) col[i] = reduce_panel(col[i], pp, pinv, h);
    std::size_t piv = rr;
    while (piv < mm && col[piv] == 0) ++piv;
    if (piv == mm) continue;
    if (piv != rr) {
      for (std::size_t kk = 0; kk < w; ++kk) std::swap(T[kk * mm + piv], T[kk * mm + rr]);
      swaps.emplace_back(rr, piv);
    }
    if (delay)
      for (std::size_t kk = k + 1; kk < w; ++kk) T[kk * mm + rr] = reduce_panel(T[kk * mm + rr], pp, pinv, h);
    const double inv = inverse_centred(col[rr], p);
    for (std::size_t i = rr + 1; i < mm; ++i) col[i] = reduce_panel(col[i] * inv, pp, pinv, h);  // |.| <= h^2
    for (std::size_t kk = k + 1; kk < w; ++kk) {
      double* ck = T + kk * mm;
      const double u = ck[rr];
      if (u == 0) continue;
      if (delay)
        for (std::size_t i = rr + 1; i < mm; ++i) ck[i] -= col[i] * u;
      else
        for (std::size_t i = rr + 1; i < mm; ++i) ck[i] = reduce_panel(ck[i] - col[i] * u, pp, pinv, h);
    }
    pivk.push_back(k);
    ++rr;
  }
}

// y[0:n] -= l * x[0:n] (exact: callers keep |y| + |l x| within the kmax bound) and in-place reduction of a
// row segment; vectorised via target_clones.
__attribute__((target_clones("avx512f", "avx2", "default"))) void axpy_sub(double* y, const double* x, double l,
                                                                         std::size_t n) {
  for (std::size_t c = 0; c < n; ++c) y[c] -= l * x[c];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void reduce_row(double* y, std::size_t n, double pp,
                                                                           double pinv, double h) {
  for (std::size_t c = 0; c < n; ++c) y[c] = reduce_panel(y[c], pp, pinv, h);
}

constexpr std::size_t kBase = 16;       // width of the unblocked base case
constexpr std::size_t kSmallTrsm = 32;  // rows handled without recursion in the triangular solves

struct Elim {
  double* a;
  std::size_t m, ld;
  const ModCtx& M;
  std::uint64_t p;
  int threads;
  std::vector<std::size_t> perm, pivcol;
  std::size_t r = 0;
  bool need_u = true;  // false: only the rank profile is wanted

  Elim(double* a_, std::size_t m_, std::size_t ld_, const ModCtx& M_, std::uint64_t p_, int t)
      : a(a_), m(m_), ld(ld_), M(M_), p(p_), threads(t), perm(m_) {
    std::iota(perm.begin(), perm.end(), 0);
  }

  void swap_rows(std::size_t i, std::size_t j) {
    if (i == j) return;
    std::swap_ranges(a + i * ld, a + i * ld + ld, a + j * ld);
    std::swap(perm[i], perm[j]);
  }

  // Unblocked elimination of columns [c0, c1) on rows >= r. With delay, an entry receives at most
  // (c1 - c0) <= kmax - 1 updates l * u (|l|, |u| <= h) before its column is reduced, so it stays an
  // integer below h + kmax h^2 < 2^53 in magnitude: exact.
  // Unblocked elimination of columns [c0, c1) on rows >= r, on a transposed copy of the panel (each column
  // contiguous over the rows) so every step is a long vectorisable loop (panel_eliminate). With delay, an
  // entry receives at most (c1 - c0) <= kmax - 1 updates l * u (|l|, |u| <= h) before its column is
  // reduced, so it stays an integer of magnitude <= h + kmax h^2 <= 2^53 - p: exact. Same pivots as the
  // row-wise elimination (first non-zero at or below the current rank).
  void base(std::size_t c0, std::size_t c1) {
    const std::size_t r0 = r, mm = m - r0, w = c1 - c0;
    if (mm == 0) return;
    panel.resize(w * mm);
    for (std::size_t i = 0; i < mm; ++i) {
      const double* src = a + (r0 + i) * ld + c0;
      for (std::size_t k = 0; k < w; ++k) panel[k * mm + i] = src[k];
    }
    swaps.clear();
    pivk.clear();
    panel_eliminate(panel.data(), mm, w, M, p, M.kmax > w, swaps, pivk);
    for (std::size_t i = 0; i < mm; ++i) {
      double* dst = a + (r0 + i) * ld + c0;
      for (std::size_t k = 0; k < w; ++k) dst[k] = panel[k * mm + i];
    }
    for (const auto& sw : swaps) {  // the row swaps, outside the panel columns (already in place inside)
      double* x = a + (r0 + sw.first) * ld;
      double* y = a + (r0 + sw.second) * ld;
      std::swap_ranges(x, x + c0, y);
      std::swap_ranges(x + c1, x + ld, y + c1);
      std::swap(perm[r0 + sw.first], perm[r0 + sw.second]);
    }
    for (std::size_t k : pivk) pivcol.push_back(c0 + k);
    r += pivk.size();
  }
  std::vector<double> panel;
  std::vector<std::pair<std::size_t, std::size_t>> swaps;
  std::vector<std::size_t> pivk;

  // Forward substitution with the unit lower factor: rows [r0, r1), columns [cA, cB):
  // row_i -= sum_{k in [r0, i)} L_ik row_k, L_ik = a[i][pivcol[k]].
  void trsm(std::size_t r0, std::size_t r1, std::size_t cA, std::size_t cB) {
    if (r1 - r0 <= 1 || cA >= cB) return;
    if (r1 - r0 <= kSmallTrsm) {
      for (std::size_t i = r0 + 1; i < r1; ++i) {
        double* ri = a + i * ld;
        std::size_t cnt = 0;
        for (std::size_t k = r0; k < i; ++k) {
          const double l = ri[pivcol[k]];
          if (l == 0) continue;
          axpy_sub(ri + cA, a + k * ld + cA, l, cB - cA);  // exact while cnt <= kmax
          if (++cnt == M.kmax) {
            reduce_row(ri + cA, cB - cA, M.p, M.pinv, M.h);
            cnt = 0;
          }
        }
        if (cnt) reduce_row(ri + cA, cB - cA, M.p, M.pinv, M.h);
      }
      return;
    }
    const std::size_t mid = r0 + (r1 - r0) / 2;
    trsm(r0, mid, cA, cB);
    fast_detail::gemm_sub(r1 - mid, cB - cA, mid - r0, a + mid * ld, ld, pivcol.data() + r0, a + r0 * ld + cA,
                          ld, a + mid * ld + cA, ld, M, threads);
    trsm(mid, r1, cA, cB);
  }

  void rec(std::size_t c0, std::size_t c1) {
    if (r == m || c0 >= c1) return;
    if (c1 - c0 <= kBase) {
      base(c0, c1);
      return;
    }
    const std::size_t mid = c0 + (c1 - c0) / 2;
    const std::size_t r0 = r;
    rec(c0, mid);
    const std::size_t r1 = r;
    // When every row is a pivot row already, the right half can hold no further pivot: only a caller that
    // needs U (kernel, solve) pays for the updates.
    if (r1 > r0 && (need_u || m > r1)) {
      trsm(r0, r1, mid, c1);
      if (m > r1)
        fast_detail::gemm_sub(m - r1, c1 - mid, r1 - r0, a + r1 * ld, ld, pivcol.data() + r0, a + r0 * ld + mid,
                              ld, a + r1 * ld + mid, ld, M, threads);
    }
    rec(mid, c1);
  }

  // Eliminates with pivots among columns [0, npiv); columns [npiv, ld) are carried along (right-hand
  // sides): on return they hold L^{-1} P B.
  void run(std::size_t npiv) {
    rec(0, npiv);
    if (ld > npiv && r > 0) {
      trsm(0, r, npiv, ld);
      if (m > r)
        fast_detail::gemm_sub(m - r, ld - npiv, r, a + r * ld, ld, pivcol.data(), a + npiv, ld, a + r * ld + npiv, ld,
                              M, threads);
    }
  }

  // Back substitution with U[0:r, pivcol]: solves U_P X = Y in place, X rows of width w (row-major, ld w).
  void bsolve(double* x, std::size_t w, std::size_t r0, std::size_t r1) {
    if (r0 >= r1 || w == 0) return;
    if (r1 - r0 <= kSmallTrsm) {
      for (std::size_t kk = r1; kk-- > r0;) {
        double* xk = x + kk * w;
        const double* uk = a + kk * ld;
        std::size_t cnt = 0;
        for (std::size_t j = kk + 1; j < r1; ++j) {
          const double u = uk[pivcol[j]];
          if (u == 0) continue;
          const double* xj = x + j * w;
          for (std::size_t c = 0; c < w; ++c) xk[c] -= u * xj[c];
          if (++cnt == M.kmax) {
            for (std::size_t c = 0; c < w; ++c) xk[c] = reduce_one(xk[c], M);
            cnt = 0;
          }
        }
        const double inv = inverse_centred(uk[pivcol[kk]], p);
        for (std::size_t c = 0; c < w; ++c) xk[c] = reduce_one(reduce_one(xk[c], M) * inv, M);
      }
      return;
    }
    const std::size_t mid = r0 + (r1 - r0) / 2;
    bsolve(x, w, mid, r1);
    fast_detail::gemm_sub(mid - r0, w, r1 - mid, a + r0 * ld, ld, pivcol.data() + mid, x + mid * w, w, x + r0 * w, w,
                          M, threads);
    bsolve(x, w, r0, mid);
  }
};

int resolve_threads(int t) { return t <= 0 ? fast_threads() : t; }

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Conversions

DModMatrix dmod_from_zmat(const ZMatrix& z, std::uint64_t p) {
  ModCtx M(p);
  DModMatrix d{p, z.rows(), z.cols(), std::vector<double>(z.rows() * z.cols())};
  for (std::size_t i = 0; i < d.a.size(); ++i) {
    const mpz_class& v = z.data()[i];
    std::uint64_t u;
    if (v.fits_slong_p()) {
      long s = v.get_si() % static_cast<long>(p);
      u = static_cast<std::uint64_t>(s < 0 ? s + static_cast<long>(p) : s);
    } else {
      u = mpz_fdiv_ui(v.get_mpz_t(), p);
    }
    d.a[i] = centre(u, p);
  }
  return d;
}

namespace {
// int64 -> double conversions vectorize only with AVX-512DQ (vcvtqq2pd): those bodies get an AVX-512DQ
// copy, chosen at run time (target_clones cannot name AVX-512DQ alone).
__attribute__((target("avx512f,avx512dq"))) bool i64_all_below_2_52_dq(const std::int64_t* a, std::size_t n) {
  std::uint64_t big = 0;
  constexpr std::int64_t kLim = std::int64_t(1) << 52;
  for (std::size_t i = 0; i < n; ++i) big |= static_cast<std::uint64_t>(a[i] >= kLim || a[i] <= -kLim);
  return big == 0;
}
__attribute__((target_clones("avx2", "default"))) bool i64_all_below_2_52_generic(const std::int64_t* a,
                                                                                  std::size_t n) {
  std::uint64_t big = 0;
  constexpr std::int64_t kLim = std::int64_t(1) << 52;
  for (std::size_t i = 0; i < n; ++i) big |= static_cast<std::uint64_t>(a[i] >= kLim || a[i] <= -kLim);
  return big == 0;
}
__attribute__((target("avx512f,avx512dq"))) void i64_residues_small_dq(const std::int64_t* a, std::size_t n,
                                                                          double pp, double pinv, double h,
                                                                          double* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = reduce_panel(static_cast<double>(a[i]), pp, pinv, h);
}
__attribute__((target_clones("avx2", "default"))) void i64_residues_small_generic(const std::int64_t* a,
                                                                                 std::size_t n, double pp,
                                                                                 double pinv, double h,
                                                                                 double* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = reduce_panel(static_cast<double>(a[i]), pp, pinv, h);
}
bool cpu_has_avx512dq() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has;
}
bool i64_all_below_2_52(const std::int64_t* a, std::size_t n) {
  return cpu_has_avx512dq() ? i64_all_below_2_52_dq(a, n) : i64_all_below_2_52_generic(a, n);
}
void i64_residues_small(const std::int64_t* a, std::size_t n, double pp, double pinv, double h, double* out) {
  if (cpu_has_avx512dq())
    i64_residues_small_dq(a, n, pp, pinv, h, out);
  else
    i64_residues_small_generic(a, n, pp, pinv, h, out);
}
}  // namespace

DModMatrix dmod_from_i64(const std::int64_t* a, std::size_t rows, std::size_t cols, std::uint64_t p) {
  DModMatrix d;
  dmod_from_i64_into(a, rows, cols, p, d);
  return d;
}

void dmod_from_i64_into(const std::int64_t* a, std::size_t rows, std::size_t cols, std::uint64_t p, DModMatrix& d) {
  ModCtx M(p);
  d.p = p;
  d.rows = rows;
  d.cols = cols;
  d.a.resize(rows * cols);
  const std::size_t n = rows * cols;
  if (i64_all_below_2_52(a, n)) {  // exact doubles; reduce_panel's preconditions hold (|x / p| < 2^51)
    i64_residues_small(a, n, M.p, M.pinv, M.h, d.a.data());
    return;
  }
  const std::int64_t ps = static_cast<std::int64_t>(p);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t s = a[i] % ps;
    d.a[i] = centre(static_cast<std::uint64_t>(s < 0 ? s + ps : s), p);
  }
}

DModMatrix dmod_from_qmat(const QMatrix& q, std::uint64_t p) {
  ModCtx M(p);
  DModMatrix d{p, q.rows(), q.cols(), std::vector<double>(q.rows() * q.cols())};
  for (std::size_t i = 0; i < q.rows(); ++i) {
    bool integral = true, coprime = true;
    for (std::size_t j = 0; j < q.cols(); ++j) {
      const mpz_class& den = q(i, j).get_den();
      if (den != 1) {
        integral = false;
        if (mpz_fdiv_ui(den.get_mpz_t(), p) == 0) coprime = false;
      }
    }
    if (!coprime) {  // exact row scaling by the lcm of the denominators (rare: p divides a denominator)
      const Integer l = rational_denominator_lcm(q.row(i), q.row(i) + q.cols());
      for (std::size_t j = 0; j < q.cols(); ++j) {
        const Integer z = q(i, j).get_num() * (l / q(i, j).get_den());
        d.a[i * q.cols() + j] = centre(mpz_fdiv_ui(z.get_mpz_t(), p), p);
      }
      continue;
    }
    std::uint64_t lmod = 1;
    if (!integral) {
      Integer l = rational_denominator_lcm(q.row(i), q.row(i) + q.cols());
      lmod = mpz_fdiv_ui(l.get_mpz_t(), p);
    }
    for (std::size_t j = 0; j < q.cols(); ++j) {
      const Rational& v = q(i, j);
      std::uint64_t u = mpz_fdiv_ui(v.get_num_mpz_t(), p);
      if (!integral) {
        std::uint64_t dm = mpz_fdiv_ui(v.get_den_mpz_t(), p);
        u = modp::nmod_mul(modp::nmod_mul(u, lmod, p), dm == 1 ? 1 : modp::nmod_inv(dm, p), p);
      }
      d.a[i * q.cols() + j] = centre(u, p);
    }
  }
  return d;
}

namespace {
// Residues of one row of doubles (see dmod_from_double_rows); branch-free so that it vectorises. Every
// reduce_panel argument is an integer with |x| <= 2^27 h + 2^26 <= 2^53 - p and |x / p| < 2^27 (< 2^51).
__attribute__((target_clones("avx512f", "avx2", "default"))) bool double_row_residues(
    const double* ri, std::size_t cols, const double* pow2, double c26, double pp, double pinv, double h,
    std::int64_t* ex, double* out) {
  std::uint64_t bad = 0;
  std::int64_t emin = 1 << 20;
  for (std::size_t j = 0; j < cols; ++j) {
    std::uint64_t bits;
    std::memcpy(&bits, &ri[j], sizeof bits);
    const std::int64_t be = static_cast<std::int64_t>((bits >> 52) & 0x7ff);
    bad |= static_cast<std::uint64_t>(be == 0x7ff);
    const std::uint64_t mant = (bits & ((std::uint64_t(1) << 52) - 1)) | (be != 0 ? std::uint64_t(1) << 52 : 0);
    ex[j] = be == 0 ? 1 : be;
    emin = mant != 0 && ex[j] < emin ? ex[j] : emin;
  }
  if (bad) return false;
  for (std::size_t j = 0; j < cols; ++j) {
    std::uint64_t bits;
    std::memcpy(&bits, &ri[j], sizeof bits);
    const std::uint64_t be = (bits >> 52) & 0x7ff;
    const std::uint64_t mant = (bits & ((std::uint64_t(1) << 52) - 1)) | (be != 0 ? std::uint64_t(1) << 52 : 0);
    const double hi = static_cast<double>(static_cast<std::int64_t>(mant >> 26));
    const double lo = static_cast<double>(static_cast<std::int64_t>(mant & ((1u << 26) - 1)));
    const double sg = (bits >> 63) ? -1.0 : 1.0;
    const double r = reduce_panel(hi * c26 + lo, pp, pinv, h) * sg;  // |hi c26 + lo| < 2^27 h + 2^26
    const std::int64_t sh = mant != 0 ? ex[j] - emin : 0;
    out[j] = reduce_panel(r * pow2[sh], pp, pinv, h);                  // |r 2^sh mod p| <= h^2
  }
  return true;
}
}  // namespace

DModMatrix dmod_from_double_rows(const double* a, std::size_t rows, std::size_t cols, std::uint64_t p) {
  DModMatrix d;
  dmod_from_double_rows_into(a, rows, cols, p, d);
  return d;
}

void dmod_from_double_rows_into(const double* a, std::size_t rows, std::size_t cols, std::uint64_t p, DModMatrix& d) {
  ModCtx M(p);
  d.p = p;
  d.rows = rows;
  d.cols = cols;
  d.a.resize(rows * cols);
  // A finite double is x = (-1)^s mant 2^(E - 1075) with mant < 2^53 an integer (E = max(biased exponent,
  // 1)); row i is scaled by 2^(1075 - min_E), giving integers mant 2^(E - min_E). Residues: split
  // mant = hi 2^26 + lo, so hi (2^26 mod p) + lo is an exact double below 2^27 h + 2^26 <= 2^53 - p, reduce;
  // times 2^(E - min_E) mod p (table; both centred, product < 2^50, exact); reduce again.
  std::vector<double> pow2(2048);
  std::uint64_t v = 1;
  for (std::size_t e = 0; e < pow2.size(); ++e, v = (v * 2) % p) pow2[e] = centre(v, p);
  const double c26 = pow2[26];
  std::vector<std::int64_t> ex(cols);
  for (std::size_t i = 0; i < rows; ++i) {
    const double* ri = a + i * cols;
    double* out = d.a.data() + i * cols;
    if (!double_row_residues(ri, cols, pow2.data(), c26, M.p, M.pinv, M.h, ex.data(), out))
      throw std::domain_error("dmod_from_double_rows: NaN or infinity");
  }
}

// ---------------------------------------------------------------------------------------------------

ModpRankProfile dmod_rank_profile(DModMatrix& a, const DModRankOptions& opt) {
  if (!opt.in_place) {
    DModMatrix w = a;
    return dmod_rank_profile(w, {opt.threads, true});
  }
  const int threads = opt.threads;
  ModCtx M(a.p);
  ModpRankProfile prof;
  prof.prime = a.p;
  if (a.rows == 0 || a.cols == 0) return prof;
  std::vector<double>& w = a.a;
  Elim e(w.data(), a.rows, a.cols, M, a.p, resolve_threads(threads));
  e.need_u = false;
  e.run(a.cols);
  prof.rank = e.r;
  prof.pivot_rows.assign(e.perm.begin(), e.perm.begin() + e.r);
  std::sort(prof.pivot_rows.begin(), prof.pivot_rows.end());
  prof.pivot_cols = e.pivcol;
  return prof;
}


Matrix<std::uint32_t> dmod_kernel(const DModMatrix& a, std::vector<std::size_t>* free_cols, int threads) {
  ModCtx M(a.p);
  const std::size_t n = a.cols;
  std::vector<double> w = a.a;
  Elim e(w.data(), a.rows, n, M, a.p, resolve_threads(threads));
  if (a.rows > 0 && n > 0) e.run(n);
  std::vector<bool> piv(n, false);
  for (auto c : e.pivcol) piv[c] = true;
  std::vector<std::size_t> fc;
  for (std::size_t c = 0; c < n; ++c)
    if (!piv[c]) fc.push_back(c);
  const std::size_t f = fc.size(), r = e.r;
  // X (r x f) solves U_P X = -U_F.
  std::vector<double> x(r * f);
  for (std::size_t k = 0; k < r; ++k)
    for (std::size_t j = 0; j < f; ++j) x[k * f + j] = -w[k * n + fc[j]];
  e.bsolve(x.data(), f, 0, r);
  Matrix<std::uint32_t> kern(n, f, 0u);
  for (std::size_t j = 0; j < f; ++j) kern(fc[j], j) = 1;
  for (std::size_t k = 0; k < r; ++k)
    for (std::size_t j = 0; j < f; ++j) kern(e.pivcol[k], j) = static_cast<std::uint32_t>(uncentre(x[k * f + j], a.p));
  if (free_cols) *free_cols = std::move(fc);
  return kern;
}

std::optional<Matrix<std::uint32_t>> dmod_solve(const DModMatrix& a, const DModMatrix& b, int threads) {
  if (a.rows != a.cols || b.rows != a.rows || a.p != b.p) throw std::invalid_argument("dmod_solve: shapes or primes differ");
  ModCtx M(a.p);
  const std::size_t n = a.rows, nb = b.cols, ld = n + nb;
  std::vector<double> w(n * ld);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy(a.a.begin() + i * n, a.a.begin() + (i + 1) * n, w.begin() + i * ld);
    std::copy(b.a.begin() + i * nb, b.a.begin() + (i + 1) * nb, w.begin() + i * ld + n);
  }
  Elim e(w.data(), n, ld, M, a.p, resolve_threads(threads));
  if (n > 0) e.run(n);
  if (e.r < n) return std::nullopt;
  std::vector<double> x(n * nb);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < nb; ++j) x[k * nb + j] = w[k * ld + n + j];
  e.bsolve(x.data(), nb, 0, n);
  Matrix<std::uint32_t> out(n, nb, 0u);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < nb; ++j) out(k, j) = static_cast<std::uint32_t>(uncentre(x[k * nb + j], a.p));
  return out;
}

}  // namespace memcert
