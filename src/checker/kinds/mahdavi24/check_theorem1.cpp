// kind "theorem1", claim "mahdavi24/theorem-1": the written multi-head attention weights memorize the
// certificate's T examples (docs/THEORY.md sections 1, 3, 4 "Step 2", and 7). Re-derived from scratch:
//  1. exact logits a_h = E W_K^h (W_Q^h)^T e for every example and head (integer arithmetic over one
//     common denominator per matrix, GMP);
//  2. softmax enclosures alpha_h = x / sum(x), x_k = exp(a_k - max a) with MPFR directed rounding, and
//     p_h = E^T alpha_h enclosed entrywise in double midpoint-radius arithmetic with a rigorous bound
//     (float_kernels.hpp, mix_enclosure): row t of Z is [p_1; ...; p_H] in [centre +- radius];
//  3. rank(Z) >= T for EVERY matrix of the enclosure: G = fl(C C^T) of the double centres with the
//     rigorous bound |fl(G) - C C^T| <= gamma_m |C||C|^T; mu just above ||R||_F^2; G - mu I proved
//     positive definite by Rump's floating-point test (BIT 2006; docs/THEORY.md section 7 constants, first
//     term doubled as a margin), so sigma_T(C) > ||R||_F >= ||R||_2 and Weyl gives rank >= T;
//  4. the whole forward pass o_h = W_V^T p_h, o = W_O^T [o_h] (+ e with skip), y_hat = W_D^T o in
//     MPFR intervals: every real label y within 2^-20 max(1, |y|) (the checker's rule, never the
//     certificate's), or a certified arg-max with positive margin for class labels;
//  5. the trace's target logits for each head's group equal the recomputed exact logits (Claim 1);
//     Lemma 3's conditions, gap and spread, Lemma 4's scale c and Lemma 5's direct criterion per head, with
//     the sigma_lower it uses re-certified: Rump's test on the Gram matrix of that step's Z_inf (heads
//     1..h-1 as computed, head h in its saturation limit) shifted by (sigma_lower + ||R||_F)^2.
// Only IEEE round-to-nearest double +, -, *, /, sqrt (no FMA contraction: the build disables it),
// GMP and MPFR are trusted. Reading the contexts and heads, and steps 1, 2 and 4 (example by example, each
// thread with its own scratch) run on checker_threads() threads, as do the Gram product and the Cholesky
// factorization of step 3; the first failure in index order is reported, so the verdict and its message
// do not depend on the number of threads or on scheduling.
#include <algorithm>
#include <exception>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>

#include "kernel/float_kernels.hpp"
#include "kernel/context.hpp"
#include "kernel/interval.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

namespace {

constexpr mpfr_prec_t kPrec = 128;     // read-out chain, Lemma 4
constexpr mpfr_prec_t kSoftPrec = 64;  // softmax: its bounds are rounded to doubles (53 bits) anyway

// The label rule for real labels: |y_hat - y| <= 2^-20 max(1, |y|). The construction reproduces labels to
// about 1e-11, so this leaves a wide margin while keeping "memorized" meaningful (a weight set to 0 or a
// label changed by more than a millionth of its size fails).
const mpq_class kLabelTolerance(1, 1 << 20);

std::string at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// A plain JSON array-of-arrays matrix of exact strings with the expected shape.
bool read_plain_matrix(const Value& v, const std::string& where, std::size_t rows, std::size_t cols, QMat& out,
                       std::string& why) {
  if (v.type != json::Type::Array || v.items.size() != rows) {
    why = where + ": expected an array of " + std::to_string(rows) + " rows";
    return false;
  }
  out.assign(rows, QRow());
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(v.items[i], at(where, i), cols, out[i], why)) return false;
  return true;
}

