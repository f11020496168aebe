// kind "theorem1", claim "mahdavi24/theorem-1": the written multi-head attention weights memorize the
// certificate's T examples (THEORY.md sections 1, 3, 4 "Step 2", and 7). Re-derived from scratch:
//  1. exact logits a_h = E W_K^h (W_Q^h)^T e for every example and head (integer arithmetic over one
//     common denominator per matrix, GMP);
//  2. softmax enclosures alpha_h = x / sum(x), x_k = exp(a_k - max a) with MPFR directed rounding, and
//     p_h = E^T alpha_h enclosed entrywise: row t of Z is [p_1; ...; p_H] in [centre +- radius];
//  3. rank(Z) >= T for EVERY matrix of the enclosure: G = fl(C C^T) of the double centres with the
//     rigorous bound |fl(G) - C C^T| <= gamma_m |C||C|^T; mu just above ||R||_F^2; G - mu I proved
//     positive definite by Rump's floating-point test (BIT 2006; THEORY.md section 7 constants, first
//     term doubled as a margin), so sigma_T(C) > ||R||_F >= ||R||_2 and Weyl gives rank >= T;
//  4. the whole forward pass o_h = W_V^T p_h, o = W_O^T [o_h] (+ e with skip), y_hat = W_D^T o in
//     MPFR intervals: every real label within "tolerance", or a certified arg-max for class labels;
//  5. the trace's target logits for each head's group equal the recomputed exact logits (Claim 1).
// Only IEEE round-to-nearest double +, -, *, /, sqrt (no FMA contraction: the build disables it),
// GMP and MPFR are trusted.
#include <algorithm>
#include <cmath>
#include <limits>

#include "interval.hpp"
#include "read.hpp"

namespace memcert_checker {

namespace {

constexpr mpfr_prec_t kPrec = 128;
const double kInfD = std::numeric_limits<double>::infinity();
inline double upd(double r) { return std::nextafter(r, kInfD); }
inline double dnd(double r) { return std::nextafter(r, -kInfD); }

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
// y = A x (A: rows x cols) or A^T x, integers.
ZRow zmul(const ZMat& a, const ZRow& x, bool transpose) {
  const std::size_t R = a.size(), C = R ? a[0].size() : 0;
  ZRow y(transpose ? C : R, mpz_class(0));
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < C; ++j) {
      if (sgn(a[i][j]) == 0) continue;
      if (transpose) { if (sgn(x[i]) != 0) mpz_addmul(y[j].get_mpz_t(), a[i][j].get_mpz_t(), x[i].get_mpz_t()); }
      else if (sgn(x[j]) != 0) mpz_addmul(y[i].get_mpz_t(), a[i][j].get_mpz_t(), x[j].get_mpz_t());
    }
  return y;
}

// Rump's test that every symmetric matrix within `rad_norm` (spectral norm) of `a` (k x k, row-major) is
// positive definite.
bool rump_pd(std::vector<double> a, std::size_t k, double rad_norm) {
  const double u = std::ldexp(1.0, -53), eta = std::ldexp(1.0, -1074);
  double s = 0, maxd = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double ajj = a[j * k + j];
    if (!(ajj > 0) || !std::isfinite(ajj)) return false;
    s = upd(s + upd(upd(double(j + 3) * u) * ajj));
    maxd = std::max(maxd, ajj);
  }
  double c = upd(upd(2.0 * s) + rad_norm);
  c = upd(c + upd(upd(6.0 * double(k)) * upd(upd(double(k) + maxd) * eta)));
  if (!std::isfinite(c)) return false;
  for (std::size_t j = 0; j < k; ++j) a[j * k + j] = dnd(a[j * k + j] - c);
  for (std::size_t j = 0; j < k; ++j) {
    double* rj = &a[j * k];
    double sjj = rj[j];
    for (std::size_t t = 0; t < j; ++t) sjj -= rj[t] * rj[t];
    if (!(sjj > 0)) return false;
    const double ljj = std::sqrt(sjj);
    rj[j] = ljj;
    for (std::size_t i = j + 1; i < k; ++i) {
      double* ri = &a[i * k];
      double sij = ri[j];
      for (std::size_t t = 0; t < j; ++t) sij -= ri[t] * rj[t];
      ri[j] = sij / ljj;
    }
  }
  return true;
}

