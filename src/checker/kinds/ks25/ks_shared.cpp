// ks25's token-wise network on many points at once, sharing the work between points (ks_network.hpp,
// ks_eval_shared).
//
// When every row of the first layer is a multiple lambda_i g of one vector g, the network is a function of
// the scalar t = g . x alone. The points are sorted by t (equal t: one point), and every neuron's values
// over the sorted points are kept as a list of pieces: a range [s, e) of sorted points on which the value
// is a t + b with dyadic a, b. A layer combines its inputs' pieces over their common refinement (exact
// dyadic arithmetic per piece, not per point); a ReLU keeps, zeroes, or splits a piece at the point where
// a t + b changes sign (a t + b is monotone on sorted t, so its sign is decided exactly at the piece's ends
// and the split point found by bisection, each test an exact rational sign). Adjacent pieces with equal
// (a, b) are merged. A neuron that copies an input known to be >= 0 shares that input's list. The values
// at every point are the values of plain layer-by-layer evaluation: on each piece the network restricted
// to its points is the affine map the pieces describe, exactly.
//
// When the first layer is not of that form, a layer is not dyadic, or the pieces of a layer outnumber
// kMaxPiecesPerPoint times the points (a network that fragments, e.g. built so every point differs), the
// values at that layer are written out point by point and the rest is evaluated by ks_eval_block.
#include <algorithm>
#include <climits>
#include <memory>
#include <thread>

#include "kernel/float_kernels.hpp"
#include "kinds/ks25/ks_network.hpp"

namespace memcert_checker {

namespace ks_shared {

__extension__ typedef __int128 s128;
__extension__ typedef unsigned __int128 u128;

constexpr std::size_t kMaxPiecesPerPoint = 3;

struct Piece {
  std::size_t end = 0;  // exclusive; the piece starts where the previous one ends (or at 0)
  KsDy a, b;            // value a t + b
};
using Col = std::shared_ptr<const std::vector<Piece>>;

int nbits(s128 v) {
  const u128 a = v < 0 ? u128(0) - u128(v) : u128(v);
  const auto hi = static_cast<std::uint64_t>(a >> 64), lo = static_cast<std::uint64_t>(a);
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}
int tz(s128 v) {  // v != 0
  const u128 a = u128(v);
  const auto lo = static_cast<std::uint64_t>(a);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<std::uint64_t>(a >> 64));
}
bool is_zero(const KsDy& v) { return !v.big && v.m == 0; }
bool same(const KsDy& x, const KsDy& y) {
  return x.big == y.big && x.e == y.e && (x.big ? x.M == y.M : x.m == y.m);
}
void set_zero(KsDy& v) { v.big = false; v.m = 0; v.e = 0; }
int sign(const KsDy& v) { return v.big ? sgn(v.M) : (v.m > 0) - (v.m < 0); }
void mpz_of(const KsDy& v, mpz_class& z) {
  if (v.big) z = v.M;
  else z = static_cast<long>(v.m);
}
// acc 2^-E, normalized (acc is scratch: it keeps its storage; a GMP result is shifted straight into o.M).
void normalize(mpz_class& acc, long E, KsDy& o) {
  if (sgn(acc) == 0) { set_zero(o); return; }
  const long k = std::min(static_cast<long>(mpz_scan1(acc.get_mpz_t(), 0)), E);
  const auto shift = static_cast<mp_bitcnt_t>(k);  // exact: acc has k trailing zero bits
  o.e = E - k;
  if (mpz_sizeinbase(acc.get_mpz_t(), 2) > shift + 64) {
    mpz_fdiv_q_2exp(o.M.get_mpz_t(), acc.get_mpz_t(), shift);
    o.big = true;
    return;
  }
  mpz_fdiv_q_2exp(acc.get_mpz_t(), acc.get_mpz_t(), shift);
  if (acc.fits_slong_p()) { o.big = false; o.m = acc.get_si(); }
  else { o.big = true; mpz_set(o.M.get_mpz_t(), acc.get_mpz_t()); }
}
mpq_class to_q(const KsDy& v) {
  mpq_class q;
  if (v.big) q = mpq_class(v.M);
  else q = mpq_class(static_cast<long>(v.m));
  if (v.e > 0) mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(v.e));
  return q;
}

