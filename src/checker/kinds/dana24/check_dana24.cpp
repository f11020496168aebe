// kind "dana24": the attention-only Transformer of eq. (2) (docs/papers/dana24.md) memorizes every association
// of the certificate. Everything is recomputed from the exact weights with MPFR under directed rounding.
//
//   {"kind":"dana24","claim":"dana24/theorem-1-assoc"|"dana24/corollary-1","N","S","d","dh","H","T",
//    "sequences":[T][S] tokens in [0,N),"next":[T] tokens in [0,N),
//    "weights":{"e":[N][d],"pos":[S][d],"WU":[N][d],"WQ":[H][dh][d],"WK":[H][dh][d],"WV":[H][dh][d],
//               "WO":[H][d][dh]}  (exact strings; each must be a dyadic rational of <= 128 significant bits),
//    "memorized_count":T,"min_margin":"q" (> 0),"parameters":d(S+2N+4 dh H),
//    "parameters_remark2"?: d(S+2N+2(dh+1)H) (only for rank-one heads: rows 1.. of every W_Q^h, W_K^h zero)}
//
// The model: x(t,s) = e(t_s) + pos_s; A^h(t) = sum_s softmax_s((W_Q^h x(t,S)) . (W_K^h x(t,s))) x(t,s);
// T(t) = W_U (x(t,S) + sum_h W_O^h W_V^h A^h(t)). For every t the checker encloses T(t) and requires
// lower(T(t)_{next_t}) - upper(T(t)_j) >= min_margin > 0 for every j != next_t (a strict arg-max).
// Also: sequences pairwise distinct; corollary-1 needs d = 2 and d_h <= 2; every claim needs d_h <= d
// (paper footnote 1); the counts are recomputed.
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "kinds/dana24/dana24_forward.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {
namespace {

constexpr mpfr_prec_t kDana24Prec = 128;  // weights: exact dyadics of at most this many significant bits
// The forward pass's working precision. check_dana24 raises it (128, 256, 512) for a sequence whose margin
// is not certified at 128 bits: large output weights of an ill-conditioned solve cancel, and every bit
// of precision lost there is a bit of margin lost. Any precision gives a rigorous enclosure.
thread_local mpfr_prec_t g_work_prec = kDana24Prec;

std::string dana24_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// A dense array of exact MPFR numbers (weights), owning its storage.
class MpArray {
 public:
  explicit MpArray(std::size_t n = 0) : v_(n) {
    for (auto& x : v_) mpfr_init2(&x, kDana24Prec), mpfr_set_zero(&x, 1);
  }
  MpArray(const MpArray&) = delete;
  MpArray& operator=(const MpArray&) = delete;
  MpArray(MpArray&& o) noexcept : v_(std::move(o.v_)) { o.v_.clear(); }
  ~MpArray() { release(); }
  // Drops the contents and holds n zeros.
  void reset(std::size_t n) {
    release();
    v_.resize(n);
    for (auto& x : v_) mpfr_init2(&x, kDana24Prec), mpfr_set_zero(&x, 1);
  }
  mpfr_ptr operator[](std::size_t i) { return &v_[i]; }
  mpfr_srcptr operator[](std::size_t i) const { return &v_[i]; }
  std::size_t size() const { return v_.size(); }

 private:
  void release() {
    for (auto& x : v_) mpfr_clear(&x);
    v_.clear();
  }
  std::vector<__mpfr_struct> v_;
};

// `where` followed by [i] for each index of `path`: a field's name, spelled out only for a reason.
std::string dana24_path(const std::string& where, const std::vector<std::size_t>& path) {
  std::string w = where;
  for (std::size_t i : path) w = dana24_at(w, i);
  return w;
}

// Every level of the nested array at `v` (at `path` below the tensor) has the length `shape` gives it, in
// depth-first order; the first that does not is named.
bool tensor_shape(const Value* v, const std::string& where, const std::vector<std::size_t>& shape,
                  std::vector<std::size_t>& path, std::string& why) {
  const std::size_t level = path.size();
  if (level == shape.size()) return true;
  if (!v || v->type != json::Type::Array || v->size() != shape[level]) {
    why = dana24_path(where, path) + ": expected a list of " + std::to_string(shape[level]) + " entries";
    return false;
  }
  if (level + 1 == shape.size()) return true;  // its entries are the leaves
  for (std::size_t i = 0; i < v->size(); ++i) {
    path.push_back(i);
    const json::Item e = v->at(i);
    const bool ok = tensor_shape(&*e, where, shape, path, why);
    path.pop_back();
    if (!ok) return false;
  }
  return true;
}

// Reads a nested array of exact numbers with the given shape into `out` (row-major); each must be exact
// at kDana24Prec bits. The shape is checked whole before any entry is read.
bool read_tensor(const Value* v, const std::string& where, const std::vector<std::size_t>& shape, MpArray& out,
                 std::string& why) {
  std::size_t total = 1;
  for (std::size_t s : shape) total *= s;
  out.reset(total);
  mpq_class q;
  std::vector<std::size_t> path;
  if (!tensor_shape(v, where, shape, path, why)) return false;
  // The name of leaf `pos` (row-major indices), for a reason.
  auto leaf_name = [&](std::size_t pos) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) idx[k] = pos % shape[k], pos /= shape[k];
    return dana24_path(where, idx);
  };
  std::string err, text;
  std::size_t pos = 0;
  auto store = [&] {
    if (mpfr_set_q(out[pos], q.get_mpq_t(), MPFR_RNDN) != 0) {
      why = leaf_name(pos) + ": expected a dyadic rational with at most 128 significant bits";
      return false;
    }
    ++pos;
    return true;
  };
  // The leaves in row-major order: `a` itself (levels 0), or those of the array `a`, `levels` deep.
  std::function<bool(const Value&, std::size_t)> leaves = [&](const Value& a, std::size_t levels) {
    if (levels == 0) {
      if (a.type != json::Type::String || !parse_rational(a.text, q, err))
        if (!read_rational(a, leaf_name(pos), q, why)) return false;
      return store();
    }
    for (std::size_t k = 0; k < a.size(); ++k) {
      json::Type t = json::Type::Null;
      std::string_view view;
      if (levels == 1 && a.leaf(k, t, view) && t == json::Type::String && parse_rational(text.assign(view), q, err)) {
        if (!store()) return false;
        continue;
      }
      const json::Item e = a.at(k);
      if (!leaves(*e, levels - 1)) return false;
    }
    return true;
  };
  if (!v) {
    why = where + ": missing";
    return false;
  }
  return leaves(*v, shape.size());
}