// Raw MPFR scratch for the softmax/mix hot loop.
struct Scratch {
  std::vector<__mpfr_struct> al, ah;
  mpfr_t t, sl, sh, pl, ph, mid, rad;
  explicit Scratch(std::size_t n) : al(n), ah(n) {
    for (std::size_t i = 0; i < n; ++i) { mpfr_init2(&al[i], kPrec); mpfr_init2(&ah[i], kPrec); }
    mpfr_inits2(kPrec, t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
  }
  ~Scratch() {
    for (auto& x : al) mpfr_clear(&x);
    for (auto& x : ah) mpfr_clear(&x);
    mpfr_clears(t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
  }
};

}  // namespace

bool check_theorem1(const Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "mahdavi24/theorem-1") {
    why = "claim: kind \"theorem1\" proves \"mahdavi24/theorem-1\", not \"" + claim + "\"";
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
  if (T > H * (r - 1) + 1) { why = "T: exceeds H(r-1)+1 = " + std::to_string(H * (r - 1) + 1); return false; }
  if (rankZ != T) { why = "rank_Z_lower: the certificate must claim rank(Z) >= T = " + std::to_string(T); return false; }
  bool skip = false;
  if (const Value* sv = cert.find("skip")) {
    if (sv->type != json::Type::Bool) { why = "skip: expected a boolean"; return false; }
    skip = sv->boolean;
  }
  mpq_class tol;
  const Value* tv = cert.find("tolerance");
  if (!tv) { why = "tolerance: missing"; return false; }
  if (!read_rational(*tv, "tolerance", tol, why)) return false;
  if (sgn(tol) < 0) { why = "tolerance: must be >= 0"; return false; }

  // ---- data ----
  const Value* data = member(cert, "", "data", json::Type::Object, why);
  if (!data) return false;
  const Value* cv = member(*data, "data", "contexts", json::Type::Array, why);
  if (!cv) return false;
  if (cv->items.size() != T) { why = "data.contexts: expected " + std::to_string(T) + " contexts"; return false; }
  std::vector<QMat> E(T);
  for (std::size_t t = 0; t < T; ++t)
    if (!read_plain_matrix(cv->items[t], at("data.contexts", t), n, d, E[t], why)) return false;
  const Value* qv = member(*data, "data", "queries", json::Type::Array, why);
  QMat Q;
  if (!qv || !read_plain_matrix(*qv, "data.queries", T, d, Q, why)) return false;
  bool class_labels = false;
  QMat Y;
  std::vector<std::size_t> cls;
  if (const Value* cl = data->find("class_labels")) {
    class_labels = true;
    if (cl->type != json::Type::Array || cl->items.size() != T) { why = "data.class_labels: expected " + std::to_string(T) + " labels"; return false; }
    cls.resize(T);
    for (std::size_t t = 0; t < T; ++t)
      if (!read_size(cl->items[t], at("data.class_labels", t), dout - 1, cls[t], why)) return false;
  } else {
    const Value* lv = member(*data, "data", "labels", json::Type::Array, why);
    if (!lv || !read_plain_matrix(*lv, "data.labels", T, dout, Y, why)) return false;
  }

  // ---- weights ----
  const Value* wv = member(cert, "", "weights", json::Type::Object, why);
  if (!wv) return false;
  const Value* hv = member(*wv, "weights", "heads", json::Type::Array, why);
  if (!hv) return false;
  if (hv->items.size() != H) { why = "weights.heads: expected " + std::to_string(H) + " heads"; return false; }
  std::vector<Scaled> WK(H), WQ(H);
  std::vector<QMat> WV(H);
  for (std::size_t h = 0; h < H; ++h) {
    const Value& hd = hv->items[h];
    const std::string w = at("weights.heads", h);
    QMat k, q;
    const Value* kv = member(hd, w, "WK", json::Type::Array, why);
    if (!kv || !read_plain_matrix(*kv, w + ".WK", d, dh, k, why)) return false;
    const Value* qqv = member(hd, w, "WQ", json::Type::Array, why);
    if (!qqv || !read_plain_matrix(*qqv, w + ".WQ", d, dh, q, why)) return false;
    const Value* vv = member(hd, w, "WV", json::Type::Array, why);
    if (!vv || !read_plain_matrix(*vv, w + ".WV", d, dv, WV[h], why)) return false;
    WK[h] = scale_matrix(k);
    WQ[h] = scale_matrix(q);
  }
  QMat WO, WD;
  const Value* ov = member(*wv, "weights", "WO", json::Type::Array, why);
  if (!ov || !read_plain_matrix(*ov, "weights.WO", H * dv, d, WO, why)) return false;
  const Value* dvv = member(*wv, "weights", "WD", json::Type::Array, why);
  if (!dvv || !read_plain_matrix(*dvv, "weights.WD", d, dout, WD, why)) return false;

  // Point weights as intervals for the read-out chain.
  auto to_iv = [](const QMat& m) {
    std::vector<std::vector<Interval>> r(m.size());
    for (std::size_t i = 0; i < m.size(); ++i)
      for (const auto& q : m[i]) r[i].emplace_back(q, kPrec);
    return r;
  };
  std::vector<std::vector<std::vector<Interval>>> WVi(H);
  for (std::size_t h = 0; h < H; ++h) WVi[h] = to_iv(WV[h]);
  auto WOi = to_iv(WO), WDi = to_iv(WD);

  // Optional trace: per head, the group and its target logits (Claim 1: reproduced exactly).
  std::vector<std::vector<std::pair<std::size_t, const Value*>>> trace_targets(H);
  if (const Value* trv = cert.find("trace")) {
    if (trv->type != json::Type::Array || trv->items.size() != H) { why = "trace: expected one entry per head"; return false; }
    for (std::size_t h = 0; h < H; ++h) {
      const Value& e = trv->items[h];
      const Value* gv = member(e, at("trace", h), "group", json::Type::Array, why);
      const Value* lv = gv ? member(e, at("trace", h), "target_logits", json::Type::Array, why) : nullptr;
      if (!lv) return false;
      if (gv->items.size() != lv->items.size()) { why = at("trace", h) + ": group and target_logits differ in length"; return false; }
      for (std::size_t i = 0; i < gv->items.size(); ++i) {
        std::size_t t = 0;
        if (!read_size(gv->items[i], at(at("trace", h) + ".group", i), T - 1, t, why)) return false;
        trace_targets[h].push_back({t, &lv->items[i]});
      }
    }
  }
  std::vector<std::vector<const Value*>> target_of(H, std::vector<const Value*>(T, nullptr));
  for (std::size_t h = 0; h < H; ++h)
    for (auto& [t, v] : trace_targets[h]) target_of[h][t] = v;

  // ---- forward pass per example ----
  const std::size_t m = H * d;
  std::vector<double> C(T * m), R(T * m);
  Scratch s(n);
  for (std::size_t t = 0; t < T; ++t) {
    Scaled Es = scale_matrix(E[t]);
    QMat erow{Q[t]};
    Scaled es = scale_matrix(erow);
    std::vector<Interval> ocat;
    ocat.reserve(H * dv);
    // The context's entries as MPFR bounds, once per example.
    std::vector<__mpfr_struct> Elo(n * d), Ehi(n * d);
    for (std::size_t i = 0; i < n * d; ++i) {
      mpfr_init2(&Elo[i], kPrec);
      mpfr_init2(&Ehi[i], kPrec);
      mpfr_set_q(&Elo[i], E[t][i / d][i % d].get_mpq_t(), MPFR_RNDD);
      mpfr_set_q(&Ehi[i], E[t][i / d][i % d].get_mpq_t(), MPFR_RNDU);
    }
    struct EGuard {
      std::vector<__mpfr_struct>& a; std::vector<__mpfr_struct>& b;
      ~EGuard() { for (auto& x : a) mpfr_clear(&x); for (auto& x : b) mpfr_clear(&x); }
    } eguard{Elo, Ehi};
    for (std::size_t h = 0; h < H; ++h) {
      // (1) exact logits: E (W_K (W_Q^T e)) / (den_E den_K den_Q den_e)
      ZRow v = zmul(WQ[h].num, es.num[0], /*transpose=*/true);
      ZRow k = zmul(WK[h].num, v, false);
      ZRow a = zmul(Es.num, k, false);
      mpz_class den = Es.den * WK[h].den * WQ[h].den * es.den;  // > 0
      if (const Value* tv2 = target_of[h][t]) {
        QRow logits(n);
        for (std::size_t j = 0; j < n; ++j) { logits[j] = mpq_class(a[j], den); logits[j].canonicalize(); }
        QRow target;
        if (!read_rational_vector(*tv2, "trace[" + std::to_string(h) + "].target_logits", n, target, why)) return false;
        if (target != logits) {
          why = "trace[" + std::to_string(h) + "]: target logits of example " + std::to_string(t) +
                " differ from E W_K W_Q^T e recomputed from the weights";
          return false;
        }
      }
      // (2) softmax enclosure: a_j - M with the integer M = max_j a_j (numerators), exp, normalise.
      std::size_t jm = 0;
      for (std::size_t j = 1; j < n; ++j) if (a[j] > a[jm]) jm = j;
      mpfr_set_zero(s.sl, 1);
      mpfr_set_zero(s.sh, 1);
      for (std::size_t j = 0; j < n; ++j) {
        mpz_class df = a[j] - a[jm];  // <= 0; divided by den > 0 keeps the rounding directions
        mpfr_set_z(s.t, df.get_mpz_t(), MPFR_RNDD);
        mpfr_div_z(s.t, s.t, den.get_mpz_t(), MPFR_RNDD);
        mpfr_exp(&s.al[j], s.t, MPFR_RNDD);
        mpfr_set_z(s.t, df.get_mpz_t(), MPFR_RNDU);
        mpfr_div_z(s.t, s.t, den.get_mpz_t(), MPFR_RNDU);
        mpfr_exp(&s.ah[j], s.t, MPFR_RNDU);
        mpfr_add(s.sl, s.sl, &s.al[j], MPFR_RNDD);
        mpfr_add(s.sh, s.sh, &s.ah[j], MPFR_RNDU);
      }
      for (std::size_t j = 0; j < n; ++j) {
        mpfr_div(&s.al[j], &s.al[j], s.sh, MPFR_RNDD);
        mpfr_div(&s.ah[j], &s.ah[j], s.sl, MPFR_RNDU);
      }
      // (3) p = E^T alpha, entrywise enclosure; centre/radius as doubles for the Gram test
      std::vector<Interval> p;
      p.reserve(d);
      for (std::size_t c = 0; c < d; ++c) {
        mpfr_set_zero(s.pl, 1);
        mpfr_set_zero(s.ph, 1);
        for (std::size_t j = 0; j < n; ++j) {
          mpfr_srcptr elo = &Elo[j * d + c], ehi = &Ehi[j * d + c];
          mpfr_mul(s.t, elo, mpfr_sgn(elo) >= 0 ? &s.al[j] : &s.ah[j], MPFR_RNDD);
          mpfr_add(s.pl, s.pl, s.t, MPFR_RNDD);
          mpfr_mul(s.t, ehi, mpfr_sgn(ehi) >= 0 ? &s.ah[j] : &s.al[j], MPFR_RNDU);
          mpfr_add(s.ph, s.ph, s.t, MPFR_RNDU);
        }
        mpfr_add(s.mid, s.pl, s.ph, MPFR_RNDN);
        mpfr_div_2ui(s.mid, s.mid, 1, MPFR_RNDN);
        const double cd = mpfr_get_d(s.mid, MPFR_RNDN);
        if (!std::isfinite(cd)) { why = "forward pass: non-finite value"; return false; }
        mpfr_set_d(s.mid, cd, MPFR_RNDN);
        mpfr_sub(s.rad, s.ph, s.mid, MPFR_RNDU);
        double r1 = mpfr_get_d(s.rad, MPFR_RNDU);
        mpfr_sub(s.rad, s.mid, s.pl, MPFR_RNDU);
        double r2 = mpfr_get_d(s.rad, MPFR_RNDU);
        C[t * m + h * d + c] = cd;
        R[t * m + h * d + c] = std::max(std::max(r1, r2), 0.0);
        mpq_class ql, qh;
        mpfr_get_q(ql.get_mpq_t(), s.pl);
        mpfr_get_q(qh.get_mpq_t(), s.ph);
        p.emplace_back(ql, qh, kPrec);
      }
      // (4) o_h = W_V^T p
      for (std::size_t vv = 0; vv < dv; ++vv) {
        Interval acc(kPrec);
        for (std::size_t c = 0; c < d; ++c)
          if (sgn(WV[h][c][vv]) != 0) acc = acc + WVi[h][c][vv] * p[c];
        ocat.push_back(acc);
      }
    }
    // (5) o = W_O^T [o_1; ...; o_H] (+ e), (6) y_hat = W_D^T o
    std::vector<Interval> o;
    o.reserve(d);
    for (std::size_t c = 0; c < d; ++c) {
      Interval acc(kPrec);
      for (std::size_t i = 0; i < H * dv; ++i)
        if (sgn(WO[i][c]) != 0) acc = acc + WOi[i][c] * ocat[i];
      if (skip) acc = acc + Interval(Q[t][c], kPrec);
      o.push_back(acc);
    }
    std::vector<Interval> y;
    for (std::size_t c = 0; c < dout; ++c) {
      Interval acc(kPrec);
      for (std::size_t k2 = 0; k2 < d; ++k2)
        if (sgn(WD[k2][c]) != 0) acc = acc + WDi[k2][c] * o[k2];
      y.push_back(acc);
    }
    if (class_labels) {
      for (std::size_t c = 0; c < dout; ++c) {
        if (c == cls[t]) continue;
        if (!(y[cls[t]] - y[c]).is_positive()) {
          why = "labels: example " + std::to_string(t) + ": arg-max of y_hat is not certified to be class " + std::to_string(cls[t]);
          return false;
        }
      }
    } else {
      for (std::size_t c = 0; c < dout; ++c) {
        mpq_class lo = Y[t][c] - tol, hi = Y[t][c] + tol;
        if (!(y[c].is_valid() && mpfr_cmp_q(y[c].lo(), lo.get_mpq_t()) >= 0 && mpfr_cmp_q(y[c].hi(), hi.get_mpq_t()) <= 0)) {
          why = "labels: example " + std::to_string(t) + ", output " + std::to_string(c) +
                ": y_hat is not certified within tolerance of the label";
          return false;
        }
      }
    }
  }

  // ---- rank(Z) >= T: Gram of the centres + Rump ----
  const double u = std::ldexp(1.0, -53), eta = std::ldexp(1.0, -1074);
  const double nu = upd(double(m) * u);
  if (!(nu < 0.5)) { why = "rank: dimension too large"; return false; }
  const double gam = upd(nu / dnd(1.0 - nu));
  std::vector<double> g(T * T);
  double sumsq = 0, radF2 = 0;
  for (std::size_t a = 0; a < T; ++a) {
    double sq = 0;
    for (std::size_t j = 0; j < m; ++j) {
      sq += C[a * m + j] * C[a * m + j];
      radF2 += R[a * m + j] * R[a * m + j];
    }
    sumsq = upd(sumsq + upd(upd(sq * upd(1.0 + 2.0 * gam)) + double(m) * eta));  // sq computed in RN: inflate
    for (std::size_t b = 0; b <= a; ++b) {
      double acc = 0;
      for (std::size_t j = 0; j < m; ++j) acc += C[a * m + j] * C[b * m + j];
      g[a * T + b] = acc;
      g[b * T + a] = acc;
    }
  }
  // ||R||_F^2 computed in round-to-nearest over T m terms: inflate by (1 + 2 (Tm) u).
  radF2 = upd(radF2 * upd(1.0 + upd(2.0 * double(T * m + 2) * u)) + eta);
  // |fl(G)_ab - G_ab| <= gam ||c_a|| ||c_b|| + m eta, so ||error||_2 <= gam sum_a ||c_a||^2 + T m eta.
  const double gerr = upd(upd(gam * sumsq) + upd(double(T) * double(m) * eta));
  const double mu = upd(upd(2.0 * radF2) + 1e-300);
  for (std::size_t j = 0; j < T; ++j) g[j * T + j] = dnd(g[j * T + j] - mu);
  if (!std::isfinite(gerr) || !rump_pd(std::move(g), T, gerr)) {
    why = "rank: could not certify rank(Z) >= " + std::to_string(T) +
          " (Gram matrix of the enclosure centres minus ||R||_F^2 not proved positive definite)";
    return false;
  }
  return true;
}

}  // namespace memcert_checker
