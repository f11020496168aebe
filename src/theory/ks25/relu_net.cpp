// Exact ReLU networks: evaluation, complexity, builder.
#include "memcert/theory/ks25/relu_net.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace memcert::ks25 {

QVector relunet_eval(const ReluNet& net, const QVector& x) {
  if (x.size() != net.in_dim) throw std::invalid_argument("relunet_eval: input dimension mismatch");
  QVector h = x;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const ReluLayer& L = net.layers[l];
    QVector o(L.W.rows());
    for (std::size_t i = 0; i < L.W.rows(); ++i) {
      Rational s = L.b[i];
      for (std::size_t j = 0; j < L.W.cols(); ++j)
        if (sgn(L.W(i, j)) != 0) s += L.W(i, j) * h[j];
      if (l + 1 < net.layers.size() && sgn(s) < 0) s = 0;
      o[i] = std::move(s);
    }
    h = std::move(o);
  }
  return h;
}

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
using Dy = ReluNetSparse::Dy;

// Bits of |v| (0 for 0).
int bits128(i128 v) {
  const u128 a = v < 0 ? u128(0) - u128(v) : u128(v);
  const auto hi = static_cast<std::uint64_t>(a >> 64), lo = static_cast<std::uint64_t>(a);
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}
int ctz128(i128 v) {  // v != 0
  const u128 a = u128(v);
  const auto lo = static_cast<std::uint64_t>(a);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<std::uint64_t>(a >> 64));
}
void set_i128(Integer& z, i128 v) {
  const bool neg = v < 0;
  const u128 a = neg ? u128(0) - u128(v) : u128(v);
  z = static_cast<unsigned long>(static_cast<std::uint64_t>(a >> 64));
  mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), 64);
  z += static_cast<unsigned long>(static_cast<std::uint64_t>(a));
  if (neg) z = -z;
}
void as_mpz(const Dy& v, Integer& z) {
  if (v.big) z = v.M;
  else z = static_cast<long>(v.m);
}
// The normalized value acc 2^-E from a GMP integer.
void settle(Integer& acc, long E, Dy& o) {
  if (sgn(acc) == 0) { o.big = false; o.m = 0; o.e = 0; return; }
  const long tz = static_cast<long>(mpz_scan1(acc.get_mpz_t(), 0)), k = std::min(tz, E);
  if (k > 0) mpz_fdiv_q_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(k));  // exact
  o.e = E - k;
  if (acc.fits_slong_p()) { o.big = false; o.m = acc.get_si(); }
  else { o.big = true; mpz_swap(o.M.get_mpz_t(), acc.get_mpz_t()); }
}

}  // namespace

bool dyadic_from_rational(const Rational& q, Dy& out) {
  const mpz_srcptr den = q.get_den_mpz_t();
  const std::size_t k = mpz_scan1(den, 0);
  if (mpz_sizeinbase(den, 2) != k + 1) return false;  // not a power of two
  out.e = static_cast<long>(k);
  if (q.get_num().fits_slong_p()) { out.big = false; out.m = q.get_num().get_si(); }
  else { out.big = true; out.M = q.get_num(); }
  return true;
}

Rational dyadic_to_rational(const Dy& v) {
  Rational q;
  if (v.big) q = Rational(v.M);
  else q = Rational(static_cast<long>(v.m));
  if (v.e > 0) mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(v.e));
  return q;
}

ReluNetSparse::ReluNetSparse(const ReluNet& net) : in_dim_(net.in_dim) {
  layers_.resize(net.layers.size());
  dyadic_.assign(net.layers.size(), 1);
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const ReluLayer& L = net.layers[l];
    auto& rows = layers_[l];
    rows.resize(L.W.rows());
    for (std::size_t i = 0; i < L.W.rows(); ++i) {
      rows[i].bias = L.b[i];
      if (!dyadic_from_rational(L.b[i], rows[i].db)) dyadic_[l] = 0;
      for (std::size_t j = 0; j < L.W.cols(); ++j) {
        const Rational& w = L.W(i, j);
        if (sgn(w) == 0) continue;
        Term t{static_cast<std::uint32_t>(j), 0, 0, {}};
        if (w == 1) t.small = 1;
        else if (w == -1) t.small = -1;
        else t.w = w;
        if (!dyadic_from_rational(w, t.dw)) dyadic_[l] = 0;
        rows[i].terms.push_back(std::move(t));
      }
    }
  }
}

void ReluNetSparse::layer_rational(std::size_t l, const QVector& h, QVector& o) const {
  const auto& rows = layers_[l];
  Rational tmp;
  o.assign(rows.size(), Rational(0));
  const bool last = l + 1 == layers_.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Rational& s = o[i];
    s = rows[i].bias;
    for (const Term& t : rows[i].terms) {
      const Rational& v = h[t.col];
      if (sgn(v) == 0) continue;
      if (t.small == 1) s += v;
      else if (t.small == -1) s -= v;
      else {
        mpq_mul(tmp.get_mpq_t(), t.w.get_mpq_t(), v.get_mpq_t());
        s += tmp;
      }
    }
    if (!last && sgn(s) < 0) s = 0;
  }
}