// An interval [lo, hi] of MPFR numbers; operations round lo down and hi up.
struct Iv {
  mpfr_t lo, hi;
  Iv() { mpfr_init2(lo, g_work_prec), mpfr_init2(hi, g_work_prec), mpfr_set_zero(lo, 1), mpfr_set_zero(hi, 1); }
  Iv(const Iv&) = delete;
  Iv& operator=(const Iv&) = delete;
  ~Iv() { mpfr_clear(lo), mpfr_clear(hi); }
  void zero() { mpfr_set_zero(lo, 1), mpfr_set_zero(hi, 1); }
};

// acc += w x for an exact w.
void iv_fma_point(Iv& acc, mpfr_srcptr w, const Iv& x) {
  const int s = mpfr_sgn(w);
  if (s == 0) return;
  mpfr_fma(acc.lo, w, s > 0 ? x.lo : x.hi, acc.lo, MPFR_RNDD);
  mpfr_fma(acc.hi, w, s > 0 ? x.hi : x.lo, acc.hi, MPFR_RNDU);
}

// acc += a b for intervals (min / max of the four endpoint products, rounded outward).
void iv_fma(Iv& acc, const Iv& a, const Iv& b, mpfr_t t1, mpfr_t t2) {
  mpfr_srcptr ae[2] = {a.lo, a.hi}, be[2] = {b.lo, b.hi};
  bool first = true;
  for (auto x : ae)
    for (auto y : be) {
      mpfr_mul(t2, x, y, MPFR_RNDD);
      if (first || mpfr_less_p(t2, t1)) mpfr_set(t1, t2, MPFR_RNDN);
      first = false;
    }
  mpfr_add(acc.lo, acc.lo, t1, MPFR_RNDD);
  first = true;
  for (auto x : ae)
    for (auto y : be) {
      mpfr_mul(t2, x, y, MPFR_RNDU);
      if (first || mpfr_greater_p(t2, t1)) mpfr_set(t1, t2, MPFR_RNDN);
      first = false;
    }
  mpfr_add(acc.hi, acc.hi, t1, MPFR_RNDU);
}

// acc += a x for an interval a with a.lo >= 0 (a softmax weight): the ends of the product are two of the
// four endpoint products, chosen by the signs of x's ends (the same bounds iv_fma finds, with 2 products).
void iv_fma_nonneg(Iv& acc, const Iv& a, const Iv& x) {
  mpfr_srcptr lo_a = mpfr_sgn(x.lo) >= 0 ? a.lo : a.hi;  // x.lo >= 0: a.lo x.lo is the least product
  mpfr_srcptr hi_a = mpfr_sgn(x.hi) >= 0 ? a.hi : a.lo;  // x.hi >= 0: a.hi x.hi is the largest
  mpfr_fma(acc.lo, lo_a, x.lo, acc.lo, MPFR_RNDD);
  mpfr_fma(acc.hi, hi_a, x.hi, acc.hi, MPFR_RNDU);
}

struct Model {
  std::size_t N = 0, S = 0, d = 0, dh = 0, H = 0;
  MpArray e, pos, WU, WQ, WK, WV, WO;
};

// The seven weight tensors of the object `weights`, each read exactly with the shape m's sizes give it.
bool read_weights(const Value& weights, Model& m, std::string& why) {
  struct TensorField {
    const char* name;
    MpArray* out;
    std::vector<std::size_t> shape;
  } tensors[] = {{"e", &m.e, {m.N, m.d}},           {"pos", &m.pos, {m.S, m.d}},
                 {"WU", &m.WU, {m.N, m.d}},         {"WQ", &m.WQ, {m.H, m.dh, m.d}},
                 {"WK", &m.WK, {m.H, m.dh, m.d}},   {"WV", &m.WV, {m.H, m.dh, m.d}},
                 {"WO", &m.WO, {m.H, m.d, m.dh}}};
  for (auto& f : tensors)
    if (!read_tensor(weights.find(f.name), std::string("weights.") + f.name, f.shape, *f.out, why)) return false;
  return true;
}

// out = W[base ..] in, W a rows x cols block of exact numbers, `in` enclosed.
void iv_project(const MpArray& W, std::size_t base, std::size_t rows, std::size_t cols, const Iv* in, Iv* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    out[r].zero();
    for (std::size_t i = 0; i < cols; ++i) iv_fma_point(out[r], W[base + r * cols + i], in[i]);
  }
}

// x(t, s) = e(t_s) + pos_s for s < S, enclosed (exact sums rounded outward at the working precision).
std::vector<std::unique_ptr<Iv[]>> token_inputs(const Model& m, const std::vector<std::size_t>& seq) {
  const std::size_t S = m.S, d = m.d;
  std::vector<std::unique_ptr<Iv[]>> x(S);
  for (std::size_t s = 0; s < S; ++s) {
    x[s].reset(new Iv[d]);
    for (std::size_t i = 0; i < d; ++i) {
      mpfr_add(x[s][i].lo, m.e[seq[s] * d + i], m.pos[s * d + i], MPFR_RNDD);
      mpfr_add(x[s][i].hi, m.e[seq[s] * d + i], m.pos[s * d + i], MPFR_RNDU);
    }
  }
  return x;
}