// GMP integers reused from piece to piece within a neuron (no allocation once they have grown).
struct Scratch {
  mpz_class acc, t;
};
// out = bias + sum_j w_j v_j (v_j = *vals[j]), exactly: machine integers when every number fits (64-bit
// values, 128-bit sums, every shift and sum checked), else GMP integers. Same scheme as layer_dy.
void affine(const KsDy& bias, const std::vector<const KsTerm*>& terms, const std::vector<const KsDy*>& vals,
            KsDy& out, Scratch& scratch) {
  long E = bias.e;
  bool big = bias.big;
  for (std::size_t j = 0; j < terms.size(); ++j) {
    if (is_zero(*vals[j])) continue;
    E = std::max(E, terms[j]->dw.e + vals[j]->e);
    big = big || vals[j]->big || terms[j]->dw.big;
  }
  if (!big) {
    s128 s = 0;
    bool ok = true;
    auto add = [&](s128 p, long shift) {
      if (p == 0 || !ok) return;
      if (shift > 0) {
        if (nbits(p) + shift > 125) { ok = false; return; }
        p *= s128(1) << shift;
      }
      if (__builtin_add_overflow(s, p, &s)) ok = false;
    };
    add(static_cast<s128>(bias.m), E - bias.e);
    for (std::size_t j = 0; j < terms.size(); ++j)
      if (!is_zero(*vals[j])) add(static_cast<s128>(terms[j]->dw.m) * vals[j]->m, E - terms[j]->dw.e - vals[j]->e);
    if (ok) {
      if (s == 0) { set_zero(out); return; }
      const long k = std::min<long>(tz(s), E);
      s >>= k;
      out.e = E - k;
      if (s >= INT64_MIN && s <= INT64_MAX) { out.big = false; out.m = static_cast<std::int64_t>(s); return; }
      const bool neg = s < 0;
      const u128 a = neg ? u128(0) - u128(s) : u128(s);
      mpz_class& acc = scratch.acc;
      acc = static_cast<unsigned long>(static_cast<std::uint64_t>(a >> 64));
      mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), 64);
      acc += static_cast<unsigned long>(static_cast<std::uint64_t>(a));
      if (neg) acc = -acc;
      normalize(acc, out.e, out);
      return;
    }
  }
  // acc += w v 2^shift for every term: GMP operands read in place (no copy of their limbs); a machine-size
  // factor multiplies as one limb straight into acc (mpz_addmul_ui / mpz_submul_ui), after the shift.
  mpz_class &acc = scratch.acc, &t = scratch.t;
  mpz_of(bias, acc);
  mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(E - bias.e));
  for (std::size_t j = 0; j < terms.size(); ++j) {
    const KsDy &w = terms[j]->dw, &v = *vals[j];
    if (is_zero(v)) continue;
    const auto shift = static_cast<mp_bitcnt_t>(E - w.e - v.e);
    if (w.big && v.big) {
      mpz_mul(t.get_mpz_t(), w.M.get_mpz_t(), v.M.get_mpz_t());
    } else {
      const KsDy &g = w.big ? w : v, &f = w.big ? v : w;  // f: a machine integer
      if (!g.big) t = static_cast<long>(g.m);
      const mpz_srcptr gz = g.big ? g.M.get_mpz_t() : t.get_mpz_t();
      const auto m = static_cast<long>(f.m);
      const unsigned long mag = m < 0 ? 0UL - static_cast<unsigned long>(m) : static_cast<unsigned long>(m);
      mpz_srcptr src = gz;
      if (shift > 0) {
        mpz_mul_2exp(t.get_mpz_t(), gz, shift);
        src = t.get_mpz_t();
      }
      if (m < 0) mpz_submul_ui(acc.get_mpz_t(), src, mag);
      else mpz_addmul_ui(acc.get_mpz_t(), src, mag);
      continue;
    }
    mpz_mul_2exp(t.get_mpz_t(), t.get_mpz_t(), shift);
    acc += t;
  }
  normalize(acc, E, out);
}