// One dyadic layer. Row i: E = max(e(b), e(w) + e(h) over the terms), out = (b 2^(E - e(b)) + sum w h
// 2^(E - e(w) - e(h))) 2^-E. Machine route: |w|, |h| < 2^63 so |w h| < 2^126; a shift is taken only when
// the shifted magnitude stays below 2^126 and every sum is checked (__builtin_add_overflow); any check
// that fails (or a value already in GMP) puts the row on GMP integers. Either way exact.
void ReluNetSparse::layer_dyadic(std::size_t l, const std::vector<Dy>& h, std::vector<Dy>& o) const {
  const auto& rows = layers_[l];
  o.resize(rows.size());
  const bool last = l + 1 == layers_.size();
  thread_local Integer acc, t, z;  // reused: no allocation per row
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    long E = row.db.e;
    bool big = row.db.big;
    for (const Term& term : row.terms) {
      const Dy& v = h[term.col];
      if (!v.big && v.m == 0) continue;
      E = std::max(E, term.dw.e + v.e);
      big = big || v.big || term.dw.big;
    }
    Dy& out = o[i];
    bool done = false;
    if (!big) {
      i128 s = 0;
      bool ok = true;
      auto add = [&](i128 p, long shift) {
        if (p == 0) return;
        if (shift > 0) {
          if (bits128(p) + shift > 125) { ok = false; return; }
          p *= i128(1) << shift;
        }
        if (__builtin_add_overflow(s, p, &s)) ok = false;
      };
      add(static_cast<i128>(row.db.m), E - row.db.e);
      for (const Term& term : row.terms) {
        if (!ok) break;
        const Dy& v = h[term.col];
        if (v.m == 0) continue;
        add(static_cast<i128>(term.dw.m) * v.m, E - term.dw.e - v.e);
      }
      if (ok) {
        done = true;
        if (!last && s < 0) s = 0;
        if (s == 0) { out.big = false; out.m = 0; out.e = 0; }
        else {
          const long k = std::min<long>(ctz128(s), E);
          s >>= k;  // exact: k trailing zero bits
          out.e = E - k;
          if (s >= INT64_MIN && s <= INT64_MAX) { out.big = false; out.m = static_cast<std::int64_t>(s); }
          else { out.big = true; set_i128(out.M, s); }
        }
      }
    }
    if (done) continue;
    as_mpz(row.db, acc);
    mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(E - row.db.e));
    for (const Term& term : row.terms) {
      const Dy& v = h[term.col];
      if (!v.big && v.m == 0) continue;
      as_mpz(term.dw, t);
      as_mpz(v, z);
      t *= z;
      mpz_mul_2exp(t.get_mpz_t(), t.get_mpz_t(), static_cast<mp_bitcnt_t>(E - term.dw.e - v.e));
      acc += t;
    }
    if (!last && sgn(acc) < 0) acc = 0;
    settle(acc, E, out);
  }
}

QVector ReluNetSparse::eval_rational(const QVector& x) const {
  if (x.size() != in_dim_) throw std::invalid_argument("ReluNetSparse::eval: input dimension mismatch");
  QVector h = x, o;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    layer_rational(l, h, o);
    std::swap(h, o);
  }
  return h;
}

QVector ReluNetSparse::eval(const QVector& x) const {
  QVector out;
  eval_block(&x, 1, &out);
  return out;
}

// Layer by layer over a block of points (the layer's weights stay in cache across the block).
void ReluNetSparse::eval_block(const QVector* xs, std::size_t count, QVector* out) const {
  struct State {
    QVector hq, oq;
    std::vector<Dy> hd, od;
    bool dy = false;  // the current values are in hd (else hq)
  };
  std::vector<State> st(count);
  for (std::size_t p = 0; p < count; ++p) {
    if (xs[p].size() != in_dim_) throw std::invalid_argument("ReluNetSparse::eval: input dimension mismatch");
    st[p].hq = xs[p];
  }
  auto back = [](State& S) {
    S.hq.resize(S.hd.size());
    for (std::size_t j = 0; j < S.hd.size(); ++j) S.hq[j] = dyadic_to_rational(S.hd[j]);
    S.dy = false;
  };
  for (std::size_t l = 0; l < layers_.size(); ++l)
    for (State& S : st) {
      if (dyadic_[l] && !S.dy) {
        S.hd.resize(S.hq.size());
        S.dy = true;
        for (std::size_t j = 0; j < S.hq.size() && S.dy; ++j) S.dy = dyadic_from_rational(S.hq[j], S.hd[j]);
      }
      if (dyadic_[l] && S.dy) {
        layer_dyadic(l, S.hd, S.od);
        std::swap(S.hd, S.od);
        continue;
      }
      if (S.dy) back(S);
      layer_rational(l, S.hq, S.oq);
      std::swap(S.hq, S.oq);
    }
  for (std::size_t p = 0; p < count; ++p) {
    if (st[p].dy) back(st[p]);
    out[p] = std::move(st[p].hq);
  }
}

std::vector<QVector> ReluNetSparse::eval_all(const std::vector<QVector>& xs, unsigned threads) const {
  std::vector<QVector> out(xs.size());
  constexpr std::size_t kBlock = 64;
  const std::size_t blocks = (xs.size() + kBlock - 1) / kBlock;
  auto run = [&](std::size_t b) {
    const std::size_t at = b * kBlock, count = std::min(kBlock, xs.size() - at);
    eval_block(xs.data() + at, count, out.data() + at);
  };
  if (threads <= 1 || blocks < 2) {
    for (std::size_t b = 0; b < blocks; ++b) run(b);
    return out;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t]() {
      for (std::size_t b = t; b < blocks; b += threads) run(b);
    });
  for (auto& th : pool) th.join();
  return out;
}

// ---- eval_all_shared ----------------------------------------------------------------------------------
// Invariant: every class is a set of points and, for the layer it stands at, each unit (column) is either
// a value common to all its points or a per-point vector m_p 2^-e (128-bit m_p, |m_p| < 2^125: a value
// past 64 bits, such as a stage-I projection of 48 integer and 16 fractional bits doubled, stays per
// point instead of splitting its class point by point); the true value of the unit at point
// pts[p] (plain layer-by-layer evaluation) is that value. A row's output is a function of the values of
// the columns it reads; it is computed exactly once per class from the common ones plus, per point, from
// the per-point ones (machine integers with every bound checked, GMP integers where a check fails), so
// the invariant holds after every layer. Points whose value of some unit needs GMP are moved into classes
// of equal values (where the unit is common). Any subset of a class is a class, so splitting is always
// sound. Tests compare the result with eval_all on random and adversarial networks.
namespace {

int bits64(std::uint64_t a) { return a ? 64 - __builtin_clzll(a) : 0; }
std::uint64_t abs64(std::int64_t v) { return v < 0 ? std::uint64_t(0) - std::uint64_t(v) : std::uint64_t(v); }
u128 abs128(i128 v) { return v < 0 ? u128(0) - u128(v) : u128(v); }
int bitsu128(u128 a) {
  const auto hi = static_cast<std::uint64_t>(a >> 64), lo = static_cast<std::uint64_t>(a);
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}
int ctzu128(u128 a) {  // a != 0
  const auto lo = static_cast<std::uint64_t>(a);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<std::uint64_t>(a >> 64));
}