// Head h's attention weights a_s = softmax_s((W_Q^h x(t,S)) . (W_K^h x(t,s))), enclosed into a[0..S), in
// MPFR: the scores cancel (|W_Q| |x| is a thousand times |q|), so doubles would lose the margin here.
struct SoftmaxScratch {
  std::unique_ptr<Iv[]> q, k, score, z;
  std::vector<std::size_t> rows;  // the rows r of q that are not [0, 0]
  Iv sum;
  mpfr_t t1, t2, c;
  SoftmaxScratch(std::size_t dh, std::size_t S) : q(new Iv[dh]), k(new Iv[dh]), score(new Iv[S]), z(new Iv[S]) {
    mpfr_inits2(g_work_prec, t1, t2, c, static_cast<mpfr_ptr>(nullptr));
  }
  SoftmaxScratch(const SoftmaxScratch&) = delete;
  SoftmaxScratch& operator=(const SoftmaxScratch&) = delete;
  ~SoftmaxScratch() { mpfr_clears(t1, t2, c, static_cast<mpfr_ptr>(nullptr)); }
};
void softmax_of_scores(std::size_t S, SoftmaxScratch& w, Iv* a);
void head_softmax(const Model& m, std::size_t h, const std::vector<std::unique_ptr<Iv[]>>& x, SoftmaxScratch& w, Iv* a) {
  const std::size_t S = m.S, d = m.d, dh = m.dh;
  iv_project(m.WQ, h * dh * d, dh, d, x[S - 1].get(), w.q.get());
  // A row r with q_r = [0, 0] adds exactly 0 to every score (a rank-one head has one non-zero row): its
  // key row is neither projected nor multiplied.
  w.rows.clear();
  for (std::size_t r = 0; r < dh; ++r)
    if (!mpfr_zero_p(w.q[r].lo) || !mpfr_zero_p(w.q[r].hi)) w.rows.push_back(r);
  for (std::size_t s = 0; s < S; ++s) {
    w.score[s].zero();
    for (const std::size_t r : w.rows) {
      iv_project(m.WK, h * dh * d + r * d, 1, d, x[s].get(), &w.k[r]);
      iv_fma(w.score[s], w.q[r], w.k[r], w.t1, w.t2);
    }
  }
  softmax_of_scores(S, w, a);
}

// a_s = softmax_s(score_s) from the enclosed scores w.score[0..S), enclosed into a[0..S).
void softmax_of_scores(std::size_t S, SoftmaxScratch& w, Iv* a) {
  for (std::size_t s = 0; s < S; ++s)
    if (s == 0 || mpfr_greater_p(w.score[s].hi, w.c)) mpfr_set(w.c, w.score[s].hi, MPFR_RNDN);
  // z_s = exp(score_s - c), a_s = z_s / sum (all positive).
  w.sum.zero();
  for (std::size_t s = 0; s < S; ++s) {
    mpfr_sub(w.z[s].lo, w.score[s].lo, w.c, MPFR_RNDD);
    mpfr_exp(w.z[s].lo, w.z[s].lo, MPFR_RNDD);
    mpfr_sub(w.z[s].hi, w.score[s].hi, w.c, MPFR_RNDU);
    mpfr_exp(w.z[s].hi, w.z[s].hi, MPFR_RNDU);
    mpfr_add(w.sum.lo, w.sum.lo, w.z[s].lo, MPFR_RNDD);
    mpfr_add(w.sum.hi, w.sum.hi, w.z[s].hi, MPFR_RNDU);
  }
  for (std::size_t s = 0; s < S; ++s) {
    mpfr_div(a[s].lo, w.z[s].lo, w.sum.hi, MPFR_RNDD);
    mpfr_div(a[s].hi, w.z[s].hi, w.sum.lo, MPFR_RNDU);
  }
}

// The key rows of the double route, by linearity: W_K^h x(t,s) = W_K^h e(t_s) + W_K^h pos_s exactly, so
// the enclosure of the first term (once per token in use) plus the second (once per position), rounded
// outward, encloses it. Only the rows r whose W_Q^h row is not zero (the others meet a zero query row).
// A different enclosure than head_softmax's, for the double route only: a sequence it does not decide
// goes to the MPFR route, which computes W_K^h x(t,s) directly as before.
struct KeyCache {
  std::vector<std::vector<std::size_t>> rows;  // per head: the rows r of W_Q^h that are not zero
  std::vector<std::size_t> offset;             // per head: where its rows start within a token's block
  std::size_t width = 0;                       // sum of the heads' row counts
  std::vector<std::size_t> slot;               // per token: its block, or kNone
  std::unique_ptr<Iv[]> token, position;       // [slot][width], [S][width]
  static constexpr std::size_t kNone = ~std::size_t{0};
};

// Intervals at most this many (about 100 bytes each) are kept; beyond, the double route projects directly.
constexpr std::size_t kMaxKeyCacheEntries = std::size_t{1} << 18;

