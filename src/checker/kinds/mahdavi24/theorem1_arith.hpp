#pragma once
// Theorem 1's check: exact products of integer matrices held as small doubles or 128-bit integers, the
// data's rational scaling, MPFR vectors and sparse interval matrices, and the ordered parallel loop. Used
// by the stages (theorem1_stages.hpp); internal to the checker's mahdavi24 room.
#include <gmpxx.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kernel/float_kernels.hpp"
#include "kernel/read.hpp"

namespace memcert_checker::theorem1 {

constexpr mpfr_prec_t kPrec = 128;     // read-out chain, Lemma 4
constexpr mpfr_prec_t kSoftPrec = 64;  // softmax: its bounds are rounded to doubles (53 bits) anyway

// The label rule for real labels: |y_hat - y| <= 2^-20 max(1, |y|). The construction reproduces labels to
// about 1e-11, so this leaves a wide margin while keeping "memorized" meaningful (a weight set to 0 or a
// label changed by more than a millionth of its size fails).
inline const mpq_class kLabelTolerance(1, 1 << 20);

inline std::string at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// A plain JSON array-of-arrays matrix of exact strings with the expected shape.
inline bool read_plain_matrix(const Value& v, const std::string& where, std::size_t rows, std::size_t cols, QMat& out,
                       std::string& why) {
  if (v.type != json::Type::Array || v.size() != rows) {
    why = where + ": expected an array of " + std::to_string(rows) + " rows";
    return false;
  }
  out.assign(rows, QRow());
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(*v.at(i), at(where, i), cols, out[i], why)) return false;
  return true;
}

// Integer numerators over one common positive denominator.
struct Scaled {
  ZMat num;
  mpz_class den = 1;
};
inline Scaled scale_matrix(const QMat& a) {
  Scaled s;
  for (const auto& row : a)
    for (const auto& q : row) mpz_lcm(s.den.get_mpz_t(), s.den.get_mpz_t(), q.get_den_mpz_t());
  s.num.assign(a.size(), ZRow());
  for (std::size_t i = 0; i < a.size(); ++i) {
    s.num[i].resize(a[i].size());
    for (std::size_t j = 0; j < a[i].size(); ++j) s.num[i][j] = a[i][j].get_num() * (s.den / a[i][j].get_den());
  }
  return s;
}
// y = A x (A: rows x cols) or A^T x, integers; y is resized and overwritten (its limbs are reused).
inline void zmul(const ZMat& a, const ZRow& x, bool transpose, ZRow& y) {
  const std::size_t R = a.size(), C = R ? a[0].size() : 0;
  y.resize(transpose ? C : R);
  for (auto& z : y) mpz_set_ui(z.get_mpz_t(), 0);
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < C; ++j) {
      if (sgn(a[i][j]) == 0) continue;
      if (transpose) { if (sgn(x[i]) != 0) mpz_addmul(y[j].get_mpz_t(), a[i][j].get_mpz_t(), x[i].get_mpz_t()); }
      else if (sgn(x[j]) != 0) mpz_addmul(y[i].get_mpz_t(), a[i][j].get_mpz_t(), x[j].get_mpz_t());
    }
}