// The sorted distinct points' t values, and the sign of a t + b at one of them.
struct Points {
  std::vector<mpq_class> t;  // strictly increasing
  // sign(a t + b) = sign(a_m p 2^(E - a_e) + b_m q 2^(E - b_e)) for t = p / q (q > 0), E = max(a_e, b_e):
  // integers only (no rational reduction, no allocation once the scratch has grown).
  int sign_at(const KsDy& a, const KsDy& b, std::size_t r) const {
    thread_local mpz_class x, y;
    const long E = std::max(a.e, b.e);
    mpz_of(a, x);
    mpz_mul(x.get_mpz_t(), x.get_mpz_t(), mpq_numref(t[r].get_mpq_t()));
    mpz_mul_2exp(x.get_mpz_t(), x.get_mpz_t(), static_cast<mp_bitcnt_t>(E - a.e));
    mpz_of(b, y);
    mpz_mul(y.get_mpz_t(), y.get_mpz_t(), mpq_denref(t[r].get_mpq_t()));
    mpz_mul_2exp(y.get_mpz_t(), y.get_mpz_t(), static_cast<mp_bitcnt_t>(E - b.e));
    x += y;
    return sgn(x);
  }
};

void push(std::vector<Piece>& out, std::size_t end, KsDy&& a, KsDy&& b) {
  if (!out.empty() && same(out.back().a, a) && same(out.back().b, b)) { out.back().end = end; return; }
  out.push_back(Piece{end, std::move(a), std::move(b)});
}
void push_zero(std::vector<Piece>& out, std::size_t end) { push(out, end, KsDy(), KsDy()); }

// ReLU(a t + b) on the sorted points [s, e), appended to out (a and b are moved from).
void push_relu(const Points& P, std::vector<Piece>& out, std::size_t s, std::size_t e, KsDy& a, KsDy& b) {
  const int sa = sign(a);
  if (sa == 0) {
    if (sign(b) < 0) push_zero(out, e);
    else push(out, e, std::move(a), std::move(b));
    return;
  }
  // Increasing (a > 0): negative up to some point, then >= 0; decreasing: the reverse.
  const int first = P.sign_at(a, b, s), last = P.sign_at(a, b, e - 1);
  if (first >= 0 && last >= 0) { push(out, e, std::move(a), std::move(b)); return; }
  if (first <= 0 && last <= 0) { push_zero(out, e); return; }
  // The sign changes strictly inside: bisect for the first point of the second part.
  std::size_t lo = s, hi = e - 1;  // part(lo) = first part, part(hi) = second part
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int sm = P.sign_at(a, b, mid);
    if (sa > 0 ? sm < 0 : sm >= 0) lo = mid;
    else hi = mid;
  }
  if (sa > 0) {
    push_zero(out, hi);
    push(out, e, std::move(a), std::move(b));
  } else {
    push(out, hi, std::move(a), std::move(b));
    push_zero(out, e);
  }
}

// One neuron of a dyadic layer over its inputs' pieces, on the sorted points [lo, hi).
Col neuron(const Points& P, const KsLayer& L, std::size_t i, bool relu, const std::vector<Col>& in,
           const std::vector<char>& nonneg, std::size_t lo, std::size_t hi) {
  const std::vector<KsTerm>& row = L.rows[i];
  const KsDy& bias = L.dbias[i];
  // A copy of an input (weight 1, bias 0) shares its list when the ReLU cannot change it.
  if (row.size() == 1 && is_zero(bias) && !row[0].dw.big && row[0].dw.m == 1 && row[0].dw.e == 0 &&
      (!relu || nonneg[row[0].col]))
    return in[row[0].col];
  auto out = std::make_shared<std::vector<Piece>>();
  std::vector<const KsTerm*> terms;
  for (const KsTerm& t : row) terms.push_back(&t);
  std::vector<std::size_t> at(terms.size(), 0);
  std::vector<const KsDy*> va(terms.size()), vb(terms.size());
  static const KsDy zero;
  KsDy a, b;
  Scratch scratch;
  std::size_t most = 0;
  for (const KsTerm* t : terms) most = std::max(most, in[t->col]->size());
  out->reserve(most);  // a guess (no copies of pieces while it holds)
  std::size_t s = lo;
  while (s < hi) {
    std::size_t e = hi;
    bool flat = true;  // every input constant here: the slope is 0 (a sum of zeros), no arithmetic needed
    for (std::size_t j = 0; j < terms.size(); ++j) {
      const Piece& p = (*in[terms[j]->col])[at[j]];
      e = std::min(e, p.end);
      va[j] = &p.a;
      vb[j] = &p.b;
      flat = flat && is_zero(p.a);
    }
    if (flat) set_zero(a);
    else affine(zero, terms, va, a, scratch);
    affine(bias, terms, vb, b, scratch);
    if (relu) push_relu(P, *out, s, e, a, b);
    else push(*out, e, std::move(a), std::move(b));
    for (std::size_t j = 0; j < terms.size(); ++j)
      if ((*in[terms[j]->col])[at[j]].end == e) ++at[j];
    s = e;
  }
  return out;
}