// Builds the cache for the tokens of `seqs`, on the checker's threads; false (nothing cached) when it
// would hold more than kMaxKeyCacheEntries intervals.
bool build_key_cache(const Model& m, const std::vector<std::vector<std::size_t>>& seqs, KeyCache& kc) {
  const std::size_t d = m.d, dh = m.dh;
  kc.rows.assign(m.H, {});
  kc.offset.assign(m.H, 0);
  kc.width = 0;
  for (std::size_t h = 0; h < m.H; ++h) {
    kc.offset[h] = kc.width;
    for (std::size_t r = 0; r < dh; ++r) {
      bool nonzero = false;
      for (std::size_t i = 0; i < d && !nonzero; ++i) nonzero = mpfr_sgn(m.WQ[h * dh * d + r * d + i]) != 0;
      if (nonzero) kc.rows[h].push_back(r);
    }
    kc.width += kc.rows[h].size();
  }
  kc.slot.assign(m.N, KeyCache::kNone);
  std::vector<std::size_t> used;
  for (const auto& seq : seqs)
    for (std::size_t t : seq)
      if (kc.slot[t] == KeyCache::kNone) kc.slot[t] = used.size(), used.push_back(t);
  if (kc.width == 0 || (used.size() + m.S) > kMaxKeyCacheEntries / kc.width) return false;
  kc.token.reset(new Iv[used.size() * kc.width]);
  kc.position.reset(new Iv[m.S * kc.width]);
  // Row r of head h times the exact vector v (d numbers of W), as an interval (v a point).
  auto project = [&](const MpArray& V, std::size_t base, Iv* out) {
    std::unique_ptr<Iv[]> v(new Iv[d]);
    for (std::size_t i = 0; i < d; ++i) mpfr_set(v[i].lo, V[base + i], MPFR_RNDD), mpfr_set(v[i].hi, V[base + i], MPFR_RNDU);
    for (std::size_t h = 0; h < m.H; ++h)
      for (std::size_t j = 0; j < kc.rows[h].size(); ++j)
        iv_project(m.WK, h * dh * d + kc.rows[h][j] * d, 1, d, v.get(), &out[kc.offset[h] + j]);
  };
  parallel_for(used.size(), checker_threads(), [&](std::size_t u, unsigned) { project(m.e, used[u] * d, &kc.token[u * kc.width]); });
  for (std::size_t s = 0; s < m.S; ++s) project(m.pos, s * d, &kc.position[s * kc.width]);
  return true;
}

// head_softmax with the key rows from the cache: k_r(s) = (W_K e(t_s))_r + (W_K pos_s)_r, rounded outward.
void head_softmax_cached(const Model& m, std::size_t h, const std::vector<std::unique_ptr<Iv[]>>& x,
                         const std::vector<std::size_t>& seq, const KeyCache& kc, SoftmaxScratch& w, Iv* a) {
  const std::size_t S = m.S, d = m.d, dh = m.dh;
  iv_project(m.WQ, h * dh * d, dh, d, x[S - 1].get(), w.q.get());
  for (std::size_t s = 0; s < S; ++s) {
    w.score[s].zero();
    for (std::size_t j = 0; j < kc.rows[h].size(); ++j) {
      const std::size_t r = kc.rows[h][j];
      if (mpfr_zero_p(w.q[r].lo) && mpfr_zero_p(w.q[r].hi)) continue;
      const Iv& ke = kc.token[kc.slot[seq[s]] * kc.width + kc.offset[h] + j];
      const Iv& kp = kc.position[s * kc.width + kc.offset[h] + j];
      mpfr_add(w.k[r].lo, ke.lo, kp.lo, MPFR_RNDD);
      mpfr_add(w.k[r].hi, ke.hi, kp.hi, MPFR_RNDU);
      iv_fma(w.score[s], w.q[r], w.k[r], w.t1, w.t2);
    }
  }
  softmax_of_scores(S, w, a);
}

// E(t) = x(t,S) + sum_h W_O^h W_V^h A^h(t), the input of W_U (eq. (1)-(2)), enclosed into E[0..d). With
// `feat`, also the features F(t) = [x(t,S); W_V^1 A^1(t); ...; W_V^H A^H(t)] (d + H d_h entries), so that
// E(t) = [I, W_O] F(t).
void encoder_enclosure(const Model& m, const std::vector<std::size_t>& seq, Iv* E, Iv* feat = nullptr) {
  const std::size_t S = m.S, d = m.d, dh = m.dh;
  const std::vector<std::unique_ptr<Iv[]>> x = token_inputs(m, seq);
  std::unique_ptr<Iv[]> A(new Iv[d]), v(new Iv[dh]), a(new Iv[S]);
  SoftmaxScratch w(dh, S);
  for (std::size_t i = 0; i < d; ++i) mpfr_set(E[i].lo, x[S - 1][i].lo, MPFR_RNDD), mpfr_set(E[i].hi, x[S - 1][i].hi, MPFR_RNDU);
  if (feat)
    for (std::size_t i = 0; i < d; ++i)
      mpfr_set(feat[i].lo, x[S - 1][i].lo, MPFR_RNDD), mpfr_set(feat[i].hi, x[S - 1][i].hi, MPFR_RNDU);
  for (std::size_t h = 0; h < m.H; ++h) {
    head_softmax(m, h, x, w, a.get());
    for (std::size_t i = 0; i < d; ++i) A[i].zero();
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t i = 0; i < d; ++i) iv_fma_nonneg(A[i], a[s], x[s][i]);  // a.lo >= 0: a quotient of exps
    iv_project(m.WV, h * dh * d, dh, d, A.get(), v.get());
    if (feat)
      for (std::size_t r = 0; r < dh; ++r)
        mpfr_set(feat[d + h * dh + r].lo, v[r].lo, MPFR_RNDD), mpfr_set(feat[d + h * dh + r].hi, v[r].hi, MPFR_RNDU);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t r = 0; r < dh; ++r) iv_fma_point(E[i], m.WO[h * d * dh + i * dh + r], v[r]);
  }
}

// The transposes of `count` consecutive rows x cols blocks of exact weights (from W[0]) as double
// enclosures, each w within [w rounded down, w rounded up] in midpoint-radius form: block b's entry (i, j)
// lands at c[b rows cols + j rows + i], so that y = W x is mix_enclosure(W^T, x).
void transposed_f64(const MpArray& W, std::size_t count, std::size_t rows, std::size_t cols, std::vector<double>& c,
                    std::vector<double>& r) {
  c.assign(count * rows * cols, 0.0);
  r.assign(count * rows * cols, 0.0);
  for (std::size_t b = 0; b < count; ++b)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        mpfr_srcptr w = W[b * rows * cols + i * cols + j];
        const std::size_t at = b * rows * cols + j * rows + i;
        midrad(mpfr_get_d(w, MPFR_RNDD), mpfr_get_d(w, MPFR_RNDU), c[at], r[at]);
      }
}