// The normalized dyadic s 2^-E.
void dy_from_i128(i128 s, long E, Dy& out) {
  if (s == 0) {
    out.big = false;
    out.m = 0;
    out.e = 0;
    return;
  }
  const long k = std::min<long>(ctz128(s), E);
  s >>= k;  // exact: k trailing zero bits (arithmetic shift, C++20)
  out.e = E - k;
  if (s >= INT64_MIN && s <= INT64_MAX) {
    out.big = false;
    out.m = static_cast<std::int64_t>(s);
  } else {
    out.big = true;
    set_i128(out.M, s);
  }
}
bool dy_zero(const Dy& v) { return !v.big && v.m == 0; }
// out = v 2^shift (the mantissa of v scaled to the exponent e(v) + shift) when it fits 125 bits.
static_assert(GMP_NUMB_BITS == 64, "64-bit GMP limbs expected");
bool dy_i128(const Dy& v, long shift, i128& out) {
  if (!v.big) {
    if (v.m == 0) {
      out = 0;
      return true;
    }
    if (bits64(abs64(v.m)) + shift > 125) return false;
    out = static_cast<i128>(v.m) * (i128(1) << shift);
    return true;
  }
  const mpz_srcptr z = v.M.get_mpz_t();
  if (static_cast<long>(mpz_sizeinbase(z, 2)) + shift > 125) return false;
  u128 a = 0;
  for (mp_size_t i = static_cast<mp_size_t>(mpz_size(z)); i-- > 0;) a = (a << 64) | mpz_getlimbn(z, i);
  const i128 t = static_cast<i128>(a);
  out = (mpz_sgn(z) < 0 ? -t : t) * (i128(1) << shift);
  return true;
}
bool dy_negative(const Dy& v) { return v.big ? sgn(v.M) < 0 : v.m < 0; }
// Order of normalized representations (equal iff equal values).
int dy_cmp(const Dy& a, const Dy& b) {
  if (a.e != b.e) return a.e < b.e ? -1 : 1;
  if (a.big != b.big) return a.big ? 1 : -1;
  if (a.big) return mpz_cmp(a.M.get_mpz_t(), b.M.get_mpz_t());
  return a.m < b.m ? -1 : a.m > b.m ? 1 : 0;
}

// Numeric order of two values (-1, 0, 1).
int dy_cmp_value(const Dy& a, const Dy& b) {
  const long E = std::max(a.e, b.e);
  if (!a.big && !b.big) {
    i128 x, y;
    if (dy_i128(a, E - a.e, x) && dy_i128(b, E - b.e, y)) return x < y ? -1 : x > y ? 1 : 0;
  }
  thread_local Integer x, y;
  as_mpz(a, x);
  mpz_mul_2exp(x.get_mpz_t(), x.get_mpz_t(), static_cast<mp_bitcnt_t>(E - a.e));
  as_mpz(b, y);
  mpz_mul_2exp(y.get_mpz_t(), y.get_mpz_t(), static_cast<mp_bitcnt_t>(E - b.e));
  const int c = mpz_cmp(x.get_mpz_t(), y.get_mpz_t());
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// dst = src, keeping dst's GMP storage (no allocation once it is large enough).
void dy_assign(Dy& dst, const Dy& src) {
  dst.m = src.m;
  dst.e = src.e;
  dst.big = src.big;
  if (src.big) mpz_set(dst.M.get_mpz_t(), src.M.get_mpz_t());
}
// settle() that copies out of acc (acc keeps its storage for the next row).
void settle_copy(const Integer& acc, long E, Dy& o) {
  if (sgn(acc) == 0) { o.big = false; o.m = 0; o.e = 0; return; }
  const long tz = static_cast<long>(mpz_scan1(acc.get_mpz_t(), 0)), k = std::min(tz, E);
  mpz_fdiv_q_2exp(o.M.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(k));  // exact
  o.e = E - k;
  o.big = !o.M.fits_slong_p();
  if (!o.big) o.m = o.M.get_si();
}

}  // namespace

struct ReluNetSparse::Shared {
  struct Col {
    bool vec = false;
    Dy c;                         // the common value (!vec)
    std::vector<i128> m;          // per-point values m[p] 2^-e (vec), |m[p]| < 2^126
    long e = 0;
    int maxbits = 0;              // bits of the largest |m[p]|
    bool nonneg = false;          // every m[p] >= 0
    i128 lo = 0, hi = 0;          // the smallest and the largest m[p]
  };
  struct Cls {
    std::vector<std::uint32_t> pts;
    std::vector<Col> cols, spare;
    std::size_t layer = 0;  // the next layer to apply
  };
  struct Exc {
    std::uint32_t p;  // local index
    Dy v;
  };

  const ReluNetSparse& net;
  std::vector<QVector>& out;
  std::atomic<std::size_t> classes{0}, class_rows{0}, point_rows{0}, exact_rows{0};
  // The counts of the calling thread (added to the atomics above when its worker ends: no shared
  // counter is touched per row).
  struct Counts {
    std::size_t class_rows = 0, point_rows = 0, exact_rows = 0;
  };
  static Counts& counts() {
    thread_local Counts c;
    return c;
  }

  Shared(const ReluNetSparse& n, std::vector<QVector>& o) : net(n), out(o) {}

