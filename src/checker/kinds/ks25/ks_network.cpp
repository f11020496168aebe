// ks25's token-wise networks: reading (with the certificate's checksum) and exact evaluation.
#include "kinds/ks25/ks_network.hpp"

#include <algorithm>
#include <climits>

namespace memcert_checker {

std::string ks_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

std::size_t ks_qbits(const mpq_class& q) {
  std::size_t a = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t b = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(a, b);
}

bool ks_read_net(const Value& v, const std::string& where, std::size_t in, KsNet& net, mpq_class& checksum,
                 unsigned long& pos, std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array of layers"; return false; }
  std::size_t cur = in;
  for (std::size_t l = 0; l < v.size(); ++l) {
    const std::string w = ks_at(where, l);
    const Value* W = member(*v.at(l), w, "W", json::Type::Array, why);
    if (!W) return false;
    const Value* b = member(*v.at(l), w, "b", json::Type::Array, why);
    if (!b) return false;
    KsLayer L;
    L.in = cur;
    L.out = W->size();
    if (L.out == 0) { why = w + ".W: a layer needs at least one row"; return false; }
    L.rows.resize(L.out);
    QRow row;
    for (std::size_t i = 0; i < L.out; ++i) {
      if (!read_rational_vector(*W->at(i), ks_at(w + ".W", i), cur, row, why)) return false;
      for (std::size_t j = 0; j < cur; ++j) {
        ++pos;
        if (sgn(row[j]) != 0) {
          checksum += row[j] * mpq_class(pos);
          ++net.nonzero;
          net.bits = std::max(net.bits, ks_qbits(row[j]));
          KsTerm term{j, row[j], {}};
          if (!ks_dyadic(row[j], term.dw)) L.dyadic = false;
          L.rows[i].push_back(std::move(term));
        }
      }
    }
    if (!read_rational_vector(*b, w + ".b", L.out, L.bias, why)) return false;
    L.dbias.resize(L.out);
    for (std::size_t i = 0; i < L.out; ++i)
      if (!ks_dyadic(L.bias[i], L.dbias[i])) L.dyadic = false;
    for (const auto& x : L.bias) {
      ++pos;
      if (sgn(x) != 0) {
        checksum += x * mpq_class(pos);
        ++net.nonzero;
        net.bits = std::max(net.bits, ks_qbits(x));
      }
    }
    net.parameters += L.out * cur + L.out;
    net.width = std::max(net.width, L.out);
    cur = L.out;
    net.layers.push_back(std::move(L));
  }
  return true;
}

std::size_t ks_net_out(const KsNet& n, std::size_t in) { return n.layers.empty() ? in : n.layers.back().out; }

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

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
void to_mpz(const KsDy& v, mpz_class& z) {
  if (v.big) z = v.M;
  else z = static_cast<long>(v.m);
}
void from_mpz(mpz_class& acc, long E, KsDy& o) {
  if (sgn(acc) == 0) { o.big = false; o.m = 0; o.e = 0; return; }
  const long tz = static_cast<long>(mpz_scan1(acc.get_mpz_t(), 0)), k = std::min(tz, E);
  if (k > 0) mpz_fdiv_q_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(k));  // exact
  o.e = E - k;
  if (acc.fits_slong_p()) { o.big = false; o.m = acc.get_si(); }
  else { o.big = true; mpz_swap(o.M.get_mpz_t(), acc.get_mpz_t()); }
}
mpq_class to_mpq(const KsDy& v) {
  mpq_class q;
  if (v.big) q = mpq_class(v.M);
  else q = mpq_class(static_cast<long>(v.m));
  if (v.e > 0) mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(v.e));
  return q;
}

void layer_q(const KsLayer& L, bool relu, const QRow& h, QRow& o) {
  mpq_class t;
  o.assign(L.out, mpq_class(0));
  for (std::size_t i = 0; i < L.out; ++i) {
    o[i] = L.bias[i];
    for (const KsTerm& term : L.rows[i]) {
      t = term.w * h[term.col];
      o[i] += t;
    }
    if (relu && sgn(o[i]) < 0) o[i] = 0;
  }
}