// W_U^T (d x N) as double enclosures, for the logits' double filter.
void dana24_wut_f64(const Model& m, std::vector<double>& c, std::vector<double>& r) { transposed_f64(m.WU, 1, m.N, m.d, c, r); }

// ---- The encoder's mixing and projections in double midpoint-radius arithmetic (a filter) --------------
// The attention weights come from MPFR (head_softmax: the scores cancel); A = sum_s a_s x(t,s),
// W_V A and W_O (W_V A) are mix_enclosure products (Higham's bound, rigorous for every value of the
// enclosed weights and inputs), the heads' sum rounded outward with up / dn. Each exact weight w enters
// as the double interval [w rounded down, w rounded up]. Any enclosure is sound; this one is wider than
// MPFR's, so a sequence whose margin or deviation it does not show goes to the MPFR route.
struct ModelF64 {
  // Transposed so that y = W x is mix_enclosure(W^T, x): WVt (H blocks of d x dh), WOt (H blocks of dh x d).
  std::vector<double> wvc, wvr, woc, wor;
};

ModelF64 dana24_model_f64(const Model& m) {
  ModelF64 f;
  transposed_f64(m.WV, m.H, m.dh, m.d, f.wvc, f.wvr);
  transposed_f64(m.WO, m.H, m.d, m.dh, f.woc, f.wor);
  return f;
}

// [lo, hi] (MPFR) as a double midpoint and radius; false when an end is not finite.
bool iv_midrad(const Iv& x, double& c, double& r) {
  if (!mpfr_number_p(x.lo) || !mpfr_number_p(x.hi)) return false;
  midrad(mpfr_get_d(x.lo, MPFR_RNDD), mpfr_get_d(x.hi, MPFR_RNDU), c, r);
  return std::isfinite(c) && std::isfinite(r);
}

// E(t) enclosed as [lo, hi] (d doubles each); false when a value is not finite (the caller then takes
// the MPFR route). Runs at the working precision g_work_prec (the softmax).
bool encoder_enclosure_f64(const Model& m, const ModelF64& f, const std::vector<std::size_t>& seq, double* lo,
                           double* hi, const KeyCache* keys = nullptr) {
  const std::size_t S = m.S, d = m.d, dh = m.dh;
  const std::vector<std::unique_ptr<Iv[]>> x = token_inputs(m, seq);
  std::vector<double> xc(S * d), xr(S * d), ac(S), ar(S), Ac(d), Ar(d), vc(dh), vr(dh), oc(d), orad(d);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t i = 0; i < d; ++i)
      if (!iv_midrad(x[s][i], xc[s * d + i], xr[s * d + i])) return false;
  for (std::size_t i = 0; i < d; ++i) {
    lo[i] = mpfr_get_d(x[S - 1][i].lo, MPFR_RNDD);
    hi[i] = mpfr_get_d(x[S - 1][i].hi, MPFR_RNDU);
  }
  std::unique_ptr<Iv[]> a(new Iv[S]);
  SoftmaxScratch w(dh, S);
  for (std::size_t h = 0; h < m.H; ++h) {
    if (keys) head_softmax_cached(m, h, x, seq, *keys, w, a.get());
    else head_softmax(m, h, x, w, a.get());
    for (std::size_t s = 0; s < S; ++s)
      if (!iv_midrad(a[s], ac[s], ar[s])) return false;
    const std::size_t wv = h * d * dh;
    if (!mix_enclosure(xc.data(), xr.data(), ac.data(), ar.data(), S, d, Ac.data(), Ar.data()) ||
        !mix_enclosure(&f.wvc[wv], &f.wvr[wv], Ac.data(), Ar.data(), d, dh, vc.data(), vr.data()) ||
        !mix_enclosure(&f.woc[wv], &f.wor[wv], vc.data(), vr.data(), dh, d, oc.data(), orad.data()))
      return false;
    for (std::size_t i = 0; i < d; ++i) {
      lo[i] = dn(lo[i] + dn(oc[i] - orad[i]));
      hi[i] = up(hi[i] + up(oc[i] + orad[i]));
    }
  }
  for (std::size_t i = 0; i < d; ++i)
    if (!std::isfinite(lo[i]) || !std::isfinite(hi[i])) return false;
  return true;
}

// The logits' filter: T(t) = W_U E(t) for an enclosure E in double midpoint-radius form (ec, er: from the
// double route, or the overload below: from the MPFR enclosure) (one
// mix_enclosure, Higham's bound); true with `margin` a rigorous lower bound of min_{j != g} T_g - T_j when
// that bound is finite and at least `need` (compared exactly). Otherwise the caller takes the MPFR route.
bool dana24_margin_filter(const Model& m, const std::vector<double>& wc, const std::vector<double>& wr, const double* ec,
                          const double* er, std::size_t g, const mpq_class& need, mpfr_t margin) {
  const std::size_t d = m.d, N = m.N;
  if (N < 2) return false;
  std::vector<double> lc(N), lr(N);
  if (!mix_enclosure(wc.data(), wr.data(), ec, er, d, N, lc.data(), lr.data())) return false;
  double best = -INFINITY;
  for (std::size_t j = 0; j < N; ++j)
    if (j != g) best = std::max(best, up(lc[j] + lr[j]));
  const double lo = dn(dn(lc[g] - lr[g]) - best);
  if (!std::isfinite(lo) || mpq_class(lo) < need) return false;
  mpfr_set_d(margin, lo, MPFR_RNDD);  // exact at the caller's precision (>= 53 bits)
  return true;
}
bool dana24_margin_filter(const Model& m, const std::vector<double>& wc, const std::vector<double>& wr, const Iv* E,
                          std::size_t g, const mpq_class& need, mpfr_t margin) {
  const std::size_t d = m.d;
  std::vector<double> ec(d), er(d);
  for (std::size_t i = 0; i < d; ++i)
    if (!iv_midrad(E[i], ec[i], er[i])) return false;
  return dana24_margin_filter(m, wc, wr, ec.data(), er.data(), g, need, margin);
}