  // bias + sum w v over the terms whose value get(col) returns (nullptr: left out), exact; ReLU if relu.
  template <class Get>
  static void row_exact(const Row& row, Get get, bool relu, Dy& o) {
    long E = row.db.e;
    bool big = row.db.big;
    for (const Term& term : row.terms) {
      const Dy* v = get(term.col);
      if (!v || dy_zero(*v)) continue;
      E = std::max(E, term.dw.e + v->e);
      big = big || v->big || term.dw.big;
    }
    if (!big) {
      i128 s = 0;
      bool ok = true;
      auto add = [&](i128 p, long shift) {
        if (p == 0) return;
        if (shift > 0) {
          if (bits128(p) + shift > 125) {
            ok = false;
            return;
          }
          p *= i128(1) << shift;
        }
        if (__builtin_add_overflow(s, p, &s)) ok = false;
      };
      add(static_cast<i128>(row.db.m), E - row.db.e);
      for (const Term& term : row.terms) {
        if (!ok) break;
        const Dy* v = get(term.col);
        if (!v || v->m == 0) continue;
        add(static_cast<i128>(term.dw.m) * v->m, E - term.dw.e - v->e);
      }
      if (ok) {
        if (relu && s < 0) s = 0;
        dy_from_i128(s, E, o);
        return;
      }
    }
    // GMP integers: acc = sum of the terms' products at the exponent E. A machine-integer weight times a
    // GMP value is added in one pass (mpz_addmul_ui / mpz_submul_ui, after the shift when there is one),
    // without copying the value; the result is moved into o (no copy).
    thread_local Integer acc, t, z;
    as_mpz(row.db, acc);
    mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(E - row.db.e));
    for (const Term& term : row.terms) {
      const Dy* v = get(term.col);
      if (!v || dy_zero(*v)) continue;
      const long sh = E - term.dw.e - v->e;
      if (v->big && !term.dw.big) {
        mpz_srcptr src = v->M.get_mpz_t();
        if (sh > 0) {
          mpz_mul_2exp(t.get_mpz_t(), src, static_cast<mp_bitcnt_t>(sh));
          src = t.get_mpz_t();
        }
        if (term.dw.m > 0) mpz_addmul_ui(acc.get_mpz_t(), src, static_cast<unsigned long>(term.dw.m));
        else mpz_submul_ui(acc.get_mpz_t(), src, static_cast<unsigned long>(abs64(term.dw.m)));
        continue;
      }
      as_mpz(term.dw, t);
      as_mpz(*v, z);
      t *= z;
      mpz_mul_2exp(t.get_mpz_t(), t.get_mpz_t(), static_cast<mp_bitcnt_t>(sh));
      acc += t;
    }
    if (relu && sgn(acc) < 0) acc = 0;
    settle(acc, E, o);
  }

  // a + b, exact (ReLU if relu).
  static void dy_add(const Dy& a, const Dy& b, bool relu, Dy& o) {
    thread_local Integer x, y;
    const long E = std::max(a.e, b.e);
    as_mpz(a, x);
    mpz_mul_2exp(x.get_mpz_t(), x.get_mpz_t(), static_cast<mp_bitcnt_t>(E - a.e));
    as_mpz(b, y);
    mpz_mul_2exp(y.get_mpz_t(), y.get_mpz_t(), static_cast<mp_bitcnt_t>(E - b.e));
    x += y;
    if (relu && sgn(x) < 0) x = 0;
    settle_copy(x, E, o);
  }

  // A per-point vector made common when all its values agree; otherwise renormalized (common trailing
  // zeros folded into e).
  static void tidy(Col& o) {
    if (!o.vec) return;
    const std::size_t n = o.m.size();
    bool same = true, nonneg = true;
    u128 any = 0;
    const i128 m0 = n ? o.m[0] : 0;
    i128 lo = m0, hi = m0;
    for (std::size_t p = 0; p < n; ++p) {
      same = same && o.m[p] == m0;
      nonneg = nonneg && o.m[p] >= 0;
      any |= abs128(o.m[p]);
      lo = std::min(lo, o.m[p]);
      hi = std::max(hi, o.m[p]);
    }
    if (same) {
      o.vec = false;
      dy_from_i128(m0, o.e, o.c);
      return;
    }
    const long k = std::min<long>(ctzu128(any), o.e);  // any != 0: not all m[p] are equal
    if (k > 0) {
      for (auto& v : o.m) v >>= k;  // exact (arithmetic shift, C++20)
      o.e -= k;
    }
    o.lo = lo >> k;  // exact: k trailing zero bits in every m[p]
    o.hi = hi >> k;
    o.maxbits = bitsu128(any >> k);  // |m| <= any (the OR of the magnitudes)
    o.nonneg = nonneg;
  }

  // True when C + sum over vt of w h_p is <= 0 at every point p of S, shown from the smallest and largest
  // per-point values of each column (an upper bound of a sum is the sum of the terms' upper bounds:
  // w hi for w > 0, w lo for w < 0), in 128-bit integers with every step checked; false when a check
  // fails (the row is then evaluated point by point).
  static bool below_zero(const Cls& S, const Dy& C, const std::vector<const Term*>& vt) {
    long E = dy_zero(C) ? 0 : C.e;
    for (const Term* t : vt) {
      if (t->dw.big) return false;
      E = std::max(E, t->dw.e + S.cols[t->col].e);
    }
    i128 ub = 0;
    if (!dy_zero(C) && !dy_i128(C, E - C.e, ub)) return false;
    for (const Term* t : vt) {
      const Col& col = S.cols[t->col];
      i128 prod;
      if (__builtin_mul_overflow(static_cast<i128>(t->dw.m), t->dw.m > 0 ? col.hi : col.lo, &prod)) return false;
      if (prod == 0) continue;
      const long sh = E - t->dw.e - col.e;
      if (bits128(prod) + sh > 125) return false;
      prod *= i128(1) << sh;
      if (__builtin_add_overflow(ub, prod, &ub)) return false;
    }
    return ub <= 0;
  }

  // Row `row` of the layer over class S into o; per-point values the machine route cannot hold go to ex.
  // A row whose value is one column of the class (bias 0, one term of weight 1 reading a non-zero value,
  // every other term reading 0; under a ReLU only a column >= 0 at every point) sets copy_of to that
  // column and leaves o's value to the caller: step() moves the column (or copies it) once the whole
  // layer is done, so a value carried through many layers is not recomputed or copied layer by layer.
  void eval_row(const Cls& S, const Row& row, bool relu, Col& o, std::vector<Exc>& ex, long& copy_of) {
    Counts& cnt = counts();
    ++cnt.class_rows;
    const std::size_t n = S.pts.size();
    // One pass over the terms: the per-point columns read (vt) and the terms that read a non-zero value.
    thread_local std::vector<const Term*> vt;
    vt.clear();
    const Term* only = nullptr;
    std::size_t nonzero = 0;
    bool ones = true;
    for (const Term& t : row.terms) {
      const Col& c = S.cols[t.col];
      if (c.vec) {
        if (c.maxbits == 0) continue;
        vt.push_back(&t);
      } else if (dy_zero(c.c)) {
        continue;
      }
      ++nonzero;
      only = &t;
      ones = ones && t.small == 1;
    }
    if (dy_zero(row.db) && nonzero <= 1 && ones) {
      const Col* src = nonzero ? &S.cols[only->col] : nullptr;
      if (!src || (!src->vec && relu && dy_negative(src->c))) {  // 0, or ReLU of a negative value
        o.vec = false;
        dy_assign(o.c, Dy{});
        return;
      }
      if (!src->vec || !relu || src->nonneg) {
        copy_of = static_cast<long>(only->col);
        o.vec = src->vec;
        if (src->vec) {
          o.e = src->e;
          o.maxbits = src->maxbits;
          o.nonneg = src->nonneg;
          o.lo = src->lo;
          o.hi = src->hi;
        }
        return;
      }
    }
    auto common = [&](std::uint32_t c) -> const Dy* { return S.cols[c].vec ? nullptr : &S.cols[c].c; };
    if (vt.empty()) {  // every value read is common: the row's value is common
      o.vec = false;
      row_exact(row, common, relu, o.c);
      return;
    }
    thread_local Dy C;
    row_exact(row, common, false, C);
    if (relu && below_zero(S, C, vt)) {  // ReLU of a value <= 0 at every point of the class
      o.vec = false;
      dy_assign(o.c, Dy{});
      return;
    }
    cnt.point_rows += n;
    long Ev = 0;
    for (const Term* t : vt) Ev = std::max(Ev, t->dw.e + S.cols[t->col].e);
    thread_local std::vector<i128> sv;
    thread_local std::vector<char> hard;
    sv.assign(n, 0);
    hard.assign(n, 0);
    // The per-point part sum w m_p 2^(Ev - e(w) - e(col)): unchecked when a bound from the largest |m|
    // keeps every partial sum below 2^125, else checked point by point.
    double bound = 0;
    for (const Term* t : vt)
      if (!t->dw.big)
        bound += std::ldexp(1.0, bits64(abs64(t->dw.m)) + S.cols[t->col].maxbits +
                                     static_cast<int>(std::min<long>(Ev - t->dw.e - S.cols[t->col].e, 400)));
    const bool fast = bound <= std::ldexp(1.0, 124);
    for (const Term* t : vt) {
      const Col& col = S.cols[t->col];
      const i128* m = col.m.data();
      if (t->dw.big) {
        for (std::size_t p = 0; p < n; ++p)
          if (m[p] != 0) hard[p] = 1;
        continue;
      }
      const long sh = Ev - t->dw.e - col.e;
      if (fast) {
        const i128 ws = static_cast<i128>(t->dw.m) * (i128(1) << sh);
        for (std::size_t p = 0; p < n; ++p) sv[p] += ws * m[p];
      } else {
        for (std::size_t p = 0; p < n; ++p) {
          if (m[p] == 0 || hard[p]) continue;
          i128 prod;
          if (__builtin_mul_overflow(static_cast<i128>(t->dw.m), m[p], &prod) || bits128(prod) + sh > 125) {
            hard[p] = 1;
            continue;
          }
          prod *= i128(1) << sh;
          if (__builtin_add_overflow(sv[p], prod, &sv[p])) hard[p] = 1;
        }
      }
    }
    bool anyhard = false, same = true;
    for (std::size_t p = 0; p < n; ++p) {
      anyhard = anyhard || hard[p];
      same = same && sv[p] == sv[0];
    }
    if (!anyhard && same) {  // the per-point part is common after all
      thread_local Dy s0;
      dy_from_i128(sv[0], Ev, s0);
      o.vec = false;
      dy_add(C, s0, relu, o.c);
      return;
    }
    // value = C + sv[p] 2^-Ev per point.
    const bool czero = dy_zero(C);
    const long E = czero ? Ev : std::max(C.e, Ev);
    const long cs = E - C.e, ss = E - Ev;
    i128 cval = 0;
    const bool cok = czero || dy_i128(C, cs, cval);
    u128 any = 0;
    for (std::size_t p = 0; p < n; ++p) {
      if (hard[p]) continue;
      if (!cok) {
        hard[p] = 1;
        continue;
      }
      i128 t = sv[p];
      if (t != 0 && ss > 0) {
        if (bits128(t) + ss > 125) {
          hard[p] = 1;
          continue;
        }
        t *= i128(1) << ss;
      }
      if (__builtin_add_overflow(t, cval, &t)) {
        hard[p] = 1;
        continue;
      }
      if (relu && t < 0) t = 0;
      sv[p] = t;
      any |= abs128(t);
    }
    const long k = any == 0 ? E : std::min<long>(ctzu128(any), E);
    o.vec = true;
    o.e = E - k;
    o.m.resize(n);
    u128 mags = 0;
    bool same2 = true, nonneg = true;
    i128 first = 0, lo = 0, hi = 0;
    bool have = false;
    thread_local std::vector<Dy> tmp;
    for (std::size_t p = 0; p < n; ++p) {
      if (!hard[p]) {
        const i128 v = sv[p] >> k;  // exact (arithmetic shift, C++20); |v| < 2^125
        o.m[p] = v;
        mags |= abs128(v);
        nonneg = nonneg && v >= 0;
        if (!have) first = lo = hi = v;
        have = true;
        same2 = same2 && v == first;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        continue;
      }
      o.m[p] = 0;
      ++cnt.exact_rows;
      if (tmp.size() < S.cols.size()) tmp.resize(S.cols.size());
      ex.push_back({static_cast<std::uint32_t>(p), Dy{}});
      row_exact(
          row,
          [&](std::uint32_t c) -> const Dy* {
            const Col& k2 = S.cols[c];
            if (!k2.vec) return &k2.c;
            Dy& d = tmp[c];
            dy_from_i128(k2.m[p], k2.e, d);
            return &d;
          },
          relu, ex.back().v);
    }
    o.maxbits = bitsu128(mags);
    o.nonneg = nonneg;
    o.lo = lo;  // over the points without an exception (the others split off; split() recomputes)
    o.hi = hi;
    if (ex.empty() && same2) {
      o.vec = false;
      dy_from_i128(first, o.e, o.c);
    }
  }

  // Class S with new column values `next` (per-point exceptions ex[i] in column i) -> S itself when
  // there are none, else the classes of points with equal exceptional values (and the rest).
  static void split(Cls& S, std::vector<Col>& next, std::vector<std::vector<Exc>>& ex, std::vector<Cls>& kids) {
    const std::size_t n = S.pts.size(), w = next.size();
    // key[q] = the (column, value) pairs of the q-th point with an exception, in column order.
    thread_local std::vector<std::int32_t> slot;
    slot.assign(n, -1);
    std::vector<std::uint32_t> hit;  // local indices of points with an exception
    std::vector<std::vector<std::pair<std::uint32_t, const Dy*>>> key;
    for (std::size_t i = 0; i < w; ++i)
      for (const Exc& e : ex[i]) {
        if (slot[e.p] < 0) {
          slot[e.p] = static_cast<std::int32_t>(hit.size());
          hit.push_back(e.p);
          key.emplace_back();
        }
        key[static_cast<std::size_t>(slot[e.p])].emplace_back(static_cast<std::uint32_t>(i), &e.v);
      }
    auto cmp = [&](std::uint32_t a, std::uint32_t b) {  // a, b: indices into hit
      const auto &x = key[a], &y = key[b];
      if (x.size() != y.size()) return x.size() < y.size();
      for (std::size_t j = 0; j < x.size(); ++j) {
        if (x[j].first != y[j].first) return x[j].first < y[j].first;
        const int c = dy_cmp(*x[j].second, *y[j].second);
        if (c != 0) return c < 0;
      }
      return false;
    };
    // A class of the local points idx; columns in `fixed` (column, value) are common.
    auto make = [&](const std::vector<std::uint32_t>& idx, const std::vector<std::pair<std::uint32_t, const Dy*>>& fixed) {
      Cls K;
      K.layer = S.layer + 1;
      K.pts.resize(idx.size());
      for (std::size_t j = 0; j < idx.size(); ++j) K.pts[j] = S.pts[idx[j]];
      K.cols.resize(w);
      std::size_t at = 0;
      for (std::size_t i = 0; i < w; ++i) {
        Col& d = K.cols[i];
        if (at < fixed.size() && fixed[at].first == i) {
          d.vec = false;
          d.c = *fixed[at].second;
          ++at;
          continue;
        }
        const Col& src = next[i];
        if (!src.vec) {
          d.vec = false;
          d.c = src.c;
          continue;
        }
        d.vec = true;
        d.e = src.e;
        d.m.resize(idx.size());
        for (std::size_t j = 0; j < idx.size(); ++j) d.m[j] = src.m[idx[j]];
        tidy(d);
      }
      kids.push_back(std::move(K));
    };
    {
      std::vector<std::uint32_t> rest;
      rest.reserve(n - hit.size());
      for (std::size_t p = 0; p < n; ++p)
        if (slot[p] < 0) rest.push_back(static_cast<std::uint32_t>(p));
      if (!rest.empty()) make(rest, {});
    }
    std::vector<std::uint32_t> order(hit.size());
    for (std::size_t q = 0; q < hit.size(); ++q) order[q] = static_cast<std::uint32_t>(q);
    std::stable_sort(order.begin(), order.end(), cmp);
    std::size_t g = 0;
    std::vector<std::uint32_t> idx;
    while (g < order.size()) {
      std::size_t h = g + 1;
      while (h < order.size() && !cmp(order[g], order[h])) ++h;
      idx.clear();
      for (std::size_t j = g; j < h; ++j) idx.push_back(hit[order[j]]);
      make(idx, key[order[g]]);
      g = h;
    }
  }

  // Applies layers to S until it is done (values written to `out`) or splits (children into kids).
  void step(Cls& S, std::vector<Cls>& kids) {
    const std::size_t l = S.layer;
    const auto& rows = net.layers_[l];
    const bool relu = l + 1 < net.layers_.size();
    std::vector<Col>& next = S.spare;
    next.resize(rows.size());
    thread_local std::vector<std::vector<Exc>> ex;
    ex.resize(std::max(ex.size(), rows.size()));
    bool any = false;
    thread_local std::vector<std::pair<std::size_t, std::size_t>> copies;  // (row, column it copies)
    copies.clear();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      ex[i].clear();
      long copy_of = -1;
      eval_row(S, rows[i], relu, next[i], ex[i], copy_of);
      if (copy_of >= 0) copies.emplace_back(i, static_cast<std::size_t>(copy_of));
      any = any || !ex[i].empty();
    }
    // Copied columns: the first copy of a column takes its storage (S.cols is not read after this
    // layer), later copies of the same column copy the values.
    if (!copies.empty()) {
      thread_local std::vector<std::int64_t> taken;  // column -> the row that took it, or -1
      taken.assign(S.cols.size(), -1);
      for (const auto& [i, j] : copies) {
        Col& to = next[i];
        if (taken[j] < 0) {
          Col& from = S.cols[j];
          if (to.vec) std::swap(to.m, from.m);
          else {
            std::swap(to.c.m, from.c.m);
            std::swap(to.c.e, from.c.e);
            std::swap(to.c.big, from.c.big);
            mpz_swap(to.c.M.get_mpz_t(), from.c.M.get_mpz_t());
          }
          taken[j] = static_cast<std::int64_t>(i);
        } else {
          const Col& from = next[static_cast<std::size_t>(taken[j])];
          if (to.vec) to.m.assign(from.m.begin(), from.m.end());
          else dy_assign(to.c, from.c);
        }
      }
    }
    if (!any) {
      std::swap(S.cols, S.spare);
      ++S.layer;
      return;
    }
    split(S, next, ex, kids);
    classes += kids.size();
  }

  void emit(const Cls& S) {
    for (std::size_t p = 0; p < S.pts.size(); ++p) {
      QVector v(S.cols.size());
      for (std::size_t i = 0; i < S.cols.size(); ++i) {
        const Col& c = S.cols[i];
        if (!c.vec) v[i] = dyadic_to_rational(c.c);
        else {
          Dy d;
          dy_from_i128(c.m[p], c.e, d);
          v[i] = dyadic_to_rational(d);
        }
      }
      out[S.pts[p]] = std::move(v);
    }
  }

  // Classes move through the layers in batches of classes that stand at the same layer: each layer's
  // rows are read once per batch (they stay in cache while the batch's classes apply them), not once per
  // class. A batch past kBatchClasses classes or kBatchPoints points hands its tail to the queue (for the
  // other threads). The schedule changes only the order of the work, never a value.
  static constexpr std::size_t kBatchClasses = 64, kBatchPoints = 16384;

  void run(std::vector<Cls> first, unsigned threads) {
    classes += first.size();
    using Batch = std::vector<Cls>;
    std::vector<Batch> queue;
    if (!first.empty()) queue.push_back(std::move(first));
    std::mutex mu;
    std::condition_variable cv;
    std::size_t active = 0;
    std::exception_ptr failure;
    // Moves the classes of B past the first that fit the limits into a new batch.
    auto cut = [](Batch& B) -> Batch {
      std::size_t pts = 0, j = 0;
      for (; j < B.size(); ++j) {
        if (j > 0 && (j >= kBatchClasses || pts + B[j].pts.size() > kBatchPoints)) break;
        pts += B[j].pts.size();
      }
      Batch rest;
      if (j < B.size()) {
        rest.reserve(B.size() - j);
        for (std::size_t i = j; i < B.size(); ++i) rest.push_back(std::move(B[i]));
        B.resize(j);
      }
      return rest;
    };
    auto worker = [&]() {
      counts() = Counts{};
      struct Flush {
        Shared& sh;
        ~Flush() {
          const Counts& c = counts();
          sh.class_rows += c.class_rows;
          sh.point_rows += c.point_rows;
          sh.exact_rows += c.exact_rows;
        }
      } flush{*this};
      std::unique_lock<std::mutex> lk(mu);
      for (;;) {
        cv.wait(lk, [&] { return !queue.empty() || active == 0 || failure; });
        if (failure || queue.empty()) {
          cv.notify_all();
          return;
        }
        Batch B = std::move(queue.back());
        queue.pop_back();
        ++active;
        lk.unlock();
        try {
          std::vector<Cls> kids;
          Batch next;
          for (;;) {
            Batch rest = cut(B);
            if (!rest.empty()) {
              std::lock_guard<std::mutex> g(mu);
              queue.push_back(std::move(rest));
              cv.notify_all();
            }
            if (B.empty()) break;
            if (B[0].layer == net.layers_.size()) {
              for (const Cls& S : B) emit(S);
              break;
            }
            next.clear();
            for (Cls& S : B) {
              step(S, kids);
              if (kids.empty()) {
                next.push_back(std::move(S));
                continue;
              }
              for (auto& K : kids) next.push_back(std::move(K));
              kids.clear();
            }
            std::swap(B, next);
          }
        } catch (...) {
          std::lock_guard<std::mutex> g(mu);
          if (!failure) failure = std::current_exception();
        }
        lk.lock();
        --active;
        cv.notify_all();
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
  }
};

std::vector<QVector> ReluNetSparse::eval_all_shared(const std::vector<QVector>& xs, unsigned threads,
                                                    SharedStats* stats) const {
  for (const auto& x : xs)
    if (x.size() != in_dim_) throw std::invalid_argument("ReluNetSparse::eval: input dimension mismatch");
  if (xs.size() > UINT32_MAX) throw std::invalid_argument("ReluNetSparse::eval_all_shared: too many points");
  const std::size_t L = layers_.size();
  std::size_t L0 = L;  // layers [L0, L) are all dyadic
  while (L0 > 0 && dyadic_[L0 - 1]) --L0;
  // Point by point in rationals until the dyadic stretch starts and every value is dyadic.
  std::vector<QVector> h = xs;
  std::vector<std::vector<Dy>> hd(xs.size());
  std::size_t l = 0;
  for (;; ++l) {
    bool all = l >= L0;
    for (std::size_t p = 0; p < h.size() && all; ++p) {
      hd[p].resize(h[p].size());
      for (std::size_t j = 0; j < h[p].size() && all; ++j) all = dyadic_from_rational(h[p][j], hd[p][j]);
    }
    if (all || l == L) break;
    QVector o;
    for (auto& v : h) {
      layer_rational(l, v, o);
      std::swap(v, o);
    }
  }
  if (l == L || xs.empty()) {
    if (stats) *stats = SharedStats{};
    return h;
  }
  // Points in the numeric order of their values after layer l (its outputs, row by row): points that
  // agree there agree on every later layer, and nearby values tend to take the same ReLU branches, so
  // chunks of this order make classes that stay together (a network that projects its input onto a line
  // and then cuts the line into intervals keeps each interval in one chunk, not spread over all of them).
  // Cut into chunks of kChunk points that the threads take up (any subset of points is a class: the
  // order and the chunks only arrange the work, never a value).
  std::vector<std::uint32_t> order(xs.size());
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = static_cast<std::uint32_t>(p);
  h.clear();
  h.shrink_to_fit();
  {
    std::vector<std::vector<Dy>> key(xs.size());
    for (std::size_t p = 0; p < xs.size(); ++p) layer_dyadic(l, hd[p], key[p]);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto &x = key[a], &y = key[b];
      for (std::size_t j = 0; j < x.size(); ++j) {
        const int c = dy_cmp_value(x[j], y[j]);
        if (c != 0) return c < 0;
      }
      return false;
    });
  }
  std::vector<QVector> out(xs.size());
  Shared sh(*this, out);
  std::vector<Shared::Cls> first;
  // A class of the points order[from, to); values the machine route cannot hold are exceptions (their
  // points split off by value).
  auto start = [&](std::size_t from, std::size_t to) {
    Shared::Cls S;
    S.layer = l;
    const std::size_t n = to - from, w = hd[0].size();
    S.pts.assign(order.begin() + static_cast<long>(from), order.begin() + static_cast<long>(to));
    std::vector<Shared::Col> cols(w);
    std::vector<std::vector<Shared::Exc>> ex(w);
    bool any = false;
    for (std::size_t j = 0; j < w; ++j) {
      Shared::Col& c = cols[j];
      c.vec = true;
      c.e = 0;
      for (std::size_t p = 0; p < n; ++p) {
        const Dy& v = hd[S.pts[p]][j];
        if (v.big || v.m != 0) c.e = std::max(c.e, v.e);
      }
      c.m.resize(n);
      for (std::size_t p = 0; p < n; ++p) {
        const Dy& v = hd[S.pts[p]][j];
        c.m[p] = 0;
        if (!v.big && v.m == 0) continue;
        if (!dy_i128(v, c.e - v.e, c.m[p])) {
          c.m[p] = 0;
          ex[j].push_back({static_cast<std::uint32_t>(p), Dy{}});
          ex[j].back().v = v;
        }
      }
      if (ex[j].empty()) Shared::tidy(c);
      any = any || !ex[j].empty();
    }
    if (!any) {
      S.cols = std::move(cols);
      first.push_back(std::move(S));
    } else {
      S.layer = l - 1;  // split() puts its classes at S.layer + 1 (unsigned: l = 0 wraps back to 0)
      Shared::split(S, cols, ex, first);
    }
  };
  constexpr std::size_t kChunk = 4096;
  const std::size_t chunks = (xs.size() + kChunk - 1) / kChunk;
  for (std::size_t c = 0; c < chunks; ++c) start(xs.size() * c / chunks, xs.size() * (c + 1) / chunks);
  hd.clear();
  hd.shrink_to_fit();
  sh.run(std::move(first), threads);
  if (stats) {
    stats->classes = sh.classes;
    stats->class_rows = sh.class_rows;
    stats->point_rows = sh.point_rows;
    stats->exact_rows = sh.exact_rows;
  }
  return out;
}