// An integer matrix held as doubles (row-major) when every |entry| <= 2^53, with the largest |entry|.
struct SmallInts {
  bool ok = false;
  std::size_t rows = 0, cols = 0;
  std::vector<double> v;
  mpz_class max = 0;
  SmallInts() = default;
  SmallInts(const ZMat& a, bool transpose) {
    rows = transpose ? (a.empty() ? 0 : a[0].size()) : a.size();
    cols = transpose ? a.size() : (a.empty() ? 0 : a[0].size());
    v.resize(rows * cols);
    const mpz_class lim = mpz_class(1) << 53;
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < a[i].size(); ++j) {
        if (abs(a[i][j]) > lim) return;
        v[transpose ? j * cols + i : i * cols + j] = a[i][j].get_d();  // exact: an integer of <= 53 bits
        if (abs(a[i][j]) > max) max = abs(a[i][j]);
      }
    ok = true;
  }
};
// out = A B (rows x cols, row-major) in doubles, EXACTLY: only when A.cols * max|A| * max|B| <= 2^53, so
// that every product and partial sum is an integer of absolute value <= 2^53, hence a double, and no
// IEEE operation rounds. Returns false (out unspecified) otherwise.
inline bool exact_product(const SmallInts& A, const SmallInts& B, std::vector<double>& out) {
  if (!A.ok || !B.ok || A.cols != B.rows || A.max * B.max * static_cast<unsigned long>(A.cols) > (mpz_class(1) << 53))
    return false;
  out.assign(A.rows * B.cols, 0.0);
  for (std::size_t i = 0; i < A.rows; ++i)
    for (std::size_t c = 0; c < A.cols; ++c) {
      const double x = A.v[i * A.cols + c];
      const double* y = &B.v[c * B.cols];
      double* o = &out[i * B.cols];
      for (std::size_t j = 0; j < B.cols; ++j) o[j] += x * y[j];
    }
  return true;
}
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
// out = A B (rows x cols, row-major) in 128-bit integers, EXACTLY: only when A.cols * max|A| * max|B| <
// 2^126, so that every product and partial sum fits an __int128. Returns false otherwise.
inline bool exact_product_128(const SmallInts& A, const SmallInts& B, std::vector<i128>& out) {
  if (!A.ok || !B.ok || A.cols != B.rows || A.max * B.max * static_cast<unsigned long>(A.cols) >= (mpz_class(1) << 126))
    return false;
  out.assign(A.rows * B.cols, 0);
  if (B.cols == 1) {  // a matrix-vector product: one register accumulator per row
    for (std::size_t i = 0; i < A.rows; ++i) {
      const double* ar = &A.v[i * A.cols];
      i128 acc = 0;
      for (std::size_t c = 0; c < A.cols; ++c)
        acc += static_cast<i128>(static_cast<std::int64_t>(ar[c])) * static_cast<std::int64_t>(B.v[c]);
      out[i] = acc;
    }
    return true;
  }
  for (std::size_t i = 0; i < A.rows; ++i)
    for (std::size_t c = 0; c < A.cols; ++c) {
      const auto x = static_cast<std::int64_t>(A.v[i * A.cols + c]);  // exact: |x| <= 2^53
      if (x == 0) continue;
      const double* y = &B.v[c * B.cols];
      i128* o = &out[i * B.cols];
      for (std::size_t j = 0; j < B.cols; ++j) o[j] += static_cast<i128>(x) * static_cast<std::int64_t>(y[j]);
    }
  return true;
}
// r = x for a 128-bit integer (two 64-bit halves).
inline void set_i128(mpz_class& r, i128 x) {
  const bool neg = x < 0;
  const u128 u = neg ? static_cast<u128>(-x) : static_cast<u128>(x);
  mpz_set_ui(r.get_mpz_t(), static_cast<unsigned long>(u >> 64));
  mpz_mul_2exp(r.get_mpz_t(), r.get_mpz_t(), 64);
  mpz_add_ui(r.get_mpz_t(), r.get_mpz_t(), static_cast<unsigned long>(u));
  if (neg) mpz_neg(r.get_mpz_t(), r.get_mpz_t());
}
// k >= 0 with 2^-k the lowest set bit over the `count` values (0 when all are integers or zero): every
// value times 2^k is an integer.
// Read from the bits (no libm call per value): a finite non-zero double is (2^52 + man) 2^(eb - 1075)
// (normal, biased exponent eb > 0) or man 2^-1074 (subnormal), so its lowest set bit is 2^(that exponent
// + ctz of the integer).
inline int scale_exponent(const double* v, std::size_t count) {
  int lowest = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (v[i] == 0) continue;
    std::uint64_t b;
    std::memcpy(&b, &v[i], sizeof b);
    const int eb = static_cast<int>((b >> 52) & 0x7ff);
    const std::uint64_t man = b & ((std::uint64_t{1} << 52) - 1);
    const int low = eb == 0 ? -1074 + __builtin_ctzll(man) : eb - 1075 + __builtin_ctzll(man | (std::uint64_t{1} << 52));
    lowest = std::min(lowest, low);
  }
  return -lowest;
}
// A context given as doubles (n x d, every value the exact number it stores) as integers over 2^k, 2^-k
// the lowest set bit (k >= 0): no rational per entry. False when a scaled value would overflow a double.
inline bool scale_doubles(const double* v, std::size_t n, std::size_t d, Scaled& out) {
  const int k = scale_exponent(v, n * d);
  out.den = 1;
  mpz_mul_2exp(out.den.get_mpz_t(), out.den.get_mpz_t(), static_cast<unsigned long>(k));
  out.num.assign(n, ZRow(d));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < d; ++c) {
      const double x = std::ldexp(v[j * d + c], k);  // an integer: exact unless it overflows
      if (!std::isfinite(x)) return false;
      mpz_set_d(out.num[j][c].get_mpz_t(), x);
    }
  return true;
}
inline int bits_u128(u128 x) { int b = 0; while (x) { x >>= 1; ++b; } return b; }
inline int bits_mpz(const mpz_class& x) { return sgn(x) == 0 ? 0 : static_cast<int>(mpz_sizeinbase(x.get_mpz_t(), 2)); }
// The columns of an integer matrix A (rows x cols) over their gcds, A_{:,i} = g_i B_{:,i}: one common
// denominator blows every column up to the largest one's size, while B_{:,i} often fits 64 bits.
struct ColumnGcd {
  std::vector<mpz_class> g;         // per column (0 for a zero column)
  std::vector<std::int64_t> b;      // rows x cols, row-major: B where every entry of its column is below 2^62
  std::vector<char> small;          // per column
  std::vector<int> bits;            // per small column: bits of max |B_{:,i}|
  ColumnGcd() = default;
  explicit ColumnGcd(const ZMat& a) {
    const std::size_t R = a.size(), C = R ? a[0].size() : 0;
    g.assign(C, 0);
    small.assign(C, 0);
    bits.assign(C, 0);
    b.assign(R * C, 0);
    mpz_class q;
    for (std::size_t i = 0; i < C; ++i) {
      for (std::size_t r = 0; r < R; ++r) mpz_gcd(g[i].get_mpz_t(), g[i].get_mpz_t(), a[r][i].get_mpz_t());
      if (sgn(g[i]) == 0) continue;
      bool ok = true;
      for (std::size_t r = 0; r < R && ok; ++r) {
        mpz_divexact(q.get_mpz_t(), a[r][i].get_mpz_t(), g[i].get_mpz_t());
        ok = mpz_sizeinbase(q.get_mpz_t(), 2) <= 62;
        if (ok) {
          b[r * C + i] = mpz_get_si(q.get_mpz_t());
          bits[i] = std::max(bits[i], static_cast<int>(mpz_sizeinbase(q.get_mpz_t(), 2)));
        }
      }
      small[i] = ok;
    }
  }
  // y = A^T x exactly (A the matrix this was built from, passed again for its large columns): a small
  // column as g_i (B_{:,i}^T x) with the dot product in 128 bits when max|B| max|x| rows < 2^126.
  void transposed_times(const ZMat& a, const ZRow& x, ZRow& y, mpz_class& tmp) const {
    const std::size_t R = a.size(), C = g.size();
    y.resize(C);
    bool x64 = R < (std::size_t(1) << 20);
    int xbits = 0;
    thread_local std::vector<std::int64_t> xi;
    xi.assign(R, 0);
    for (std::size_t r = 0; r < R && x64; ++r) {
      const int bx = sgn(x[r]) == 0 ? 0 : static_cast<int>(mpz_sizeinbase(x[r].get_mpz_t(), 2));
      x64 = bx <= 62;
      if (x64) xi[r] = mpz_get_si(x[r].get_mpz_t()), xbits = std::max(xbits, bx);
    }
    int rbits = 0;
    while ((std::size_t(1) << rbits) <= R) ++rbits;
    for (std::size_t i = 0; i < C; ++i) {
      mpz_set_ui(y[i].get_mpz_t(), 0);
      if (sgn(g[i]) == 0) continue;
      if (small[i] && x64 && bits[i] + xbits + rbits <= 126) {
        i128 acc = 0;
        for (std::size_t r = 0; r < R; ++r) acc += static_cast<i128>(b[r * C + i]) * xi[r];
        set_i128(tmp, acc);
        mpz_mul(y[i].get_mpz_t(), tmp.get_mpz_t(), g[i].get_mpz_t());
      } else {
        for (std::size_t r = 0; r < R; ++r) mpz_addmul(y[i].get_mpz_t(), a[r][i].get_mpz_t(), x[r].get_mpz_t());
      }
    }
  }
};
// The `w` bits of |x| from bit `at` on (w <= 62).
inline std::uint64_t mpz_bits_at(const mpz_class& x, std::size_t at, int w) {
  const mp_size_t limbs = static_cast<mp_size_t>(mpz_size(x.get_mpz_t()));
  const mp_size_t i = static_cast<mp_size_t>(at / 64);
  const unsigned off = static_cast<unsigned>(at % 64);
  const u128 lo = i < limbs ? mpz_getlimbn(x.get_mpz_t(), i) : 0, hi = i + 1 < limbs ? mpz_getlimbn(x.get_mpz_t(), i + 1) : 0;
  return static_cast<std::uint64_t>(((hi << 64 | lo) >> off) & ((u128(1) << w) - 1));
}
// a = E (K v) exactly (E: n x d, K: d x m, both integers of <= 53 bits as SmallInts; v: m integers) with
// 128-bit products where the bounds allow. Entries of v of up to 240 significant bits (above a common
// power of two 2^z, taken out and put back at the end) make u = K v_S, exact (each v_i
// in 60-bit limbs, so every limb sum K v_{S,l} stays below 2^(53 + 60 + bits(m)) <= 2^126 for m < 2^13);
// E u is then taken W bits of u at a time (W = min(62, 126 - bits(max|E|) - bits(d)), so each E u_l
// fits); each larger entry v_i adds (E K_{:,i}) v_i (a 128-bit column times one big integer). About
// n d (bits(u) / W + big entries) 128-bit products instead of n d m. False (a untouched) when a bound
// does not hold.
inline bool logits_split(const SmallInts& E, const SmallInts& K, const ZRow& v, ZRow& a, mpz_class& tmp) {
  const std::size_t n = E.rows, d = E.cols, m = K.cols;
  if (!E.ok || !K.ok || K.rows != d || v.size() != m || m >= (std::size_t(1) << 13) || d >= (std::size_t(1) << 20)) return false;
  const int ebits = bits_mpz(E.max), dbits = bits_u128(d);
  const int W = std::min(62, 126 - ebits - dbits);
  if (W < 8 || ebits + 53 + dbits > 126) return false;
  thread_local std::vector<i128> ul, acc;
  thread_local std::vector<std::int64_t> vl, limb;
  thread_local std::vector<std::size_t> big, small;
  thread_local ZRow u;
  big.clear();
  small.clear();
  // v's entries often share a power of two (one matrix denominator scales them all): v_S = 2^z v'_S with
  // z the fewest trailing zeros among the entries that are compact (at most 240 significant bits).
  std::size_t z = SIZE_MAX;
  for (std::size_t i = 0; i < m; ++i)
    if (sgn(v[i]) != 0) {
      const std::size_t tz = mpz_scan1(v[i].get_mpz_t(), 0);
      if (static_cast<std::size_t>(bits_mpz(v[i])) - tz <= 240) z = std::min(z, tz);
    }
  if (z == SIZE_MAX) z = 0;
  int vbits = 0;  // of v'_S
  for (std::size_t i = 0; i < m; ++i) {
    if (sgn(v[i]) == 0) continue;
    const std::size_t b = static_cast<std::size_t>(bits_mpz(v[i]));
    if (b < z + 1 || b - z > 240 || mpz_scan1(v[i].get_mpz_t(), 0) < z) big.push_back(i);
    else small.push_back(i), vbits = std::max(vbits, static_cast<int>(b - z));
  }
  // u = K v'_S: 60 bits of every v'_i at a time.
  u.resize(d);
  for (auto& x : u) mpz_set_ui(x.get_mpz_t(), 0);
  vl.assign(m, 0);
  for (int at = 0; at < vbits; at += 60) {
    for (std::size_t i : small) {
      const auto part = static_cast<std::int64_t>(mpz_bits_at(v[i], z + static_cast<std::size_t>(at), 60));
      vl[i] = sgn(v[i]) < 0 ? -part : part;
    }
    for (std::size_t c = 0; c < d; ++c) {
      const double* kr = &K.v[c * m];
      i128 x = 0;
      for (std::size_t i : small) x += static_cast<i128>(static_cast<std::int64_t>(kr[i])) * vl[i];
      set_i128(tmp, x);
      mpz_mul_2exp(tmp.get_mpz_t(), tmp.get_mpz_t(), static_cast<unsigned long>(at));
      mpz_add(u[c].get_mpz_t(), u[c].get_mpz_t(), tmp.get_mpz_t());
    }
  }
  int ubits = 0;
  for (const auto& x : u) ubits = std::max(ubits, bits_mpz(x));
  a.resize(n);
  for (auto& x : a) mpz_set_ui(x.get_mpz_t(), 0);
  limb.assign(d, 0);
  for (int at = 0; at < ubits; at += W) {  // a += (E u_l) 2^at
    for (std::size_t c = 0; c < d; ++c) {
      const auto part = static_cast<std::int64_t>(mpz_bits_at(u[c], static_cast<std::size_t>(at), W));
      limb[c] = sgn(u[c]) < 0 ? -part : part;
    }
    for (std::size_t j = 0; j < n; ++j) {
      const double* er = &E.v[j * d];
      i128 x = 0;
      for (std::size_t c = 0; c < d; ++c) x += static_cast<i128>(static_cast<std::int64_t>(er[c])) * limb[c];
      set_i128(tmp, x);
      mpz_mul_2exp(tmp.get_mpz_t(), tmp.get_mpz_t(), static_cast<unsigned long>(z + static_cast<std::size_t>(at)));
      mpz_add(a[j].get_mpz_t(), a[j].get_mpz_t(), tmp.get_mpz_t());
    }
  }
  if (!big.empty()) {  // (E K_{:,i}) v_i, the column of K copied contiguous first
    thread_local std::vector<std::int64_t> col;
    col.resize(d);
    for (std::size_t i : big) {
      for (std::size_t c = 0; c < d; ++c) col[c] = static_cast<std::int64_t>(K.v[c * m + i]);
      for (std::size_t j = 0; j < n; ++j) {
        const double* er = &E.v[j * d];
        i128 x = 0;
        for (std::size_t c = 0; c < d; ++c) x += static_cast<i128>(static_cast<std::int64_t>(er[c])) * col[c];
        set_i128(tmp, x);
        mpz_addmul(a[j].get_mpz_t(), tmp.get_mpz_t(), v[i].get_mpz_t());
      }
    }
  }
  return true;
}
// The same scaling with the numerators kept as doubles (SmallInts) when every one is at most 2^53 in
// magnitude (then exact); false otherwise (den and out unspecified).
inline bool scale_doubles_small(const double* v, std::size_t n, std::size_t d, mpz_class& den, SmallInts& out) {
  const int k = scale_exponent(v, n * d);
  out.rows = n;
  out.cols = d;
  out.v.resize(n * d);
  double mx = 0;
  const double p2 = k <= 1023 ? std::ldexp(1.0, k) : 0.0;  // 2^k, a double up to 2^1023
  for (std::size_t i = 0; i < n * d; ++i) {
    // An integer: times a power of two is exact unless it overflows (ldexp past 2^1023).
    const double x = k <= 1023 ? v[i] * p2 : std::ldexp(v[i], k);
    if (!(std::fabs(x) <= 9007199254740992.0)) return false;  // beyond 2^53 (or not finite)
    out.v[i] = x;
    mx = std::max(mx, std::fabs(x));
  }
  out.max = mx;  // exact: an integer <= 2^53
  out.ok = true;
  den = 1;
  mpz_mul_2exp(den.get_mpz_t(), den.get_mpz_t(), static_cast<unsigned long>(k));
  return true;
}
// r += x * f for an integer-valued double f (|f| <= 2^53): |f| fits an unsigned long on LP64.
static_assert(sizeof(unsigned long) >= 8, "addmul_d and exact_product need a 64-bit unsigned long");
inline void addmul_d(mpz_class& r, const mpz_class& x, double f) {
  if (f > 0) mpz_addmul_ui(r.get_mpz_t(), x.get_mpz_t(), static_cast<unsigned long>(f));
  else if (f < 0) mpz_submul_ui(r.get_mpz_t(), x.get_mpz_t(), static_cast<unsigned long>(-f));
}