// The whole sequence in doubles (encoder_enclosure_f64, then the logits' filter): true with `margin` set
// when it shows margin >= need and, with estar, max_i |E_i - estar_i| <= deviation. Otherwise nothing is
// concluded (the MPFR route decides).
bool dana24_sequence_f64(const Model& m, const ModelF64& f, const std::vector<double>& wc, const std::vector<double>& wr,
                         const std::vector<std::size_t>& seq, std::size_t g, const mpq_class& need,
                         const std::vector<mpq_class>* estar, const mpq_class* deviation, mpfr_t margin,
                         const KeyCache* keys) {
  const std::size_t d = m.d;
  std::vector<double> lo(d), hi(d), ec(d), er(d);
  if (!encoder_enclosure_f64(m, f, seq, lo.data(), hi.data(), keys)) return false;
  if (estar && deviation) {
    mpfr_t x;
    mpfr_init2(x, 64);
    bool ok = true;
    for (std::size_t i = 0; i < d && ok; ++i) {
      mpfr_set_d(x, hi[i], MPFR_RNDU);  // exact: 64 >= 53 bits
      mpfr_sub_q(x, x, (*estar)[i].get_mpq_t(), MPFR_RNDU);  // >= E_i - estar_i for every E_i <= hi
      ok = mpfr_cmp_q(x, deviation->get_mpq_t()) <= 0;
      mpfr_set_d(x, lo[i], MPFR_RNDD);
      mpfr_sub_q(x, x, (*estar)[i].get_mpq_t(), MPFR_RNDD);  // <= E_i - estar_i for every E_i >= lo
      mpfr_neg(x, x, MPFR_RNDU);
      ok = ok && mpfr_cmp_q(x, deviation->get_mpq_t()) <= 0;
    }
    mpfr_clear(x);
    if (!ok) return false;
  }
  for (std::size_t i = 0; i < d; ++i) midrad(lo[i], hi[i], ec[i], er[i]);
  return dana24_margin_filter(m, wc, wr, ec.data(), er.data(), g, need, margin);
}

// Certified lower bound of min_{j != g} (T(t)_g - T(t)_j) into `margin`. With `estar` (d exact numbers),
// also an upper bound of ||E(t) - estar||_inf into `dev`.
// With `wut` (W_U^T as double enclosures, dana24_wut_f64) and `need`, the logits go through the double
// filter first, and MPFR only when it does not show margin >= need.
struct LogitFilter {
  const std::vector<double>* c;
  const std::vector<double>* r;
  const mpq_class* need;
};
void certified_margin(const Model& m, const std::vector<std::size_t>& seq, std::size_t g, mpfr_t margin,
                      const std::vector<mpq_class>* estar = nullptr, mpfr_ptr dev = nullptr,
                      const LogitFilter* filter = nullptr) {
  const std::size_t d = m.d;
  std::unique_ptr<Iv[]> E(new Iv[d]);
  encoder_enclosure(m, seq, E.get());
  if (estar && dev) {
    mpfr_set_zero(dev, 1);
    mpfr_t up;
    mpfr_init2(up, g_work_prec);
    for (std::size_t i = 0; i < d; ++i) {
      mpfr_sub_q(up, E[i].hi, (*estar)[i].get_mpq_t(), MPFR_RNDU);  // E.hi - e*
      mpfr_max(dev, dev, up, MPFR_RNDU);
      mpfr_sub_q(up, E[i].lo, (*estar)[i].get_mpq_t(), MPFR_RNDD);  // -(e* - E.lo), rounded toward -inf
      mpfr_neg(up, up, MPFR_RNDU);
      mpfr_max(dev, dev, up, MPFR_RNDU);
      if (mpfr_nan_p(E[i].lo) || mpfr_nan_p(E[i].hi)) mpfr_set_inf(dev, 1);
    }
    mpfr_clear(up);
  }
  if (filter && dana24_margin_filter(m, *filter->c, *filter->r, E.get(), g, *filter->need, margin)) return;
  // Logits: lower bound of the label's, upper bound of every rival's.
  Iv L;
  bool any = false;
  mpfr_t best;
  mpfr_init2(best, g_work_prec);
  Iv Lg;
  iv_project(m.WU, g * d, 1, d, E.get(), &Lg);
  for (std::size_t j = 0; j < m.N; ++j) {
    if (j == g) continue;
    iv_project(m.WU, j * d, 1, d, E.get(), &L);
    if (!any || mpfr_greater_p(L.hi, best)) mpfr_set(best, L.hi, MPFR_RNDN);
    any = true;
  }
  if (any) mpfr_sub(margin, Lg.lo, best, MPFR_RNDD);
  else mpfr_set_inf(margin, 1);
  mpfr_clear(best);
}

bool rows_zero_below_first(const MpArray& W, std::size_t H, std::size_t dh, std::size_t d) {
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t r = 1; r < dh; ++r)
      for (std::size_t i = 0; i < d; ++i)
        if (mpfr_sgn(W[h * dh * d + r * d + i]) != 0) return false;
  return true;
}

}  // namespace