// Integer numerators over one common positive denominator.
struct Scaled {
  ZMat num;
  mpz_class den = 1;
};
Scaled scale_matrix(const QMat& a) {
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
void zmul(const ZMat& a, const ZRow& x, bool transpose, ZRow& y) {
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
bool exact_product(const SmallInts& A, const SmallInts& B, std::vector<double>& out) {
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
bool exact_product_128(const SmallInts& A, const SmallInts& B, std::vector<i128>& out) {
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
void set_i128(mpz_class& r, i128 x) {
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
int scale_exponent(const double* v, std::size_t count) {
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
bool scale_doubles(const double* v, std::size_t n, std::size_t d, Scaled& out) {
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
int bits_u128(u128 x) { int b = 0; while (x) { x >>= 1; ++b; } return b; }
int bits_mpz(const mpz_class& x) { return sgn(x) == 0 ? 0 : static_cast<int>(mpz_sizeinbase(x.get_mpz_t(), 2)); }
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
std::uint64_t mpz_bits_at(const mpz_class& x, std::size_t at, int w) {
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
bool logits_split(const SmallInts& E, const SmallInts& K, const ZRow& v, ZRow& a, mpz_class& tmp) {
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
bool scale_doubles_small(const double* v, std::size_t n, std::size_t d, mpz_class& den, SmallInts& out) {
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
void addmul_d(mpz_class& r, const mpz_class& x, double f) {
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
bool run_all(std::size_t count, unsigned threads, const std::function<bool(std::size_t, unsigned, std::string&)>& step,
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

// data.file / data.digest (docs/CERTIFICATES.md "Data by reference"): the data file's values, asked of
// the caller's supplier, must hold at least T examples of shape n x d; the digest of the first T is
// recomputed here from those values and must equal the certificate's. The queries come back as exact
// rationals (Q); the contexts stay doubles in `arrays` (each is made exact when its example is checked).
// The referenced data and their digest, recomputed beside the check (SHA-256 is sequential: on its own
// thread it costs no wall time while the examples are checked). The verdict waits for it
// (check_theorem1_on): a mismatch rejects whatever the check found, so the reason stays the digest's.
struct DataDigestJob {
  AttentionArrays arrays;            // must outlive `running` (declared first: destroyed last)
  std::string expected;              // the certificate's data.digest
  std::size_t T = 0;                 // the examples it covers
  std::future<std::string> running;  // the digest of the supplied values (not started: computed in line)
};

std::string digest_mismatch(const std::string& mine, const std::string& named) {
  return "data.digest: the data supplied have digest " + mine + ", the certificate names " + named +
         " (not the data the certificate was made for)";
}

// The digest `mine` (v2: contexts, queries, labels) against the certificate's `named`. A certificate
// written before the digest covered labels names the v1 digest (contexts and queries only): accepted when
// that matches, the labels then being tied by the exact comparison with the file's (bind_file_labels).
bool digest_matches(const AttentionArrays& arrays, std::size_t T, const std::string& mine, const std::string& named,
                    std::string& why) {
  if (mine == named) return true;
  if (attention_arrays_digest_v1(arrays, T) == named) {
    note_applied("data.digest: an older digest of the contexts and queries only; the labels are compared with the file's exactly");
    return true;
  }
  why = digest_mismatch(mine, named);
  return false;
}

// The referenced file's labels, as the supplier gave them: real labels made exact and canonical here (the
// digest is over the canonical text, so "2/4" and "1/2" cannot name different digests).
bool canonical_file_labels(AttentionArrays& arrays, std::string& why) {
  using L = AttentionArrays::Labels;
  if (arrays.label_kind == L::classes && arrays.classes.size() != arrays.T) {
    why = "data.file: expected " + std::to_string(arrays.T) + " class labels";
    return false;
  }
  if (arrays.label_kind != L::real) return true;
  if (arrays.d_out == 0 || arrays.labels.size() != arrays.T * arrays.d_out) {
    why = "data.file: expected " + std::to_string(arrays.T) + " x d_out real labels";
    return false;
  }
  mpq_class q;
  for (std::size_t i = 0; i < arrays.labels.size(); ++i) {
    std::string& text = arrays.labels[i];
    if (text.empty() || text.size() > 100000 || q.set_str(text, 10) != 0 || q.get_den() == 0) {
      why = "data.file: label " + std::to_string(i) + " is not an exact rational";
      return false;
    }
    q.canonicalize();
    text = q.get_str();
  }
  return true;
}

// The certificate's labels (Y real, or cls classes, for its T examples) against the file's: equal
// exactly, else rejected naming the first difference. A file without labels ties nothing: listed.
bool bind_file_labels(const AttentionArrays& arrays, std::size_t T, bool class_labels, const QMat& Y,
                      const std::vector<std::size_t>& cls, std::string& why) {
  using L = AttentionArrays::Labels;
  if (arrays.label_kind == L::none) {
    note_not_checked("labels: the referenced data file has none (the certificate's own labels are the ones memorized)");
    return true;
  }
  if ((arrays.label_kind == L::classes) != class_labels) {
    why = std::string("data.") + (class_labels ? "class_labels" : "labels") + ": the certificate has " +
          (class_labels ? "class" : "real") + " labels, the data file " + (class_labels ? "real" : "class") + " labels";
    return false;
  }
  if (class_labels) {
    for (std::size_t t = 0; t < T; ++t)
      if (arrays.classes[t] != cls[t]) {
        why = at("data.class_labels", t) + ": the certificate has " + std::to_string(cls[t]) + ", the data file has " +
              std::to_string(arrays.classes[t]);
        return false;
      }
  } else {
    const std::size_t dout = Y.empty() ? 0 : Y[0].size();
    if (arrays.d_out != dout) {
      why = "data.labels: the certificate has " + std::to_string(dout) + " outputs per example, the data file " +
            std::to_string(arrays.d_out);
      return false;
    }
    mpq_class q;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < dout; ++j) {
        q.set_str(arrays.labels[t * dout + j], 10);  // canonical, checked by canonical_file_labels
        if (q != Y[t][j]) {
          why = at(at("data.labels", t), j) + ": the certificate has " + Y[t][j].get_str() + ", the data file has " + q.get_str();
          return false;
        }
      }
  }
  note_applied("data: the certificate's labels equal the referenced data file's exactly");
  return true;
}

bool read_referenced_data(const Value& data, std::size_t T, std::size_t n, std::size_t d, DataDigestJob& job,
                          QMat& Q, std::string& why, unsigned threads) {
  AttentionArrays& arrays = job.arrays;
  std::string file, digest;
  if (!read_string(data, "data", "file", file, why) || !read_string(data, "data", "digest", digest, why)) return false;
  const ArraysSupplier* supply = check_context().arrays;
  if (!supply) {
    check_context().malformed = true;
    why = "data.file: the certificate references its data (" + file + "); the data file must be supplied (verify --data)";
    return false;
  }
  std::string error;
  if (!(*supply)(file, arrays, error)) {
    check_context().malformed = true;
    why = error.empty() ? "data.file: " + file + ": could not be read" : error;
    return false;
  }
  if (arrays.n != n || arrays.d != d || arrays.T < T || arrays.context_values() != arrays.T * n * d ||
      (!arrays.contexts.empty() && !arrays.contexts_f32.empty()) || arrays.queries.size() != arrays.T * d) {
    why = "data.file: expected at least " + std::to_string(T) + " examples with contexts of " + std::to_string(n) + " x " +
          std::to_string(d) + ", the data have " + std::to_string(arrays.T) + " of " + std::to_string(arrays.n) + " x " +
          std::to_string(arrays.d);
    return false;
  }
  if (check_context().data_replaces_file && arrays.T != T) {
    // As for an embedded certificate (match_data.cpp): one about some of DATA's rows says so, not VALID.
    why = "data: DATA has " + std::to_string(arrays.T) + " examples, the certificate is about " + std::to_string(T) +
          " (the referenced file's first " + std::to_string(T) + "): DATA's rows from " + std::to_string(T) + " on are not covered";
    return false;
  }
  for (const std::vector<double>* v : {&arrays.contexts, &arrays.queries})
    for (double x : *v)
      if (!std::isfinite(x)) { why = "data.file: a value is not finite"; return false; }
  for (float x : arrays.contexts_f32)
    if (!std::isfinite(x)) { why = "data.file: a value is not finite"; return false; }
  if (!canonical_file_labels(arrays, why)) return false;
  job.expected = digest;
  job.T = T;
  if (threads >= 2) {
    job.running = std::async(std::launch::async, [&arrays, T] { return attention_arrays_digest(arrays, T); });
  } else {
    const std::string mine = attention_arrays_digest(arrays, T);
    if (!digest_matches(arrays, T, mine, digest, why)) return false;
  }
  Q.assign(T, QRow(d));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) mpq_set_d(Q[t][c].get_mpq_t(), arrays.queries[t * d + c]);
  note_applied("data: the first " + std::to_string(T) + " examples of the referenced data file, digest recomputed from its values");
  return true;
}

bool check_theorem1_body(const Value& cert, std::string& why, unsigned threads, DataDigestJob& job);

// "examples": which rows of the user's data set the certificate's T examples are (strictly increasing
// indices). The network is checked on the certificate's data; which rows of a data set those are is tied
// only by `verify --data` (match_data.cpp compares row i with DATA's row examples[i]), so here it must be
// well formed and is listed as not checked. A certificate referencing its data file is checked on the
// file's first T examples: its examples must name exactly those.
bool check_examples_field(const Value& cert, std::size_t T, bool by_file, std::string& why) {
  const Value* ev = cert.find("examples");
  if (!ev) return true;
  if (ev->type != json::Type::Array || ev->items.size() != T) {
    check_context().malformed = true;
    why = "examples: expected " + std::to_string(T) + " row indices";
    return false;
  }
  std::size_t prev = 0;
  for (std::size_t i = 0; i < T; ++i) {
    std::size_t row = 0;
    if (!read_size(ev->items[i], at("examples", i), kMaxDimension, row, why)) return false;
    if (i > 0 && row <= prev) { why = at("examples", i) + ": expected strictly increasing row indices"; return false; }
    if (by_file && row != i) {
      why = at("examples", i) + ": names row " + std::to_string(row) + ", but the certificate is checked on the referenced file's first " +
            std::to_string(T) + " examples";
      return false;
    }
    prev = row;
  }
  if (!by_file && !check_context().data_matched)
    note_not_checked("examples (which rows of a data set the certificate's examples are: tied by verify --data DATA)");
  return true;
}

bool check_theorem1_on(const Value& cert, std::string& why, unsigned threads) {
  DataDigestJob job;
  const bool ok = check_theorem1_body(cert, why, threads, job);
  if (job.running.valid()) {
    const std::string mine = job.running.get();
    std::string digest_why;
    if (!digest_matches(job.arrays, job.T, mine, job.expected, digest_why)) {
      why = digest_why;
      return false;
    }
  }
  return ok;
}

bool check_theorem1_body(const Value& cert, std::string& why, unsigned threads, DataDigestJob& job) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  // "method": "theorem" (the default, older certificates have no field) is Theorem 1's construction with
  // its proof trace, T <= H(r-1)+1; "generic" is weights beyond the theorem (any T <= H d, the column count
  // of Z): no trace is taken, the verdict rests on the forward pass and rank(Z) >= T alone (steps 1-4).
  bool generic = false;
  if (cert.find("method")) {
    std::string method;
    if (!read_string(cert, "", "method", method, why)) return false;
    if (method != "theorem" && method != "generic") { why = "method: expected \"theorem\" or \"generic\", got \"" + method + "\""; return false; }
    generic = method == "generic";
  }
  const char* const want_claim = generic ? "mahdavi24/generic-weights" : "mahdavi24/theorem-1";
  if (claim != want_claim) {
    why = std::string("claim: kind \"theorem1\" with method ") + (generic ? "generic" : "theorem") + " proves \"" + want_claim +
          "\", not \"" + claim + "\"";
    return false;
  }
  // ---- sizes ----
  std::size_t H = 0, n = 0, d = 0, dh = 0, dv = 0, dout = 0, T = 0, rankZ = 0;
  const std::size_t kMax = 1u << 20;
  struct SizeField { const char* key; std::size_t* out; };
  for (SizeField f : {SizeField{"H", &H}, SizeField{"n", &n}, SizeField{"d", &d}, SizeField{"dh", &dh},
                      SizeField{"dv", &dv}, SizeField{"d_out", &dout}, SizeField{"T", &T},
                      SizeField{"rank_Z_lower", &rankZ}}) {
    const Value* v = member(cert, "", f.key, json::Type::Number, why);
    if (!v || !read_size(*v, f.key, kMax, *f.out, why)) return false;
  }
  if (H == 0 || n == 0 || d == 0 || dh == 0 || dout == 0 || T == 0) { why = "sizes: H, n, d, dh, d_out, T must be >= 1"; return false; }
  if (n > d) { why = "n: Theorem 1 needs n <= d"; return false; }
  if (dv < dout || d < dout) { why = "d_out: Theorem 1 needs d_v >= d_out and d >= d_out"; return false; }
  const std::size_t r = std::min(n, dh);
  if (!generic && T > H * (r - 1) + 1) { why = "T: exceeds H(r-1)+1 = " + std::to_string(H * (r - 1) + 1); return false; }
  if (generic && T > H * d) { why = "T: exceeds H d = " + std::to_string(H * d) + ", the column count of Z (rank(Z) = T is impossible)"; return false; }
  if (rankZ != T) { why = "rank_Z_lower: the certificate must claim rank(Z) >= T = " + std::to_string(T); return false; }
  {
    // Cost, from the shapes alone, in word-size operations (Budget::kOpsPerSecond): the exact logits
    // (T H n d min(d_h, 8) products of machine numbers, about 5 to an operation: E W_K for small d_h,
    // else E (W_K v) in a few 128-bit passes over E), the mixing and read-out
    // (T H (n d + d dv)), and Lemma 5's double-precision kernels, blocked and vectorized (about 50 flops
    // to an operation): the Gram matrix accumulated head by head (H T^2 d) and Rump's test of the growing
    // k_h x k_h Gram per head (sum_h k_h^3 / 3 ~ H T^3 / 12). Calibrated on H = 64, n = 32, d = 64,
    // d_h = 32, T = 1985: 17 s on 2 threads, estimated 18 s (the count before, every term at 1, gave 958 s,
    // so `verify` refused the certificate under its default 60 s); ViT-B shape (H = 12, n = 197, d = 768,
    // d_h = 64, T = 757, float32): about 10 s, estimated 95 s with d_h in the logits term, now about 16 s.
    // The run's watchdog bounds the time anyway.
    const double Td = double(T), Hd = double(H), nd = double(n), dd = double(d);
    const double ops = Td * Hd * nd * dd * double(std::min<std::size_t>(dh, 8)) / 5 + Td * Hd * (nd * dd + dd * double(dv)) +
                       (Hd * Td * Td * dd + Hd * Td * Td * Td / 12) / 50;
    const double bytes = 8 * (4 * Td * Hd * dd + 2 * Td * double(std::min(H, n)) * dd + 3 * Td * Td);
    if (!within_budget(ops, bytes, "the theorem1 check", why)) return false;
  }
  bool skip = false;
  if (const Value* sv = cert.find("skip")) {
    if (sv->type != json::Type::Bool) { why = "skip: expected a boolean"; return false; }
    skip = sv->boolean;
  }
  // The certificate cannot choose its own tolerance: real labels are accepted by the checker's fixed
  // rule |y_hat - y| <= kLabelTolerance * max(1, |y|). A "tolerance" field (older certificates) must
  // still be a well-formed exact number but plays no part in the verdict.
  if (const Value* tv = cert.find("tolerance")) {
    mpq_class ignored;
    if (!read_rational(*tv, "tolerance", ignored, why)) return false;
    note_not_checked("tolerance (the certificate's own value is ignored; the checker's fixed rule applies)");
  }

  // ---- data ----
  const Value* data = member(cert, "", "data", json::Type::Object, why);
  if (!data) return false;
  std::vector<QMat> E;  // the embedded contexts (empty when the data are referenced by file)
  QMat Q;
  const AttentionArrays& arrays = job.arrays;  // the referenced data's values (docs/CERTIFICATES.md "Data by reference")
  const bool by_file = data->find("file") != nullptr;
  if (by_file) {
    if (!read_referenced_data(*data, T, n, d, job, Q, why, threads)) return false;
  } else {
    const Value* cv = member(*data, "data", "contexts", json::Type::Array, why);
    if (!cv) return false;
    if (cv->items.size() != T) { why = "data.contexts: expected " + std::to_string(T) + " contexts"; return false; }
    E.resize(T);
    if (!run_all(T, threads, [&](std::size_t t, unsigned, std::string& r) {
          return read_plain_matrix(cv->items[t], at("data.contexts", t), n, d, E[t], r);
        }, why))
      return false;
    const Value* qv = member(*data, "data", "queries", json::Type::Array, why);
    if (!qv || !read_plain_matrix(*qv, "data.queries", T, d, Q, why)) return false;
  }
  bool class_labels = false;
  QMat Y;
  std::vector<std::size_t> cls;
  if (const Value* cl = data->find("class_labels")) {
    class_labels = true;
    if (cl->type != json::Type::Array || cl->items.size() != T) { why = "data.class_labels: expected " + std::to_string(T) + " labels"; return false; }
    cls.resize(T);
    for (std::size_t t = 0; t < T; ++t)
      if (!read_size(cl->items[t], at("data.class_labels", t), dout - 1, cls[t], why)) return false;
    note_applied("class labels: the labelled output is the certified arg-max of y_hat (positive margin over every other output)");
    if (data->find("labels")) note_not_checked("data.labels (class labels present: the verdict is on data.class_labels)");
  } else {
    const Value* lv = member(*data, "data", "labels", json::Type::Array, why);
    if (!lv || !read_plain_matrix(*lv, "data.labels", T, dout, Y, why)) return false;
    note_applied("real labels: |y_hat - y| <= 2^-20 max(1, |y|) for every output (the checker's fixed rule)");
  }
  if (by_file && !bind_file_labels(arrays, T, class_labels, Y, cls, why)) return false;
  if (!check_examples_field(cert, T, by_file, why)) return false;

  // ---- weights ----
  const Value* wv = member(cert, "", "weights", json::Type::Object, why);
  if (!wv) return false;
  const Value* hv = member(*wv, "weights", "heads", json::Type::Array, why);
  if (!hv) return false;
  if (hv->items.size() != H) { why = "weights.heads: expected " + std::to_string(H) + " heads"; return false; }
  std::vector<Scaled> WK(H), WQ(H);
  std::vector<QMat> WKq(H), WQq(H);
  std::vector<QMat> WV(H);
  if (!run_all(H, threads, [&](std::size_t h, unsigned, std::string& r) {
        const Value& hd = hv->items[h];
        const std::string w = at("weights.heads", h);
        QMat k, q;
        const Value* kv = member(hd, w, "WK", json::Type::Array, r);
        if (!kv || !read_plain_matrix(*kv, w + ".WK", d, dh, k, r)) return false;
        const Value* qqv = member(hd, w, "WQ", json::Type::Array, r);
        if (!qqv || !read_plain_matrix(*qqv, w + ".WQ", d, dh, q, r)) return false;
        const Value* vv = member(hd, w, "WV", json::Type::Array, r);
        if (!vv || !read_plain_matrix(*vv, w + ".WV", d, dv, WV[h], r)) return false;
        WK[h] = scale_matrix(k);
        WQ[h] = scale_matrix(q);
        WKq[h] = std::move(k);
        WQq[h] = std::move(q);
        return true;
      }, why))
    return false;
  QMat WO, WD;
  const Value* ov = member(*wv, "weights", "WO", json::Type::Array, why);
  if (!ov || !read_plain_matrix(*ov, "weights.WO", H * dv, d, WO, why)) return false;
  const Value* dvv = member(*wv, "weights", "WD", json::Type::Array, why);
  if (!dvv || !read_plain_matrix(*dvv, "weights.WD", d, dout, WD, why)) return false;

  // The read-out weights as sparse interval matrices; W_K W_Q^T's common denominator per head.
  std::deque<SparseIv> WVs;
  for (std::size_t h = 0; h < H; ++h) WVs.emplace_back(WV[h]);
  const SparseIv WOs(WO), WDs(WD);
  std::vector<mpz_class> den_kq(H);
  std::vector<SmallInts> WKd(H);  // W_K's numerators as doubles when they are small
  std::vector<ColumnGcd> WQg(H);  // W_Q's columns over their gcds, for W_Q^T e
  for (std::size_t h = 0; h < H; ++h) {
    den_kq[h] = WK[h].den * WQ[h].den;
    WKd[h] = SmallInts(WK[h].num, false);
    WQg[h] = ColumnGcd(WQ[h].num);
  }

  // ---- the trace (docs/THEORY.md section 4), re-derived where it is a function of data and weights ----
  // Groups: R_1 = the first r examples, R_h = the next r-1. Claim 1: the target logits are E W e.
  // Claim 2 / Lemma 3: W_K[:, |R_h|] = c g and W_Q[:, |R_h|] = w, w^T e = 0 on R_h, w^T e != 0 and a
  // unique maximum of s = (w^T e) E g on the earlier examples; gap = min delta, spread = max A over them
  // (with a = logits - c s); Lemma 4: c >= (A + ln(2(n-1)/eps)) / delta for each of them; Lemma 5
  // (direct criterion): m eps^2 B^2 < sigma_lower^2, with sigma_lower re-certified below. The remaining
  // descriptive fields (attempt counts, step_sigma_lower, c_weyl, the B.2 estimate) are covered by
  // "trace_checksum" against accidental edits.
  struct HeadTrace {
    std::vector<std::size_t> group;
    std::vector<const Value*> targets;
    bool sat = false, direct = false, chain = true;
    mpq_class c = 0, eps = 0, gap = 0, spread = 0, sigma = 0;
    QRow g, w;
    Scaled gs, ws;
    SmallInts gd;       // gs as doubles when small
    Interval log_term;  // ln(2(n-1)/eps), enclosed
    std::size_t old = 0, rank_target = 0;
    std::size_t reference = 0;  // sigma_reference_heads: which heads' Gram matrix to try first (a hint)
  };
  std::vector<HeadTrace> ht(H);
  std::vector<std::size_t> grp(T, H);
  {
    const Value* trv = member(cert, "", "trace", json::Type::Array, why);
    if (!trv) return false;
    const std::size_t traced = generic ? 0 : H;  // generic weights: no proof steps are claimed
    if (trv->items.size() != traced) {
      why = generic ? "trace: expected an empty trace for method generic" : "trace: expected one entry per head";
      return false;
    }
    if (generic) note_not_checked("trace (method generic: no proof step is claimed; the verdict is the forward pass, the labels and rank(Z) >= T)");
    std::size_t next = 0;
    for (std::size_t h = 0; h < traced; ++h) {
      const Value& e = trv->items[h];
      const std::string w = at("trace", h);
      HeadTrace& x = ht[h];
      const Value* gv = member(e, w, "group", json::Type::Array, why);
      const Value* lv = gv ? member(e, w, "target_logits", json::Type::Array, why) : nullptr;
      if (!lv) return false;
      const std::size_t want = std::min(h == 0 ? r : r - 1, T - next);
      if (gv->items.size() != want || lv->items.size() != want) {
        why = w + ": expected the group R_" + std::to_string(h + 1) + " of " + std::to_string(want) + " examples with their target logits";
        return false;
      }
      for (std::size_t i = 0; i < want; ++i) {
        std::size_t t = 0;
        if (!read_size(gv->items[i], at(w + ".group", i), T - 1, t, why)) return false;
        if (t != next + i) { why = at(w + ".group", i) + ": expected example " + std::to_string(next + i); return false; }
        x.group.push_back(t);
        x.targets.push_back(&lv->items[i]);
        grp[t] = h;
      }
      x.old = next;
      next += want;
      std::size_t old = 0, rt = 0;
      const Value* ov2 = member(e, w, "old_examples", json::Type::Number, why);
      if (!ov2 || !read_size(*ov2, w + ".old_examples", T, old, why)) return false;
      const Value* rv2 = member(e, w, "rank_target", json::Type::Number, why);
      if (!rv2 || !read_size(*rv2, w + ".rank_target", T, rt, why)) return false;
      if (old != x.old || rt != x.old + want) { why = w + ": old_examples / rank_target do not match the groups"; return false; }
      const Value* cv2 = e.find("c");
      if (!cv2 || !read_rational(*cv2, w + ".c", x.c, why)) { if (why.empty()) why = w + ".c: missing"; return false; }
      x.sat = h > 0 && want > 0;
      if (!x.sat) {
        if (sgn(x.c) != 0) { why = w + ".c: expected 0 for a head without a saturator"; return false; }
        note_not_checked(w + ": g, w, eps, gap, spread, eps_criterion (a head without a saturator: only its group, target logits and c = 0 enter the verdict)");
        continue;
      }
      const Value* gv2 = member(e, w, "g", json::Type::Array, why);
      if (!gv2 || !read_rational_vector(*gv2, w + ".g", d, x.g, why)) return false;
      const Value* wv2 = member(e, w, "w", json::Type::Array, why);
      if (!wv2 || !read_rational_vector(*wv2, w + ".w", d, x.w, why)) return false;
      for (std::size_t c = 0; c < d; ++c)
        if (WKq[h][c][want] != x.c * x.g[c] || WQq[h][c][want] != x.w[c]) {
          why = w + ": W_K[:, " + std::to_string(want) + "] != c g or W_Q[:, " + std::to_string(want) + "] != w (row " + std::to_string(c) + ")";
          return false;
        }
      x.gs = scale_matrix(QMat{x.g});
      x.ws = scale_matrix(QMat{x.w});
      x.gd = SmallInts(x.gs.num, /*transpose=*/true);  // g as a column
      const Value* ev = e.find("eps");
      if (!ev || !read_rational(*ev, w + ".eps", x.eps, why)) { if (why.empty()) why = w + ".eps: missing"; return false; }
      if (sgn(x.eps) <= 0) { why = w + ".eps: must be > 0"; return false; }
      x.log_term = log(Interval(mpq_class(2 * long(n - 1)) / x.eps, kPrec));
      const Value* gapv = e.find("gap");
      const Value* spv = e.find("spread");
      if (!gapv || !spv) { why = w + ": gap / spread missing"; return false; }
      if (!read_rational(*gapv, w + ".gap", x.gap, why) || !read_rational(*spv, w + ".spread", x.spread, why)) return false;
      std::string crit;
      if (!read_string(e, w, "eps_criterion", crit, why)) return false;
      // "none": the weights sit at a chosen scale, not the proof's; no step of the Weyl chain is claimed
      // for this head (Lemmas 4 and 5 are not checked) and the verdict rests on step 3 alone, as always.
      if (crit != "direct" && crit != "b2" && crit != "none") { why = w + ".eps_criterion: expected direct, b2 or none"; return false; }
      x.direct = crit == "direct";
      x.chain = crit != "none";
      const Value* sv2 = e.find("sigma_lower");
      if (!sv2 || !read_rational(*sv2, w + ".sigma_lower", x.sigma, why)) { if (why.empty()) why = w + ".sigma_lower: missing"; return false; }
      // Optional: heads 1..r whose Gram matrix alone is to be tried first for sigma_lower (r <= h: heads
      // before this one). Only a choice of what to factor; the proof is checked either way.
      // A direct head's sigma_lower must be positive: m eps^2 B^2 < sigma^2 stands for sqrt(m) eps B <
      // sigma_k(Z_inf), and with sigma <= 0 the squared form says nothing (while Rump's test would only be
      // asked for sigma_k > 0).
      if (x.direct && sgn(x.sigma) <= 0) { why = w + ".sigma_lower: must be > 0 (direct criterion)"; return false; }
      if (const Value* rv3 = e.find("sigma_reference_heads"); rv3 && rv3->type != json::Type::Null)
        if (!read_size(*rv3, w + ".sigma_reference_heads", h, x.reference, why)) return false;
    }
    // The descriptive fields: the verdict rests on none of them (they are neither evidence nor trusted).
    // The theorem's hypotheses are not needed either: memorization is checked directly on the weights.
    if (cert.find("hypotheses"))
      note_not_checked("hypotheses (Assumptions 1-3, general position: recorded by the engine; the verdict checks memorization directly and does not rest on them)");
    if (!generic)
      note_not_checked("trace[*].c_weyl, c_proof, step_sigma_lower, eps_b2_estimate, lemma3_attempts, target_attempts (descriptive)");
    for (std::size_t h = 0; h < H; ++h)
      if (ht[h].sat && !ht[h].chain)
        note_not_checked("trace[" + std::to_string(h) + "].eps, sigma_lower (eps_criterion none: no Weyl-chain step is claimed at a chosen scale)");
      else if (ht[h].sat && !ht[h].direct)
        note_not_checked("trace[" + std::to_string(h) + "].sigma_lower (B.2 head: rank(Z_c) >= k_h is re-certified instead)");
    // Integrity of the descriptive fields against accidental edits (a checksum is never evidence).
    auto text = [](const Value* v) -> std::string {
      if (!v) return "missing";
      switch (v->type) {
        case json::Type::Null: return "null";
        case json::Type::Bool: return v->boolean ? "true" : "false";
        case json::Type::Array: {
          std::string s2;
          for (std::size_t i = 0; i < v->items.size(); ++i) s2 += (i ? "," : "") + v->items[i].text;
          return s2;
        }
        default: return v->text;
      }
    };
    std::string all;
    for (const Value& e : trv->items)
      for (const char* k : {"lemma3_attempts", "target_attempts", "eps_b2_estimate", "sigma_lower", "c_weyl", "step_sigma_lower"})
        all += std::string(k) + "=" + text(e.find(k)) + ";";
    for (const char* k : {"hypotheses", "notes", "labels_generated", "examples"}) all += std::string(k) + "=" + text(cert.find(k)) + ";";
    std::uint64_t hh = 1469598103934665603ull;
    for (unsigned char ch : all) { hh ^= ch; hh *= 1099511628211ull; }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hh));
    std::string sum;
    if (!read_string(cert, "", "trace_checksum", sum, why)) return false;
    if (sum != buf) { why = "trace_checksum: does not match the trace's descriptive fields"; return false; }
  }
  std::vector<std::vector<const Value*>> target_of(H, std::vector<const Value*>(T, nullptr));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < ht[h].group.size(); ++i) target_of[h][ht[h].group[i]] = ht[h].targets[i];

  // ---- forward pass, example by example (steps 1, 2, 4) ----
  const std::size_t m = H * d;
  std::vector<double> C(T * m), R(T * m);
  // For Lemma 5's sigma (below): every token as double midpoint-radius, and per (head, earlier example)
  // the unique maximum j* of s = (w^T e) E g.
  // Only the limit tokens E_{j*} are read back: per (example, head) when H < n (slot h), else every
  // token (slot j) -- T min(H, n) d doubles each, not T n d.
  const bool tok_by_head = H < n;
  const std::size_t slots = tok_by_head ? H : n;
  std::vector<double> TokM(T * slots * d), TokR(T * slots * d);
  std::vector<std::uint32_t> jstar(H * T, 0);
  struct Scratch {
    ZRow v, k, a, eg;
    std::vector<double> F;  // E W_K (n x d_h), when exact in doubles
    std::vector<i128> F128; // the same in 128 bits
    mpz_class den, df, wenum;
    MpfrVec xl, xh, soft, tmp;  // softmax: exp bounds and temporaries (kSoftPrec); tmp: t1..t3 (kPrec)
    std::vector<double> em, er, am, ar, colabs;  // colabs: column bounds of |E| (column_abs_bounds)
    MpfrVec pl, ph, ocl, och, ol, oh, yl, yh;  // p (d), [o_1; ...; o_H] (H dv), o (d), y_hat (d_out)
    std::vector<bool> have;                    // per head: the saturation data seen so far
    std::vector<mpq_class> min_gap, max_spread;
    mpq_class B2 = 0;                          // the largest squared token norm seen so far
    Scratch(std::size_t n, std::size_t d, std::size_t H, std::size_t dv, std::size_t dout)
        : xl(n, kSoftPrec), xh(n, kSoftPrec), soft(7, kSoftPrec), tmp(3, kPrec), em(n * d), er(n * d), am(n),
          ar(n), pl(d, kPrec), ph(d, kPrec), ocl(H * dv, kPrec), och(H * dv, kPrec), ol(d, kPrec), oh(d, kPrec),
          yl(dout, kPrec), yh(dout, kPrec), have(H, false), min_gap(H), max_spread(H) {}
  };
  // Checks example t; on failure writes the reason to `err`. Reads only shared constant data and
  // writes only row t of C and R and its own scratch.
  auto example = [&](std::size_t t, Scratch& s, std::string& err) -> bool {
    mpfr_ptr t1 = s.tmp[0], t2 = s.tmp[1], t3 = s.tmp[2];
    // Referenced data: this example's context straight from its doubles as integers over 2^k (or, when a
    // scaled value overflows a double, as exact rationals first); built here and dropped after.
    // Referenced doubles whose scaled values fit 53 bits go straight into Ed (no big integer per entry);
    // Es.num is then built only if a big-integer route needs it (need_num).
    Scaled Es;
    SmallInts Ed;
    thread_local std::vector<double> wide;  // a float32 context widened (exactly), this example only
    const double* ctx = nullptr;
    if (by_file) {
      if (arrays.contexts_f32.empty()) {
        ctx = &arrays.contexts[t * n * d];
      } else {
        wide.assign(arrays.contexts_f32.begin() + t * n * d, arrays.contexts_f32.begin() + (t + 1) * n * d);
        ctx = wide.data();
      }
    }
    const bool direct = by_file && scale_doubles_small(ctx, n, d, Es.den, Ed);
    if (!direct && (!by_file || !scale_doubles(ctx, n, d, Es))) {
      QMat Eref;
      if (by_file) {
        Eref.assign(n, QRow(d));
        const double* src = ctx;
        for (std::size_t i = 0; i < n * d; ++i) mpq_set_d(Eref[i / d][i % d].get_mpq_t(), src[i]);  // exact
      }
      Es = scale_matrix(by_file ? Eref : E[t]);
    }
    const Scaled es = scale_matrix(QMat{Q[t]});
    if (!direct) Ed = SmallInts(Es.num, false);
    auto need_num = [&] {
      if (!Es.num.empty()) return;
      Es.num.assign(n, ZRow(d));
      for (std::size_t i = 0; i < n * d; ++i) mpz_set_d(Es.num[i / d][i % d].get_mpz_t(), Ed.v[i]);  // exact
    };
    const mpz_class den_e = Es.den * es.den;
    // B^2 (squared token norms) and the context as double midpoint-radius (exact for double entries).
    const bool sq128 = Ed.ok && d < (std::size_t(1) << 20);  // |E| <= 2^53: d squares below 2^126
    for (std::size_t j = 0; j < n; ++j) {
      mpz_class s2 = 0;
      if (sq128) {
        u128 acc = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const auto x = static_cast<std::int64_t>(Ed.v[j * d + c]);
          acc += static_cast<u128>(static_cast<i128>(x) * x);
        }
        set_i128(s2, static_cast<i128>(acc));
      } else {
        need_num();
        for (std::size_t c = 0; c < d; ++c) mpz_addmul(s2.get_mpz_t(), Es.num[j][c].get_mpz_t(), Es.num[j][c].get_mpz_t());
      }
      mpq_class q2(s2, Es.den * Es.den);
      q2.canonicalize();
      if (q2 > s.B2) s.B2 = q2;
    }
    for (std::size_t i = 0; i < n * d; ++i) {
      if (by_file) {  // the value is this double itself
        s.em[i] = ctx[i];
        s.er[i] = 0;
      } else {
        const mpq_class& q = E[t][i / d][i % d];
        mpfr_set_q(t1, q.get_mpq_t(), MPFR_RNDD);
        mpfr_set_q(t2, q.get_mpq_t(), MPFR_RNDU);
        midrad(mpfr_get_d(t1, MPFR_RNDD), mpfr_get_d(t2, MPFR_RNDU), s.em[i], s.er[i]);
      }
      if (tok_by_head) continue;
      TokM[t * n * d + i] = s.em[i];
      TokR[t * n * d + i] = s.er[i];
    }
    if (!column_abs_bounds(s.em.data(), s.er.data(), n, d, s.colabs)) {
      err = "forward pass: non-finite value";
      return false;
    }
    s.ocl.zero();
    s.och.zero();
    for (std::size_t h = 0; h < H; ++h) {
      const HeadTrace& x = ht[h];
      // (1) exact logits: E (W_K (W_Q^T e)) / (den_E den_K den_Q den_e)
      WQg[h].transposed_times(WQ[h].num, es.num[0], s.v, s.df);  // v = W_Q^T e
      // E W_K costs n d d_h products, E (W_K v) in 128-bit pieces about n d (3 + 1): the latter first
      // unless d_h is small.
      if (dh > 8 && logits_split(Ed, WKd[h], s.v, s.a, s.df)) {
      } else if (exact_product(Ed, WKd[h], s.F)) {  // a = (E W_K) v with E W_K exact in doubles: fewer big products
        s.a.resize(n);
        for (std::size_t j = 0; j < n; ++j) {
          mpz_set_ui(s.a[j].get_mpz_t(), 0);
          for (std::size_t i = 0; i < dh; ++i) addmul_d(s.a[j], s.v[i], s.F[j * dh + i]);
        }
      } else if (logits_split(Ed, WKd[h], s.v, s.a, s.df)) {  // E (W_K v) in 128-bit pieces
      } else if (exact_product_128(Ed, WKd[h], s.F128)) {  // the same with E W_K exact in 128 bits
        s.a.resize(n);
        for (std::size_t j = 0; j < n; ++j) {
          mpz_set_ui(s.a[j].get_mpz_t(), 0);
          for (std::size_t i = 0; i < dh; ++i) {
            if (s.F128[j * dh + i] == 0) continue;
            set_i128(s.df, s.F128[j * dh + i]);
            mpz_addmul(s.a[j].get_mpz_t(), s.v[i].get_mpz_t(), s.df.get_mpz_t());
          }
        }
      } else {
        zmul(WK[h].num, s.v, false, s.k);
        need_num();
        zmul(Es.num, s.k, false, s.a);
      }
      const ZRow& a = s.a;
      mpz_mul(s.den.get_mpz_t(), den_e.get_mpz_t(), den_kq[h].get_mpz_t());  // > 0
      const mpz_class& den = s.den;
      if (const Value* tv2 = target_of[h][t]) {
        QRow logits(n);
        for (std::size_t j = 0; j < n; ++j) { logits[j] = mpq_class(a[j], den); logits[j].canonicalize(); }
        QRow target;
        if (!read_rational_vector(*tv2, "trace[" + std::to_string(h) + "].target_logits", n, target, err)) return false;
        if (target != logits) {
          err = "trace[" + std::to_string(h) + "]: target logits of example " + std::to_string(t) +
                " differ from E W_K W_Q^T e recomputed from the weights";
          return false;
        }
      }
      if (x.sat && grp[t] <= h) {  // w^T e = wenum / (den_w den_e)
        mpz_set_ui(s.wenum.get_mpz_t(), 0);
        for (std::size_t c = 0; c < d; ++c) mpz_addmul(s.wenum.get_mpz_t(), x.ws.num[0][c].get_mpz_t(), es.num[0][c].get_mpz_t());
      }
      if (x.sat && grp[t] == h && sgn(s.wenum) != 0) {  // (20): w^T e = 0 on the group
        err = "trace[" + std::to_string(h) + "]: w^T e != 0 for example " + std::to_string(t) + " of the group";
        return false;
      }
      if (x.sat && grp[t] < h) {  // an earlier example: saturation data and Lemma 4
        const std::string w = "trace[" + std::to_string(h) + "]";
        mpq_class we(s.wenum, x.ws.den * es.den);
        we.canonicalize();
        if (sgn(we) == 0) { err = w + ": w^T e = 0 for the earlier example " + std::to_string(t); return false; }
        if (exact_product(Ed, x.gd, s.F)) {  // E g = eg / (den_E den_g)
          s.eg.resize(n);
          for (std::size_t j = 0; j < n; ++j) mpz_set_d(s.eg[j].get_mpz_t(), s.F[j]);
        } else if (exact_product_128(Ed, x.gd, s.F128)) {
          s.eg.resize(n);
          for (std::size_t j = 0; j < n; ++j) set_i128(s.eg[j], s.F128[j]);
        } else {
          need_num();
          zmul(Es.num, x.gs.num[0], false, s.eg);
        }
        const ZRow& v = s.eg;
        const int sg = sgn(we);
        std::size_t js = 0;
        for (std::size_t j = 1; j < n; ++j) if (sg * cmp(v[j], v[js]) > 0) js = j;
        jstar[h * T + t] = static_cast<std::uint32_t>(js);
        if (tok_by_head)
          for (std::size_t c = 0; c < d; ++c) {
            TokM[(t * H + h) * d + c] = s.em[js * d + c];
            TokR[(t * H + h) * d + c] = s.er[js * d + c];
          }
        mpz_class second;
        bool have2 = false;
        for (std::size_t j = 0; j < n; ++j) {
          if (j == js) continue;
          if (v[j] == v[js]) { err = w + ": E W' e has no unique maximum for example " + std::to_string(t); return false; }
          mpz_class o = sg * v[j];
          if (!have2 || o > second) { second = o; have2 = true; }
        }
        mpz_class Dg = Es.den * x.gs.den;
        mpq_class delta = 0;
        if (have2) {
          mpq_class f(sg * v[js] - second, Dg);
          f.canonicalize();
          delta = abs(we) * f;
        }
        // A = max_j (a_j - a_j*) with a = logits - c s, as integers over one positive denominator.
        mpz_class K1 = Dg * we.get_den() * x.c.get_den(), K2 = den * x.c.get_num() * we.get_num();
        mpz_class best = 0;
        for (std::size_t j = 0; j < n; ++j) {
          mpz_class val = (a[j] - a[js]) * K1 - (v[j] - v[js]) * K2;
          if (val > best) best = val;
        }
        mpq_class A(best, den * K1);
        A.canonicalize();
        if (!s.have[h] || delta < s.min_gap[h]) s.min_gap[h] = delta;
        if (!s.have[h] || A > s.max_spread[h]) s.max_spread[h] = A;
        s.have[h] = true;
        if (n >= 2 && x.chain) {
          if (sgn(delta) <= 0) { err = w + ": zero gap for example " + std::to_string(t); return false; }
          Interval rhs = (Interval(A, kPrec) + x.log_term) / Interval(delta, kPrec);
          if (!rhs.is_valid() || mpfr_cmp_q(rhs.hi(), x.c.get_mpq_t()) > 0) {
            err = w + ": Lemma 4 bound fails for example " + std::to_string(t) + ": c < (A + ln(2(n-1)/eps)) / delta";
            return false;
          }
        }
      }
      // (2) softmax enclosure. With the integer M = max_j a_j (numerators), x_j = (a_j - M) / den <= 0
      // lies in [xlo, xhi] (directed rounding; den > 0 keeps the directions). MPFR rounds exp correctly,
      // so y = exp(xlo) rounded down and y+ (y if exact, else its successor) bracket exp(xlo); with
      // delta >= xhi - xlo, exp(x_j) <= exp(xlo) exp(delta) <= y+ (1 + 2 delta) when delta <= 1
      // (e^z <= 1 + z + z^2 <= 1 + 2z on [0, 1]), else exp(xhi) rounded up: one exp per j. Then
      // alpha_j = e_j / sum_k e_k lies in [lo_j / sum hi, hi_j / sum lo], rounded outward to doubles.
      std::size_t jm = 0;
      for (std::size_t j = 1; j < n; ++j) if (a[j] > a[jm]) jm = j;
      mpfr_ptr xlo = s.soft[0], xhi = s.soft[1], dl = s.soft[2], sl = s.soft[3], sh = s.soft[4];
      // 1/den in [inv_lo, inv_hi] once (den >= 1): then x_j = (a_j - M)/den <= 0 lies in
      // [df_lo inv_hi, df_hi inv_lo] with df_lo <= a_j - M <= df_hi <= 0 -- two short products instead of
      // two divisions by an integer of thousands of bits per j.
      mpfr_ptr inv_lo = s.soft[5], inv_hi = s.soft[6];
      mpfr_set_z(inv_hi, den.get_mpz_t(), MPFR_RNDU);  // >= den
      mpfr_ui_div(inv_lo, 1, inv_hi, MPFR_RNDD);        // <= 1/den
      mpfr_set_z(inv_hi, den.get_mpz_t(), MPFR_RNDD);  // <= den, > 0
      mpfr_ui_div(inv_hi, 1, inv_hi, MPFR_RNDU);        // >= 1/den
      mpfr_set_zero(sl, 1);
      mpfr_set_zero(sh, 1);
      for (std::size_t j = 0; j < n; ++j) {
        mpz_sub(s.df.get_mpz_t(), a[j].get_mpz_t(), a[jm].get_mpz_t());
        mpfr_set_z(xlo, s.df.get_mpz_t(), MPFR_RNDD);
        mpfr_mul(xlo, xlo, inv_hi, MPFR_RNDD);
        mpfr_set_z(xhi, s.df.get_mpz_t(), MPFR_RNDU);
        mpfr_mul(xhi, xhi, inv_lo, MPFR_RNDU);
        const bool exact = mpfr_exp(s.xl[j], xlo, MPFR_RNDD) == 0;
        mpfr_sub(dl, xhi, xlo, MPFR_RNDU);
        if (mpfr_cmp_ui(dl, 1) <= 0) {
          mpfr_mul_2ui(dl, dl, 1, MPFR_RNDU);
          mpfr_add_ui(dl, dl, 1, MPFR_RNDU);
          mpfr_set(s.xh[j], s.xl[j], MPFR_RNDU);  // same precision: exact
          if (!exact) mpfr_nextabove(s.xh[j]);
          mpfr_mul(s.xh[j], s.xh[j], dl, MPFR_RNDU);
        } else {
          mpfr_exp(s.xh[j], xhi, MPFR_RNDU);
        }
        mpfr_add(sl, sl, s.xl[j], MPFR_RNDD);
        mpfr_add(sh, sh, s.xh[j], MPFR_RNDU);
      }
      for (std::size_t j = 0; j < n; ++j) {
        mpfr_div(xlo, s.xl[j], sh, MPFR_RNDD);
        mpfr_div(xhi, s.xh[j], sl, MPFR_RNDU);
        midrad(mpfr_get_d(xlo, MPFR_RNDD), mpfr_get_d(xhi, MPFR_RNDU), s.am[j], s.ar[j]);
      }
      // (3) p = E^T alpha in [centre +- radius] (double midpoint-radius, float_kernels.cpp)
      double* centre = &C[t * m + h * d];
      double* radius = &R[t * m + h * d];
      if (!mix_enclosure(s.em.data(), s.er.data(), s.am.data(), s.ar.data(), n, d, centre, radius, s.colabs.data())) {
        err = "forward pass: non-finite value";
        return false;
      }
      // (4) o_h = W_V^T p, with p as MPFR intervals [centre - radius, centre + radius]
      for (std::size_t c = 0; c < d; ++c) {
        mpfr_set_d(s.pl[c], centre[c], MPFR_RNDN);  // exact: kPrec >= 53
        mpfr_sub_d(s.pl[c], s.pl[c], radius[c], MPFR_RNDD);
        mpfr_set_d(s.ph[c], centre[c], MPFR_RNDN);
        mpfr_add_d(s.ph[c], s.ph[c], radius[c], MPFR_RNDU);
      }
      WVs[h].add_transposed(s.pl, s.ph, s.ocl, s.och, h * dv, t1, t2, t3);
    }
    // (5) o = W_O^T [o_1; ...; o_H] (+ e), (6) y_hat = W_D^T o
    s.ol.zero();
    s.oh.zero();
    WOs.add_transposed(s.ocl, s.och, s.ol, s.oh, 0, t1, t2, t3);
    if (skip)
      for (std::size_t c = 0; c < d; ++c) {
        mpfr_add_q(s.ol[c], s.ol[c], Q[t][c].get_mpq_t(), MPFR_RNDD);
        mpfr_add_q(s.oh[c], s.oh[c], Q[t][c].get_mpq_t(), MPFR_RNDU);
      }
    s.yl.zero();
    s.yh.zero();
    WDs.add_transposed(s.ol, s.oh, s.yl, s.yh, 0, t1, t2, t3);
    if (class_labels) {
      for (std::size_t c = 0; c < dout; ++c) {
        if (c == cls[t]) continue;
        mpfr_sub(t1, s.yl[cls[t]], s.yh[c], MPFR_RNDD);  // lower end of y_cls - y_c
        if (!(mpfr_sgn(t1) > 0)) {
          err = "labels: example " + std::to_string(t) + ": arg-max of y_hat is not certified to be class " + std::to_string(cls[t]);
          return false;
        }
      }
    } else {
      for (std::size_t c = 0; c < dout; ++c) {
        const mpq_class tol = kLabelTolerance * std::max(mpq_class(1), mpq_class(abs(Y[t][c])));
        mpq_class lo = Y[t][c] - tol, hi = Y[t][c] + tol;
        // mpfr_cmp_q is 0 on NaN: the ends must be numbers first.
        if (!(mpfr_number_p(s.yl[c]) && mpfr_number_p(s.yh[c]) && mpfr_cmp_q(s.yl[c], lo.get_mpq_t()) >= 0 &&
              mpfr_cmp_q(s.yh[c], hi.get_mpq_t()) <= 0)) {
          err = "labels: example " + std::to_string(t) + ", output " + std::to_string(c) +
                ": y_hat is not certified within tolerance of the label";
          return false;
        }
      }
    }
    return true;
  };
  // Run it on every example (MPFR keeps its caches and flags per thread only when built with TLS).
  const unsigned fthreads = mpfr_buildopt_tls_p() ? std::max(threads, 1u) : 1u;
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (unsigned i = 0; i < fthreads; ++i) scratch.push_back(std::make_unique<Scratch>(n, d, H, dv, dout));
  auto step = [&](std::size_t t, unsigned worker, std::string& r) { return example(t, *scratch[worker], r); };
  if (!run_all(T, fthreads, step, why)) return false;
  mpq_class B2 = 0;
  for (const auto& s : scratch) B2 = std::max(B2, s->B2);
  for (std::size_t h = 0; h < H; ++h) {
    const HeadTrace& x = ht[h];
    if (!x.sat) continue;
    bool have = false;
    mpq_class min_gap, max_spread;
    for (const auto& s : scratch) {
      if (!s->have[h]) continue;
      if (!have || s->min_gap[h] < min_gap) min_gap = s->min_gap[h];
      if (!have || s->max_spread[h] > max_spread) max_spread = s->max_spread[h];
      have = true;
    }
    const std::string w = "trace[" + std::to_string(h) + "]";
    if (!have || x.gap != min_gap || x.spread != max_spread) {
      why = w + ": gap / spread differ from the values recomputed over the earlier examples";
      return false;
    }
    if (x.direct && !(mpq_class(long(x.old)) * x.eps * x.eps * B2 < x.sigma * x.sigma)) {
      why = w + ": direct Weyl criterion m eps^2 B^2 < sigma_lower^2 fails";
      return false;
    }
  }

  // ---- Lemma 5's sigma re-derived (docs/THEORY.md section 4, "The saturation scale c") ----
  // The direct criterion above trusts sigma_lower, a lower bound on sigma_{k_h} of Z_inf: rows R_1..R_h,
  // heads 1..h, heads 1..h-1 as computed above (the final weights) and head h in its limit, i.e. the
  // token E_{j*} for each earlier example (j* the unique maximum of s found above) and, on R_h (where
  // w^T e = 0, so head h's logits are the targets), the computed row itself. Re-certified here: the Gram
  // matrix accumulated head by head, then Rump's test of G - mu I with mu = (sigma_lower + ||R_S||_F)^2,
  // so sigma_k(centre) >= sqrt(mu) and every matrix of the enclosure has sigma_k >= sigma_lower (Weyl).
  // A head whose eps came from the B.2 estimate (an estimate, not checked) instead gets the step's own
  // claim re-certified: rank Z_c >= k_h for rows R_1..R_h and heads 1..h as computed (the same test with
  // mu just above ||R_S||_F^2).
  // acc: the lower triangle of sum over heads g < acc_heads of fl(C_g C_g^T) (C_g: head g's T x d block of
  // the centres), accumulated for Lemma 5 and completed below for rank(Z).
  std::vector<double> acc(T * T, 0.0), Ch(T * d);
  std::size_t acc_heads = 0;
  auto acc_add_head = [&](std::size_t h, std::vector<double>* rowsq, std::vector<double>* rad2) {
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t c = 0; c < d; ++c) {
        const double z = C[i * m + h * d + c], r = R[i * m + h * d + c];
        Ch[i * d + c] = z;
        if (rowsq) (*rowsq)[i] += z * z, (*rad2)[i] += r * r;
      }
    syrk_lower(Ch.data(), d, T, d, acc.data(), T, /*subtract=*/false, threads);
    acc_heads = h + 1;
  };
  {
    const double eta5 = std::ldexp(1.0, -1074);
    std::vector<double> gx, X;
    std::vector<double> rowsq(T, 0.0), rad2(T, 0.0);             // same heads: squared row norms (RN sums)
    std::size_t last = 0;  // the last head whose sigma is used
    for (std::size_t h = 0; h < H; ++h)
      if (ht[h].sat) last = h + 1;
    mpfr_t sq;
    mpfr_init2(sq, 64);
    // Error bounds of a Gram matrix accumulated over `blocks` head blocks (mk = blocks d products per
    // entry, one blocked dot product per block and one addition each) on k rows whose squared norms and
    // radii (summed in round-to-nearest) are norm2 and xr2: gerr >= ||fl(G) - G||_2, radF >= ||R||_F.
    auto gram_bounds = [&](std::size_t k, std::size_t blocks, double norm2, double xr2, double& gerr, double& radF) {
      // Entry (a, b) is a sum of mk products through `blocks` blocked dot products and as many additions:
      // |err| <= gamma_N sum_l |z_al z_bl| + mk eta with N = 2 (mk + blocks) + 4 (a margin); so ||err||_2 <=
      // ||err||_F <= gamma_N sum_a ||z_a||^2 + k mk eta. The squared norms and radii were summed in
      // round-to-nearest over at most k mk non-negative terms: inflated by 1 + 2 gamma_{k mk}.
      const std::size_t mk = blocks * d;
      const double gN = gamma_up(2 * (mk + blocks) + 4), gS = gamma_up(k * mk + 2);
      if (!std::isfinite(gN) || !std::isfinite(gS)) return false;
      const double infl = up(1.0 + up(2.0 * gS));
      gerr = up(up(gN * up(up(norm2 * infl) + up(double(k * mk) * eta5))) + up(double(k * mk) * eta5));
      radF = up(std::sqrt(up(up(xr2 * infl) + up(double(k * mk) * eta5))));  // + underflow of the squares
      return std::isfinite(gerr) && std::isfinite(radF);
    };
    // Heads whose sigma_lower is proved through a reference: sigma_K(Z restricted to heads 1..r, rows
    // 0..K-1) >= sigma_lower, with r <= h and K >= k_h. Z_inf of head h has all those columns (heads 1..r,
    // as computed; r <= h) and a subset of those rows (the first k_h), so its Gram matrix lies above a
    // principal submatrix of the reference's in the positive semidefinite order, whose lambda_min is at
    // least the reference's (Cauchy interlacing): sigma_{k_h}(Z_inf) >= sigma_K(reference). One Rump test
    // per reference serves all its heads; a reference that fails leaves its heads to their own test.
    std::vector<char> by_reference(H, 0);
    for (std::size_t h = 0; h < last; ++h) {
      // (a) the references made of heads 1..h, while acc holds exactly those heads
      std::size_t K = 0;
      mpq_class smax = 0;
      for (std::size_t j = h; j < last; ++j)
        if (ht[j].sat && ht[j].chain && ht[j].direct && ht[j].reference == h && h > 0) {
          K = std::max(K, ht[j].old + ht[j].group.size());
          if (ht[j].sigma > smax) smax = ht[j].sigma;
        }
      if (K > 0) {
        double norm2 = 0, xr2 = 0, gerr = 0, radF = 0;
        for (std::size_t i = 0; i < K; ++i) {
          norm2 += rowsq[i];
          xr2 += rad2[i];
        }
        bool ok = gram_bounds(K, h, norm2, xr2, gerr, radF);
        mpfr_set_q(sq, smax.get_mpq_t(), MPFR_RNDU);
        const double root = up(std::max(mpfr_get_d(sq, MPFR_RNDU), 0.0) + radF);
        const double mu = up(root * root);  // (sigma + ||R||_F)^2: sigma_K(centre) >= sqrt(mu), then Weyl
        if (ok && std::isfinite(mu)) {
          gx.resize(K * K);
          for (std::size_t a = 0; a < K; ++a) std::copy(&acc[a * T], &acc[a * T] + a + 1, &gx[a * K]);
          for (std::size_t j = 0; j < K; ++j) gx[j * K + j] = dn(gx[j * K + j] - mu);
          ok = rump_pd(gx, K, gerr, threads);
        }
        if (ok)
          for (std::size_t j = h; j < last; ++j)
            if (ht[j].sat && ht[j].chain && ht[j].direct && ht[j].reference == h) by_reference[j] = 1;
      }
      const HeadTrace& x = ht[h];
      const std::size_t k = x.old + x.group.size();
      if (x.sat && x.chain && k > 0 && !by_reference[h]) {
        // X: head h's block (k x d) with its radii: the limit rows (direct) or the computed rows (B.2).
        X.assign(k * d, 0.0);
        double xr2 = 0, norm2 = 0;
        for (std::size_t i = 0; i < k; ++i) {
          const bool limit = x.direct && i < x.old;
          const std::size_t slot = tok_by_head ? i * H + h : i * n + jstar[h * T + i];
          const double* cm = limit ? &TokM[slot * d] : &C[i * m + h * d];
          const double* cr = limit ? &TokR[slot * d] : &R[i * m + h * d];
          double nr = rowsq[i];
          for (std::size_t c = 0; c < d; ++c) {
            X[i * d + c] = cm[c];
            nr += cm[c] * cm[c];
            xr2 += cr[c] * cr[c];
          }
          norm2 += nr;
          xr2 += rad2[i];
        }
        gx.resize(k * k);
        for (std::size_t a = 0; a < k; ++a) std::copy(&acc[a * T], &acc[a * T] + a + 1, &gx[a * k]);
        syrk_lower(X.data(), d, k, d, gx.data(), k, /*subtract=*/false, threads);
        double gerr = 0, radF = 0;  // heads 1..h+1: h + 1 blocks
        if (!gram_bounds(k, h + 1, norm2, xr2, gerr, radF)) { why = "trace: dimension too large"; mpfr_clear(sq); return false; }
        mpfr_set_q(sq, x.sigma.get_mpq_t(), MPFR_RNDU);
        const double sig = x.direct ? mpfr_get_d(sq, MPFR_RNDU) : 0.0;
        const double root = up(std::max(sig, 0.0) + radF);
        const double mu = x.direct ? up(root * root) : up(up(2.0 * up(radF * radF)) + 1e-300);
        for (std::size_t j = 0; j < k; ++j) gx[j * k + j] = dn(gx[j * k + j] - mu);
        if (!(std::isfinite(gerr) && std::isfinite(mu)) || !rump_pd(gx, k, gerr, threads)) {
          why = "trace[" + std::to_string(h) + "]: " +
                (x.direct ? "sigma_lower is not certified: the Gram matrix of Z_inf ("
                          : "eps from the B.2 estimate and rank(Z_c) >= k_h not certified: the Gram matrix of Z_c (") +
                std::to_string(k) + " rows, heads 1.." + std::to_string(h + 1) + ") minus " +
                (x.direct ? "(sigma_lower + ||R||_F)^2 I" : "2 ||R||_F^2 I") + " is not proved positive definite";
          mpfr_clear(sq);
          return false;
        }
      }
      // Head h as computed joins the accumulated blocks (for the later heads).
      if (h + 1 < last) acc_add_head(h, &rowsq, &rad2);
    }
    mpfr_clear(sq);
    std::size_t proved = 0, refs = 0;
    for (std::size_t h = 0; h < H; ++h) proved += by_reference[h];
    for (std::size_t h = 0; h < H; ++h) {
      bool named = false;
      for (std::size_t j = 0; j < H && !named; ++j) named = by_reference[j] && ht[j].reference == h;
      refs += named;
    }
    if (proved > 0)
      note_applied("Lemma 5's sigma: " + std::to_string(proved) + " head(s) proved through " + std::to_string(refs) +
                   " reference Gram matrix(es) (heads 1..r alone; docs/THEORY.md section 4), the others by their own Z_inf");
  }

  // ---- rank(Z) >= T: Gram of the centres + Rump ----
  // G = the heads Lemma 5 accumulated plus the rest, one syrk per head: each entry is still the m products
  // summed from 0 in one order (a product, then additions: at most m + H roundings on any term's path),
  // so Higham's bound holds with gamma_{m + H}; gamma_{2 (m + H) + 4} is taken as a margin.
  const double u = std::ldexp(1.0, -53), eta = std::ldexp(1.0, -1074);
  const double gam = gamma_up(2 * (m + H) + 4);
  if (!std::isfinite(gam)) { why = "rank: dimension too large"; return false; }
  double sumsq = 0, radF2 = 0;
  for (std::size_t a = 0; a < T; ++a) {
    double sq = 0;
    for (std::size_t j = 0; j < m; ++j) {
      sq += C[a * m + j] * C[a * m + j];
      radF2 += R[a * m + j] * R[a * m + j];
    }
    sumsq = up(sumsq + up(up(sq * up(1.0 + 2.0 * gam)) + double(m) * eta));  // sq computed in RN: inflate
  }
  // ||R||_F^2 computed in round-to-nearest over T m terms: inflate by (1 + 2 (Tm) u).
  radF2 = up(radF2 * up(1.0 + up(2.0 * double(T * m + 2) * u)) + eta);
  // |fl(G)_ab - G_ab| <= gam ||c_a|| ||c_b|| + m eta, so ||error||_2 <= gam sum_a ||c_a||^2 + T m eta.
  const double gerr = up(up(gam * sumsq) + up(double(T) * double(m) * eta));
  // (The + 1e-300 also covers what underflow may lose in the T m squares, at most T m eta / 2.)
  const double mu = up(up(2.0 * radF2) + 1e-300);
  for (std::size_t h = acc_heads; h < H; ++h) acc_add_head(h, nullptr, nullptr);
  std::vector<double> g = std::move(acc);
  for (std::size_t j = 0; j < T; ++j) g[j * T + j] = dn(g[j * T + j] - mu);
  if (!std::isfinite(gerr) || !rump_pd(g, T, gerr, threads)) {
    why = "rank: could not certify rank(Z) >= " + std::to_string(T) +
          " (Gram matrix of the enclosure centres minus ||R||_F^2 not proved positive definite)";
    return false;
  }
  return true;
}

}  // namespace

bool check_theorem1(const Value& cert, std::string& why) { return check_theorem1_on(cert, why, checker_threads()); }

}  // namespace memcert_checker