std::size_t rational_bits(const Rational& q) {
  std::size_t a = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t b = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(a, b);
}

NetComplexity relunet_complexity(const ReluNet& net) {
  NetComplexity c;
  c.depth = net.layers.size();
  for (const auto& L : net.layers) {
    c.parameters += L.W.rows() * L.W.cols() + L.b.size();
    c.width = std::max(c.width, L.W.rows());
    for (const auto& w : L.W.data())
      if (sgn(w) != 0) {
        ++c.nonzero_parameters;
        c.bit_complexity = std::max(c.bit_complexity, rational_bits(w));
      }
    for (const auto& w : L.b)
      if (sgn(w) != 0) {
        ++c.nonzero_parameters;
        c.bit_complexity = std::max(c.bit_complexity, rational_bits(w));
      }
  }
  return c;
}

NetComplexity complexity_sequential(const NetComplexity& a, const NetComplexity& b) {
  NetComplexity c;
  c.parameters = a.parameters + b.parameters;
  c.nonzero_parameters = a.nonzero_parameters + b.nonzero_parameters;
  c.depth = a.depth + b.depth;
  c.width = std::max(a.width, b.width);
  c.bit_complexity = std::max(a.bit_complexity, b.bit_complexity);
  return c;
}

// ---- Lin -------------------------------------------------------------------------------------------
Lin& Lin::operator+=(const Lin& o) {
  for (const auto& [j, v] : o.c) {
    auto it = c.find(j);
    if (it == c.end()) c.emplace(j, v);
    else {
      it->second += v;
      if (sgn(it->second) == 0) c.erase(it);
    }
  }
  bias += o.bias;
  return *this;
}
Lin& Lin::operator-=(const Lin& o) {
  Lin neg = o;
  neg *= Rational(-1);
  return *this += neg;
}
Lin& Lin::operator*=(const Rational& s) {
  if (sgn(s) == 0) {
    c.clear();
    bias = 0;
    return *this;
  }
  for (auto& kv : c) kv.second *= s;
  bias *= s;
  return *this;
}