bool check_dana24(const Value& c, std::string& why) {
  std::string claim;
  if (!read_string(c, "", "claim", claim, why)) return false;
  if (claim != "dana24/theorem-1-assoc" && claim != "dana24/corollary-1") {
    why = "claim: expected dana24/theorem-1-assoc or dana24/corollary-1, got \"" + claim + "\"";
    return false;
  }
  Model m;
  std::size_t T = 0;
  const Value* v;
  struct SizeField {
    const char* name;
    std::size_t* out;
    std::size_t max;
  } sizes[] = {{"N", &m.N, 1u << 24}, {"S", &m.S, 1u << 16}, {"d", &m.d, 1u << 14},
               {"dh", &m.dh, 1u << 14}, {"H", &m.H, 1u << 14}, {"T", &T, 1u << 24}};
  for (auto& f : sizes)
    if (!(v = member(c, "", f.name, json::Type::Number, why)) || !read_size(*v, f.name, f.max, *f.out, why)) return false;
  if (m.N == 0 || m.S == 0 || m.d == 0 || T == 0) {
    why = "N, S, d, T: expected positive sizes";
    return false;
  }
  if (m.H > 0 && (m.dh == 0 || m.dh > m.d)) {
    why = "dh: expected 1 <= d_h <= d (paper footnote 1)";
    return false;
  }
  if (claim == "dana24/corollary-1" && (m.d != 2 || m.dh > 2)) {
    why = "claim dana24/corollary-1: expected d = 2 and d_h <= 2";
    return false;
  }
  // Sequences and next tokens.
  const Value* sv = member(c, "", "sequences", json::Type::Array, why);
  if (!sv) return false;
  if (sv->size() != T) {
    why = "sequences: expected T = " + std::to_string(T) + " sequences";
    return false;
  }
  std::vector<std::vector<std::size_t>> seqs(T, std::vector<std::size_t>(m.S));
  std::set<std::vector<std::size_t>> seen;
  for (std::size_t t = 0; t < T; ++t) {
    const json::Item s_item = sv->at(t);
    const Value& s = *s_item;
    if (s.type != json::Type::Array || s.size() != m.S) {
      why = dana24_at("sequences", t) + ": expected S = " + std::to_string(m.S) + " tokens";
      return false;
    }
    for (std::size_t k = 0; k < m.S; ++k)
      if (!read_size(*s.at(k), dana24_at(dana24_at("sequences", t), k), m.N - 1, seqs[t][k], why)) return false;
    if (!seen.insert(seqs[t]).second) {
      why = dana24_at("sequences", t) + ": a repeated sequence (associations must be distinct sequences)";
      return false;
    }
  }
  const Value* nv = member(c, "", "next", json::Type::Array, why);
  if (!nv) return false;
  if (nv->size() != T) {
    why = "next: expected T = " + std::to_string(T) + " tokens";
    return false;
  }
  std::vector<std::size_t> next(T);
  for (std::size_t t = 0; t < T; ++t)
    if (!read_size(*nv->at(t), dana24_at("next", t), m.N - 1, next[t], why)) return false;
  // Weights.
  const Value* w = member(c, "", "weights", json::Type::Object, why);
  if (!w) return false;
  if (!read_weights(*w, m, why)) return false;
  // Counts.
  std::size_t count = 0;
  if (!(v = member(c, "", "memorized_count", json::Type::Number, why)) ||
      !read_size(*v, "memorized_count", 1u << 24, count, why))
    return false;
  if (count != T) {
    why = "memorized_count: expected T = " + std::to_string(T) + " (every association is certified)";
    return false;
  }
  std::size_t params = 0;
  if (!(v = member(c, "", "parameters", json::Type::Number, why)) ||
      !read_size(*v, "parameters", std::size_t{1} << 62, params, why))
    return false;
  if (params != m.d * (m.S + 2 * m.N + 4 * m.dh * m.H)) {
    why = "parameters: expected d(S + 2N + 4 d_h H) = " + std::to_string(m.d * (m.S + 2 * m.N + 4 * m.dh * m.H));
    return false;
  }
  if (const Value* r2 = c.find("parameters_remark2")) {
    std::size_t p2 = 0;
    if (!read_size(*r2, "parameters_remark2", std::size_t{1} << 62, p2, why)) return false;
    if (p2 != m.d * (m.S + 2 * m.N + 2 * (m.dh + 1) * m.H)) {
      why = "parameters_remark2: expected d(S + 2N + 2(d_h + 1) H)";
      return false;
    }
    if (!rows_zero_below_first(m.WQ, m.H, m.dh, m.d) || !rows_zero_below_first(m.WK, m.H, m.dh, m.d)) {
      why = "parameters_remark2: the Remark 2 count needs rank-one heads (rows 1.. of W_Q^h and W_K^h zero)";
      return false;
    }
  }
  mpq_class min_margin;
  if (!(v = member(c, "", "min_margin", json::Type::String, why)) || !read_rational(*v, "min_margin", min_margin, why))
    return false;
  if (sgn(min_margin) <= 0) {
    why = "min_margin: expected a positive margin (memorization is a strict arg-max)";
    return false;
  }
  // Step 6c, optional: the exact targets E* = [M, W_O] F~ and their exact margin.
  std::vector<std::vector<mpq_class>> estar;
  mpq_class deviation;
  const Value* readout = c.find("readout");
  if (readout) {
    Dana24Shape sh;
    sh.N = m.N, sh.S = m.S, sh.d = m.d, sh.dh = m.dh, sh.H = m.H;
    if (!dana24_readout_exact_check(*readout, *w, sh, next, estar, deviation, why)) return false;
  }
  // The forward pass, every sequence, on the checker's threads: in double midpoint-radius arithmetic
  // first (dana24_sequence_f64), then MPFR at 128 bits (256 and 512 when 128 do not certify the margin, or
  // the deviation from E*), the N logits through the double filter first.
  // The first failing sequence in order is reported, whatever the thread split.
  std::vector<double> wut_c, wut_r;
  dana24_wut_f64(m, wut_c, wut_r);
  const ModelF64 mf = dana24_model_f64(m);
  const LogitFilter filter{&wut_c, &wut_r, &min_margin};
  KeyCache keys;
  const bool cached = build_key_cache(m, seqs, keys);
  std::vector<std::string> failure(T);
  parallel_for(T, checker_threads(), [&](std::size_t t, unsigned) {
    mpfr_t margin, dev;
    mpfr_init2(margin, 512);
    mpfr_init2(dev, 512);
    // The whole sequence in doubles first; MPFR only when that does not show what is claimed.
    if (dana24_sequence_f64(m, mf, wut_c, wut_r, seqs[t], next[t], min_margin, readout ? &estar[t] : nullptr,
                            readout ? &deviation : nullptr, margin, cached ? &keys : nullptr)) {
      mpfr_clears(margin, dev, static_cast<mpfr_ptr>(nullptr));
      return;
    }
    auto deviation_ok = [&] { return !readout || (!mpfr_nan_p(dev) && mpfr_cmp_q(dev, deviation.get_mpq_t()) <= 0); };
    for (mpfr_prec_t prec : {128, 256, 512}) {
      g_work_prec = prec;
      certified_margin(m, seqs[t], next[t], margin, readout ? &estar[t] : nullptr, dev, &filter);
      if (mpfr_cmp_q(margin, min_margin.get_mpq_t()) >= 0 && !mpfr_nan_p(margin) && deviation_ok()) break;
    }
    g_work_prec = kDana24Prec;
    if (!deviation_ok())
      failure[t] = dana24_at("sequences", t) + ": ||E(t) - E*(t)||_inf is not <= readout.encoder_deviation (the "
                   "model's encoder input is not within the claimed distance of the exact targets)";
    else if (!(mpfr_cmp_q(margin, min_margin.get_mpq_t()) >= 0) || mpfr_nan_p(margin))
      failure[t] = dana24_at("sequences", t) + ": the certified margin of next token " + std::to_string(next[t]) +
                   " is not >= min_margin (" + (mpfr_sgn(margin) > 0 ? "smaller margin" : "arg-max not certified") + ")";
    mpfr_clears(margin, dev, static_cast<mpfr_ptr>(nullptr));
  });
  for (std::size_t t = 0; t < T; ++t)
    if (!failure[t].empty()) {
      why = failure[t];
      return false;
    }
  return true;
}

}  // namespace memcert_checker