// The network on the sorted points [lo, hi) (layer 0: lambda_i t + b_i, then piece by piece, then point
// by point from the layer where the pieces outnumber kMaxPiecesPerPoint per point or a layer is not
// dyadic): vals[r] for r in [lo, hi), the values after the last layer.
void run_range(const KsNet& net, const Points& P, const std::vector<KsDy>& lambda, std::size_t lo, std::size_t hi,
               std::vector<QRow>& vals, KsSharedStats& st) {
  const std::size_t D = net.layers.size(), M = hi - lo;
  const KsLayer& L0 = net.layers[0];
  st.pointwise_from = D;
  std::vector<Col> cols(L0.out);
  std::vector<char> nonneg(L0.out, 0);
  {
    const bool relu = D > 1;
    for (std::size_t i = 0; i < L0.out; ++i) {
      auto c = std::make_shared<std::vector<Piece>>();
      KsDy a = lambda[i], b = L0.dbias[i];
      if (relu) push_relu(P, *c, lo, hi, a, b);
      else push(*c, hi, std::move(a), std::move(b));
      cols[i] = c;
      nonneg[i] = relu;
    }
  }
  std::size_t l = 1;
  for (; l < D; ++l) {
    const KsLayer& L = net.layers[l];
    if (!L.dyadic) break;
    const bool relu = l + 1 < D;
    std::vector<Col> next(L.out);
    std::size_t pieces = 0;
    for (std::size_t i = 0; i < L.out; ++i) {
      next[i] = neuron(P, L, i, relu, cols, nonneg, lo, hi);
      pieces += next[i]->size();
    }
    st.max_pieces = std::max(st.max_pieces, pieces);
    cols = std::move(next);
    nonneg.assign(L.out, relu);
    if (pieces > kMaxPiecesPerPoint * M + 64) { ++l; break; }
  }
  // The values after layer l - 1 at every point of the range.
  for (std::size_t r = lo; r < hi; ++r) vals[r].resize(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    std::size_t r = lo;
    for (const Piece& p : *cols[i]) {
      const mpq_class a = to_q(p.a), b = to_q(p.b);
      for (; r < p.end; ++r) {
        if (sgn(a) == 0) vals[r][i] = b;
        else vals[r][i] = a * P.t[r] + b;
      }
    }
  }
  cols.clear();
  if (l < D) {
    st.pointwise_from = l;
    std::vector<const QRow*> pts(M);
    for (std::size_t r = 0; r < M; ++r) pts[r] = &vals[lo + r];
    std::vector<QRow> o;
    ks_eval_many(net, pts, o, l, 1);
    for (std::size_t r = 0; r < M; ++r) vals[lo + r] = std::move(o[r]);
  }
}

}  // namespace ks_shared

void ks_eval_many(const KsNet& net, const std::vector<const QRow*>& xs, std::vector<QRow>& out, std::size_t first,
                  unsigned threads) {
  out.assign(xs.size(), QRow());
  constexpr std::size_t kBlock = 64;
  const std::size_t blocks = (xs.size() + kBlock - 1) / kBlock;
  auto run = [&](std::size_t b) {
    const std::size_t at = b * kBlock, count = std::min(kBlock, xs.size() - at);
    ks_eval_block(net, xs.data() + at, count, out.data() + at, first);
  };
  threads = std::max(1u, threads);
  if (threads > 1 && blocks > 1) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t b = t; b < blocks; b += threads) run(b);
      });
    for (auto& th : pool) th.join();
  } else {
    for (std::size_t b = 0; b < blocks; ++b) run(b);
  }
}

