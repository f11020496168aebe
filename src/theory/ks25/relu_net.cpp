// Exact ReLU networks: evaluation, complexity, builder.
#include "memcert/theory/ks25/relu_net.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
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