namespace memcert_checker {

bool dana24_logit_enclosures(const Value& weights, const Dana24Shape& sh,
                             const std::vector<std::vector<std::size_t>>& seqs,
                             std::vector<std::vector<mpq_class>>& lo, std::vector<std::vector<mpq_class>>& hi,
                             std::string& why, std::vector<std::vector<mpq_class>>* feat_lo,
                             std::vector<std::vector<mpq_class>>* feat_hi) {
  Model m;
  m.N = sh.N, m.S = sh.S, m.d = sh.d, m.dh = sh.dh, m.H = sh.H;
  if (!read_weights(weights, m, why)) return false;
  lo.assign(seqs.size(), std::vector<mpq_class>(m.N));
  hi.assign(seqs.size(), std::vector<mpq_class>(m.N));
  const std::size_t nf = m.d + m.H * m.dh;
  const bool want = feat_lo && feat_hi;
  if (want) feat_lo->assign(seqs.size(), std::vector<mpq_class>(nf)), feat_hi->assign(seqs.size(), std::vector<mpq_class>(nf));
  std::unique_ptr<Iv[]> E(new Iv[m.d]), F(new Iv[nf]);
  Iv L;
  for (std::size_t t = 0; t < seqs.size(); ++t) {
    encoder_enclosure(m, seqs[t], E.get(), want ? F.get() : nullptr);
    for (std::size_t r = 0; want && r < nf; ++r) {
      if (!mpfr_number_p(F[r].lo) || !mpfr_number_p(F[r].hi)) {
        why = dana24_at("sequences", t) + ": the features are not finite";
        return false;
      }
      mpfr_get_q((*feat_lo)[t][r].get_mpq_t(), F[r].lo);
      mpfr_get_q((*feat_hi)[t][r].get_mpq_t(), F[r].hi);
    }
    for (std::size_t j = 0; j < m.N; ++j) {
      iv_project(m.WU, j * m.d, 1, m.d, E.get(), &L);
      if (!mpfr_number_p(L.lo) || !mpfr_number_p(L.hi)) {
        why = dana24_at("sequences", t) + ": the logits are not finite";
        return false;
      }
      mpfr_get_q(lo[t][j].get_mpq_t(), L.lo);
      mpfr_get_q(hi[t][j].get_mpq_t(), L.hi);
    }
  }
  return true;
}

bool dana24_encoder_enclosures(const Value& weights, const Dana24Shape& sh, const std::vector<std::size_t>& seq,
                                bool doubles, long prec, std::vector<mpq_class>& lo, std::vector<mpq_class>& hi,
                                std::string& why) {
  Model m;
  m.N = sh.N, m.S = sh.S, m.d = sh.d, m.dh = sh.dh, m.H = sh.H;
  if (!read_weights(weights, m, why)) return false;
  lo.assign(m.d, mpq_class(0));
  hi.assign(m.d, mpq_class(0));
  g_work_prec = static_cast<mpfr_prec_t>(prec);
  bool ok = true;
  if (doubles) {
    std::vector<double> l(m.d), h(m.d);
    ok = encoder_enclosure_f64(m, dana24_model_f64(m), seq, l.data(), h.data());
    for (std::size_t i = 0; ok && i < m.d; ++i) lo[i] = l[i], hi[i] = h[i];
  } else {
    std::unique_ptr<Iv[]> E(new Iv[m.d]);
    encoder_enclosure(m, seq, E.get());
    for (std::size_t i = 0; ok && i < m.d; ++i) {
      ok = mpfr_number_p(E[i].lo) && mpfr_number_p(E[i].hi);
      if (ok) mpfr_get_q(lo[i].get_mpq_t(), E[i].lo), mpfr_get_q(hi[i].get_mpq_t(), E[i].hi);
    }
  }
  g_work_prec = kDana24Prec;
  if (!ok) why = "the encoder enclosure is not finite";
  return ok;
}

}  // namespace memcert_checker