// ---- builder ---------------------------------------------------------------------------------------
NetBuilder::NetBuilder(std::size_t in_dim) : cur_dim_(in_dim) { net_.in_dim = in_dim; }

std::vector<Lin> NetBuilder::inputs() const {
  std::vector<Lin> v;
  for (std::size_t i = 0; i < cur_dim_; ++i) v.push_back(Lin::var(i));
  return v;
}

namespace {
ReluLayer layer_from(const std::vector<const Lin*>& rows, std::size_t in_dim) {
  ReluLayer L;
  L.W = QMatrix(rows.size(), in_dim, Rational(0));
  L.b.assign(rows.size(), Rational(0));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& [j, v] : rows[i]->c) {
      if (j >= in_dim) throw std::logic_error("NetBuilder: a Lin refers to a unit of an older layer");
      L.W(i, j) = v;
    }
    L.b[i] = rows[i]->bias;
  }
  return L;
}
}  // namespace

std::vector<Lin> NetBuilder::relu(const std::vector<Lin>& pre, const std::vector<Lin*>& carry) {
  std::vector<const Lin*> rows;
  for (const auto& l : pre) rows.push_back(&l);
  std::vector<Lin*> carried;
  for (Lin* l : carry)
    if (!l->is_constant()) {
      rows.push_back(l);
      carried.push_back(l);
    }
  net_.layers.push_back(layer_from(rows, cur_dim_));
  cur_dim_ = rows.size();
  std::vector<Lin> out;
  for (std::size_t i = 0; i < pre.size(); ++i) out.push_back(Lin::var(i));
  for (std::size_t i = 0; i < carried.size(); ++i) *carried[i] = Lin::var(pre.size() + i);
  return out;
}

ReluNet NetBuilder::finish(const std::vector<Lin>& outputs) {
  std::vector<const Lin*> rows;
  for (const auto& l : outputs) rows.push_back(&l);
  net_.layers.push_back(layer_from(rows, cur_dim_));
  cur_dim_ = outputs.size();
  return std::move(net_);
}

}  // namespace memcert::ks25