// MPFR numbers of one precision in a vector (raw structs: no allocation in the hot loops).
struct MpfrVec {
  std::vector<__mpfr_struct> v;
  MpfrVec(std::size_t n, mpfr_prec_t prec) : v(n) {
    for (auto& x : v) { mpfr_init2(&x, prec); mpfr_set_zero(&x, 1); }
  }
  MpfrVec(const MpfrVec&) = delete;
  MpfrVec& operator=(const MpfrVec&) = delete;
  ~MpfrVec() { for (auto& x : v) mpfr_clear(&x); }
  mpfr_ptr operator[](std::size_t i) { return &v[i]; }
  mpfr_srcptr operator[](std::size_t i) const { return &v[i]; }
  void zero() { for (auto& x : v) mpfr_set_zero(&x, 1); }
};

// A sparse rational matrix W (rows x cols) as its non-zero entries enclosed in [lo, hi] (MPFR, directed
// rounding), in row-major order, for y = W^T x on interval vectors.
struct SparseIv {
  std::vector<std::size_t> row, col;
  MpfrVec lo, hi;
  explicit SparseIv(const QMat& w) : lo(count(w), kPrec), hi(count(w), kPrec) {
    for (std::size_t i = 0; i < w.size(); ++i)
      for (std::size_t j = 0; j < w[i].size(); ++j)
        if (sgn(w[i][j]) != 0) {
          mpfr_set_q(lo[row.size()], w[i][j].get_mpq_t(), MPFR_RNDD);
          mpfr_set_q(hi[row.size()], w[i][j].get_mpq_t(), MPFR_RNDU);
          row.push_back(i);
          col.push_back(j);
        }
  }
  static std::size_t count(const QMat& w) {
    std::size_t k = 0;
    for (const auto& r : w) for (const auto& q : r) k += sgn(q) != 0;
    return k;
  }
  // [ylo, yhi][off + j] += (W^T [xlo, xhi])_j: each product of intervals is the min / max of its
  // end-point products rounded down / up (two of them when the entry is a point), each sum rounded
  // down / up.
  void add_transposed(const MpfrVec& xlo, const MpfrVec& xhi, MpfrVec& ylo, MpfrVec& yhi, std::size_t off,
                      mpfr_ptr t, mpfr_ptr t2, mpfr_ptr p) const {
    for (std::size_t e = 0; e < row.size(); ++e) {
      mpfr_srcptr wl = lo[e], wh = hi[e], xl = xlo[row[e]], xh = xhi[row[e]];
      if (mpfr_equal_p(wl, wh)) {
        const bool pos = mpfr_sgn(wl) > 0;
        mpfr_mul(t, wl, pos ? xl : xh, MPFR_RNDD);
        mpfr_mul(t2, wl, pos ? xh : xl, MPFR_RNDU);
      } else {
        mpfr_srcptr ws[2] = {wl, wh}, xs[2] = {xl, xh};
        mpfr_set_inf(t, 1);
        mpfr_set_inf(t2, -1);
        for (auto w : ws)
          for (auto x : xs) {
            mpfr_mul(p, w, x, MPFR_RNDD);
            mpfr_min(t, t, p, MPFR_RNDD);
            mpfr_mul(p, w, x, MPFR_RNDU);
            mpfr_max(t2, t2, p, MPFR_RNDU);
          }
      }
      mpfr_add(ylo[off + col[e]], ylo[off + col[e]], t, MPFR_RNDD);
      mpfr_add(yhi[off + col[e]], yhi[off + col[e]], t2, MPFR_RNDU);
    }
  }
};

// Runs step(i, worker, reason) for i < count on `threads` threads (worker < threads numbers the thread,
// for per-thread scratch). On failure, the reason of the SMALLEST failing i is returned in `why`, so the
// message does not depend on the number of threads or on scheduling: every i below it has been run
// (indices are handed out in increasing order, and one is skipped only when a smaller one failed).
inline bool run_all(std::size_t count, unsigned threads, const std::function<bool(std::size_t, unsigned, std::string&)>& step,
             std::string& why) {
  std::atomic<std::size_t> first_fail{count};
  std::mutex m;
  std::string reason;
  parallel_for(count, threads, [&](std::size_t i, unsigned worker) {
    if (i > first_fail.load()) return;
    std::string r;
    try {  // an exception is this index's failure, so the smallest failing index still wins
      if (step(i, worker, r)) return;
    } catch (const std::exception& e) {
      r = "item " + std::to_string(i) + ": " + e.what();
    }
    std::lock_guard<std::mutex> lock(m);
    if (i < first_fail.load()) {
      first_fail.store(i);
      reason = r;
    }
  });
  if (first_fail.load() == count) return true;
  why = reason;
  return false;
}

}  // namespace memcert_checker::theorem1