// Row i: E = max(e(b), e(w) + e(h)); out = (b 2^(E - e(b)) + sum w h 2^(E - e(w) - e(h))) 2^-E, normalized.
// Machine route: |w|, |h| < 2^63, so |w h| < 2^126; a shift only when the result stays below 2^126, every
// sum checked; otherwise (or with a value already in GMP) the row in GMP integers.
void layer_dy(const KsLayer& L, bool relu, const std::vector<KsDy>& h, std::vector<KsDy>& o) {
  o.resize(L.out);
  thread_local mpz_class acc, t, z;  // reused: no allocation per row
  for (std::size_t i = 0; i < L.out; ++i) {
    const KsDy& b = L.dbias[i];
    long E = b.e;
    bool big = b.big;
    for (const KsTerm& term : L.rows[i]) {
      const KsDy& v = h[term.col];
      if (!v.big && v.m == 0) continue;
      E = std::max(E, term.dw.e + v.e);
      big = big || v.big || term.dw.big;
    }
    KsDy& out = o[i];
    if (!big) {
      i128 s = 0;
      bool ok = true;
      auto add = [&](i128 p, long shift) {
        if (p == 0 || !ok) return;
        if (shift > 0) {
          if (bits128(p) + shift > 125) { ok = false; return; }
          p *= i128(1) << shift;
        }
        if (__builtin_add_overflow(s, p, &s)) ok = false;
      };
      add(static_cast<i128>(b.m), E - b.e);
      for (const KsTerm& term : L.rows[i]) {
        const KsDy& v = h[term.col];
        if (v.m != 0) add(static_cast<i128>(term.dw.m) * v.m, E - term.dw.e - v.e);
      }
      if (ok) {
        if (relu && s < 0) s = 0;
        if (s == 0) { out.big = false; out.m = 0; out.e = 0; continue; }
        const long k = std::min<long>(ctz128(s), E);
        s >>= k;
        out.e = E - k;
        if (s >= INT64_MIN && s <= INT64_MAX) { out.big = false; out.m = static_cast<std::int64_t>(s); continue; }
        // 64 < bits <= 126: through GMP (two halves).
        const bool neg = s < 0;
        const u128 a = neg ? u128(0) - u128(s) : u128(s);
        acc = static_cast<unsigned long>(static_cast<std::uint64_t>(a >> 64));
        mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), 64);
        acc += static_cast<unsigned long>(static_cast<std::uint64_t>(a));
        if (neg) acc = -acc;
        from_mpz(acc, out.e, out);
        continue;
      }
    }
    to_mpz(b, acc);
    mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(E - b.e));
    for (const KsTerm& term : L.rows[i]) {
      const KsDy& v = h[term.col];
      if (!v.big && v.m == 0) continue;
      to_mpz(term.dw, t);
      to_mpz(v, z);
      t *= z;
      mpz_mul_2exp(t.get_mpz_t(), t.get_mpz_t(), static_cast<mp_bitcnt_t>(E - term.dw.e - v.e));
      acc += t;
    }
    if (relu && sgn(acc) < 0) acc = 0;
    from_mpz(acc, E, out);
  }
}

}  // namespace

bool ks_dyadic(const mpq_class& q, KsDy& out) {
  const mpz_srcptr den = q.get_den_mpz_t();
  const std::size_t k = mpz_scan1(den, 0);
  if (mpz_sizeinbase(den, 2) != k + 1) return false;
  out.e = static_cast<long>(k);
  if (q.get_num().fits_slong_p()) { out.big = false; out.m = q.get_num().get_si(); }
  else { out.big = true; out.M = q.get_num(); }
  return true;
}

QRow ks_eval_rational(const KsNet& net, const QRow& x) {
  QRow h = x, o;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    layer_q(net.layers[l], l + 1 < net.layers.size(), h, o);
    std::swap(h, o);
  }
  return h;
}

void ks_eval_block(const KsNet& net, const QRow* const* xs, std::size_t count, QRow* out, std::size_t first) {
  struct State {
    QRow hq, oq;
    std::vector<KsDy> hd, od;
    bool dy = false;  // the values are in hd (else hq)
  };
  std::vector<State> st(count);
  for (std::size_t p = 0; p < count; ++p) st[p].hq = *xs[p];
  auto back = [](State& S) {
    S.hq.resize(S.hd.size());
    for (std::size_t j = 0; j < S.hd.size(); ++j) S.hq[j] = to_mpq(S.hd[j]);
    S.dy = false;
  };
  for (std::size_t l = first; l < net.layers.size(); ++l) {
    const KsLayer& L = net.layers[l];
    const bool relu = l + 1 < net.layers.size();
    for (State& S : st) {
      if (L.dyadic && !S.dy) {
        S.hd.resize(S.hq.size());
        S.dy = true;
        for (std::size_t j = 0; j < S.hq.size() && S.dy; ++j) S.dy = ks_dyadic(S.hq[j], S.hd[j]);
      }
      if (L.dyadic && S.dy) {
        layer_dy(L, relu, S.hd, S.od);
        std::swap(S.hd, S.od);
        continue;
      }
      if (S.dy) back(S);
      layer_q(L, relu, S.hq, S.oq);
      std::swap(S.hq, S.oq);
    }
  }
  for (std::size_t p = 0; p < count; ++p) {
    if (st[p].dy) back(st[p]);
    out[p] = std::move(st[p].hq);
  }
}

QRow ks_eval(const KsNet& net, const QRow& x) {
  const QRow* p = &x;
  QRow out;
  ks_eval_block(net, &p, 1, &out);
  return out;
}

}  // namespace memcert_checker