std::vector<QRow> ks_eval_shared(const KsNet& net, const std::vector<const QRow*>& xs, unsigned threads,
                                 KsSharedStats* stats, std::size_t min_range) {
  using namespace ks_shared;
  KsSharedStats st;
  std::vector<QRow> result;
  auto pointwise = [&](const std::vector<const QRow*>& pts, std::size_t from) {
    st.pointwise_from = from;
    std::vector<QRow> o;
    ks_eval_many(net, pts, o, from, threads);
    return o;
  };
  const std::size_t D = net.layers.size();
  st.pointwise_from = D;
  // The first layer's direction g and each row's multiple lambda_i (dyadic), when there is one.
  bool shared = D > 0 && net.layers[0].dyadic && !xs.empty();
  const KsLayer* L0 = D > 0 ? &net.layers[0] : nullptr;
  const std::vector<KsTerm>* g = nullptr;
  std::vector<KsDy> lambda(L0 ? L0->out : 0);
  mpz_class scale = 1;  // t = (g . x) / scale, lambda_i = scale * (row_i / g): dyadic
  if (shared) {
    for (const auto& row : L0->rows)
      if (!row.empty()) { g = &row; break; }
    std::vector<mpq_class> ratio(L0->out, mpq_class(0));
    for (std::size_t i = 0; i < L0->out && shared && g; ++i) {
      const auto& row = L0->rows[i];
      if (row.empty()) continue;  // lambda_i = 0
      if (row.size() != g->size()) { shared = false; break; }
      ratio[i] = row[0].w / (*g)[0].w;
      for (std::size_t j = 0; j < row.size() && shared; ++j)
        shared = row[j].col == (*g)[j].col && row[j].w == ratio[i] * (*g)[j].w;
      mpz_class odd = ratio[i].get_den();
      mpz_fdiv_q_2exp(odd.get_mpz_t(), odd.get_mpz_t(), mpz_scan1(odd.get_mpz_t(), 0));
      mpz_lcm(scale.get_mpz_t(), scale.get_mpz_t(), odd.get_mpz_t());
    }
    for (std::size_t i = 0; i < L0->out && shared; ++i)
      if (!ks_dyadic(mpq_class(ratio[i] * scale), lambda[i])) shared = false;  // dyadic by the choice of scale
    for (const QRow* x : xs)
      if (x->size() != L0->in) shared = false;
  }
  if (!shared) {
    result = pointwise(xs, 0);
    if (stats) *stats = st;
    return result;
  }
  // t = g . x per point; the distinct values sorted.
  std::vector<mpq_class> t(xs.size(), mpq_class(0));
  if (g)
    for (std::size_t p = 0; p < xs.size(); ++p) {
      for (const KsTerm& term : *g) t[p] += term.w * (*xs[p])[term.col];
      if (scale != 1) t[p] /= scale;
    }
  std::vector<std::size_t> ord(xs.size());
  for (std::size_t p = 0; p < ord.size(); ++p) ord[p] = p;
  std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return t[a] < t[b]; });
  Points P;
  std::vector<std::size_t> rank(xs.size());
  for (std::size_t q = 0; q < ord.size(); ++q) {
    if (P.t.empty() || P.t.back() != t[ord[q]]) P.t.push_back(t[ord[q]]);
    rank[ord[q]] = P.t.size() - 1;
  }
  t.clear();
  t.shrink_to_fit();
  const std::size_t M = P.t.size();
  st.points = M;
  // The sorted points in contiguous ranges, each range through the whole network on its own (a piece is
  // cut at a range's ends, nothing else changes: every value is exact), the ranges on `threads` threads.
  const std::size_t ranges = threads <= 1 ? 1 : std::clamp<std::size_t>(M / std::max<std::size_t>(min_range, 1), 1, 2 * threads);
  std::vector<QRow> vals(M);
  std::vector<KsSharedStats> part(ranges);
  parallel_for(ranges, std::min<unsigned>(threads, static_cast<unsigned>(ranges)), [&](std::size_t c, unsigned) {
    run_range(net, P, lambda, M * c / ranges, M * (c + 1) / ranges, vals, part[c]);
  });
  for (const KsSharedStats& q : part) {
    st.max_pieces = std::max(st.max_pieces, q.max_pieces);
    st.pointwise_from = std::min(st.pointwise_from, q.pointwise_from);
  }
  result.resize(xs.size());
  for (std::size_t p = 0; p < xs.size(); ++p) result[p] = vals[rank[p]];
  st.shared = true;
  if (stats) *stats = st;
  return result;
}

}  // namespace memcert_checker
