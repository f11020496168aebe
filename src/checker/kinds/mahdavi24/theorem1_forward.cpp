// Theorem 1's forward pass, example by example (steps 1, 2, 4 of check_theorem1.cpp): exact logits per head
// with the trace's Claim 1 targets, Lemma 3's saturation data and Lemma 4's scale on the earlier examples,
// the softmax and mixing enclosures that make row t of Z, and the read-out checked against the labels.
// Each example reads only shared constant data and writes only its own row of Z, its limit tokens and its
// thread's scratch.
#include <algorithm>
#include <memory>

#include "kernel/context.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker::theorem1 {

namespace {

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

// One example's context and query in the forms the products use (built per example, dropped after).
struct ExampleData {
  Scaled Es;     // the context as integers over one denominator (Es.num built only when needed)
  SmallInts Ed;  // the same numerators as doubles when they are small
  Scaled es;     // the query
  mpz_class den_e;
  // Es.num from Ed, for a route that needs big integers.
  void need_num(std::size_t n, std::size_t d) {
    if (!Es.num.empty()) return;
    Es.num.assign(n, ZRow(d));
    for (std::size_t i = 0; i < n * d; ++i) mpz_set_d(Es.num[i / d][i % d].get_mpz_t(), Ed.v[i]);  // exact
  }
};

// The context of example t: exact scaled forms, the largest squared token norm B^2 so far, the tokens as
// double midpoint-radius (and Lemma 5's copy of them when every token is kept), their column bounds.
bool example_context(Theorem1& k, std::size_t t, Scratch& s, ExampleData& ex, std::string& err) {
  const std::size_t n = k.n, d = k.d;
  const bool by_file = k.by_file, tok_by_head = k.tok_by_head;
  const AttentionArrays* arrays_ptr = k.arrays;
  const std::vector<QMat>& E = k.E;
  const QMat& Q = k.Q;
  auto &TokM = k.TokM, &TokR = k.TokR;
  mpfr_ptr t1 = s.tmp[0], t2 = s.tmp[1];
  // Referenced data: this example's context straight from its doubles as integers over 2^k (or, when a
  // scaled value overflows a double, as exact rationals first); built here and dropped after.
  // Referenced doubles whose scaled values fit 53 bits go straight into ex.Ed (no big integer per entry);
  // ex.Es.num is then built only if a big-integer route needs it (need_num).
  thread_local std::vector<double> wide;  // a float32 context widened (exactly), this example only
  const double* ctx = nullptr;
  if (by_file) {
    if (arrays_ptr->contexts_f32.empty()) {
      ctx = &arrays_ptr->contexts[t * n * d];
    } else {
      wide.assign(arrays_ptr->contexts_f32.begin() + t * n * d, arrays_ptr->contexts_f32.begin() + (t + 1) * n * d);
      ctx = wide.data();
    }
  }
  const bool direct = by_file && scale_doubles_small(ctx, n, d, ex.Es.den, ex.Ed);
  if (!direct && (!by_file || !scale_doubles(ctx, n, d, ex.Es))) {
    QMat Eref;
    if (by_file) {
      Eref.assign(n, QRow(d));
      const double* src = ctx;
      for (std::size_t i = 0; i < n * d; ++i) mpq_set_d(Eref[i / d][i % d].get_mpq_t(), src[i]);  // exact
    }
    ex.Es = scale_matrix(by_file ? Eref : E[t]);
  }
  ex.es = scale_matrix(QMat{Q[t]});
  if (!direct) ex.Ed = SmallInts(ex.Es.num, false);
  ex.den_e = ex.Es.den * ex.es.den;
  // B^2 (squared token norms) and the context as double midpoint-radius (exact for double entries).
  const bool sq128 = ex.Ed.ok && d < (std::size_t(1) << 20);  // |E| <= 2^53: d squares below 2^126
  for (std::size_t j = 0; j < n; ++j) {
    mpz_class s2 = 0;
    if (sq128) {
      u128 acc = 0;
      for (std::size_t c = 0; c < d; ++c) {
        const auto x = static_cast<std::int64_t>(ex.Ed.v[j * d + c]);
        acc += static_cast<u128>(static_cast<i128>(x) * x);
      }
      set_i128(s2, static_cast<i128>(acc));
    } else {
      ex.need_num(n, d);
      for (std::size_t c = 0; c < d; ++c) mpz_addmul(s2.get_mpz_t(), ex.Es.num[j][c].get_mpz_t(), ex.Es.num[j][c].get_mpz_t());
    }
    mpq_class q2(s2, ex.Es.den * ex.Es.den);
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
  return true;
}

// (1) Head h's exact logits E (W_K (W_Q^T e)) into s.a, over the positive denominator s.den.
void head_logits(const Theorem1& k, std::size_t h, Scratch& s, ExampleData& ex) {
  const std::size_t n = k.n, d = k.d, dh = k.dh;
  const auto& WQg = k.WQg;
  const auto& WKd = k.WKd;
  const auto &WQ = k.WQ, &WK = k.WK;
  const auto& den_kq = k.den_kq;
    // (1) exact logits: E (W_K (W_Q^T e)) / (den_E den_K den_Q ex.den_e)
    WQg[h].transposed_times(WQ[h].num, ex.es.num[0], s.v, s.df);  // v = W_Q^T e
    // E W_K costs n d d_h products, E (W_K v) in 128-bit pieces about n d (3 + 1): the latter first
    // unless d_h is small.
    if (dh > 8 && logits_split(ex.Ed, WKd[h], s.v, s.a, s.df)) {
    } else if (exact_product(ex.Ed, WKd[h], s.F)) {  // a = (E W_K) v with E W_K exact in doubles: fewer big products
      s.a.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        mpz_set_ui(s.a[j].get_mpz_t(), 0);
        for (std::size_t i = 0; i < dh; ++i) addmul_d(s.a[j], s.v[i], s.F[j * dh + i]);
      }
    } else if (logits_split(ex.Ed, WKd[h], s.v, s.a, s.df)) {  // E (W_K v) in 128-bit pieces
    } else if (exact_product_128(ex.Ed, WKd[h], s.F128)) {  // the same with E W_K exact in 128 bits
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
      ex.need_num(n, d);
      zmul(ex.Es.num, s.k, false, s.a);
    }
      mpz_mul(s.den.get_mpz_t(), ex.den_e.get_mpz_t(), den_kq[h].get_mpz_t());  // > 0
}

// Claim 1's target logits; Lemma 3's w^T e = 0 on the group and, on an earlier example, the unique
// maximum j* of s = (w^T e) E g, the gap and spread it contributes, and Lemma 4's bound on c.
bool head_trace_checks(Theorem1& k, std::size_t t, std::size_t h, Scratch& s, ExampleData& ex, std::string& err) {
  const std::size_t n = k.n, d = k.d, H = k.H, T = k.T;
  const HeadTrace& x = k.ht[h];
  const auto& grp = k.grp;
  const auto& target_of = k.target_of;
  const bool tok_by_head = k.tok_by_head;
  auto &TokM = k.TokM, &TokR = k.TokR;
  auto& jstar = k.jstar;
    const ZRow& a = s.a;
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
    if (x.sat && grp[t] <= h) {  // w^T e = wenum / (den_w ex.den_e)
      mpz_set_ui(s.wenum.get_mpz_t(), 0);
      for (std::size_t c = 0; c < d; ++c) mpz_addmul(s.wenum.get_mpz_t(), x.ws.num[0][c].get_mpz_t(), ex.es.num[0][c].get_mpz_t());
    }
    if (x.sat && grp[t] == h && sgn(s.wenum) != 0) {  // (20): w^T e = 0 on the group
      err = "trace[" + std::to_string(h) + "]: w^T e != 0 for example " + std::to_string(t) + " of the group";
      return false;
    }
    if (x.sat && grp[t] < h) {  // an earlier example: saturation data and Lemma 4
      const std::string w = "trace[" + std::to_string(h) + "]";
      mpq_class we(s.wenum, x.ws.den * ex.es.den);
      we.canonicalize();
      if (sgn(we) == 0) { err = w + ": w^T e = 0 for the earlier example " + std::to_string(t); return false; }
      if (exact_product(ex.Ed, x.gd, s.F)) {  // E g = eg / (den_E den_g)
        s.eg.resize(n);
        for (std::size_t j = 0; j < n; ++j) mpz_set_d(s.eg[j].get_mpz_t(), s.F[j]);
      } else if (exact_product_128(ex.Ed, x.gd, s.F128)) {
        s.eg.resize(n);
        for (std::size_t j = 0; j < n; ++j) set_i128(s.eg[j], s.F128[j]);
      } else {
        ex.need_num(n, d);
        zmul(ex.Es.num, x.gs.num[0], false, s.eg);
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
      mpz_class Dg = ex.Es.den * x.gs.den;
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
  return true;
}

// (2) Head h's softmax enclosure from its exact logits, (3) p = E^T alpha into row t of Z, (4) o_h.
bool head_mix(Theorem1& k, std::size_t t, std::size_t h, Scratch& s, std::string& err) {
  const std::size_t n = k.n, d = k.d, dv = k.dv, m = k.m;
  mpfr_ptr t1 = s.tmp[0], t2 = s.tmp[1], t3 = s.tmp[2];
  const ZRow& a = s.a;
  const mpz_class& den = s.den;
  auto &C = k.C, &R = k.R;
  auto& WVs = k.WVs;
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
  return true;
}

// (5) o = W_O^T [o_1; ...; o_H] (+ e), (6) y_hat = W_D^T o, against the label.
bool example_readout(const Theorem1& k, std::size_t t, Scratch& s, std::string& err) {
  const std::size_t d = k.d, dout = k.dout;
  mpfr_ptr t1 = s.tmp[0], t2 = s.tmp[1], t3 = s.tmp[2];
  const SparseIv &WOs = *k.WOs, &WDs = *k.WDs;
  const bool skip = k.skip, class_labels = k.class_labels;
  const QMat &Q = k.Q, &Y = k.Y;
  const auto& cls = k.cls;
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
}

// Example t through every head and the read-out (steps 1, 2, 4).
bool check_example(Theorem1& k, std::size_t t, Scratch& s, std::string& err) {
  ExampleData ex;
  if (!example_context(k, t, s, ex, err)) return false;
  s.ocl.zero();
  s.och.zero();
  for (std::size_t h = 0; h < k.H; ++h) {
    head_logits(k, h, s, ex);
    if (!head_trace_checks(k, t, h, s, ex, err) || !head_mix(k, t, h, s, err)) return false;
  }
  return example_readout(k, t, s, err);
}

}  // namespace

bool check_forward_pass(Theorem1& k, unsigned threads, std::string& why) {
  const std::size_t H = k.H, n = k.n, d = k.d, dv = k.dv, dout = k.dout, T = k.T;
  const auto& ht = k.ht;
  const std::size_t m = k.m = H * d;
  k.C.assign(T * m, 0.0);
  k.R.assign(T * m, 0.0);
  // For Lemma 5's sigma (below): every token as double midpoint-radius, and per (head, earlier example)
  // the unique maximum j* of s = (w^T e) E g.
  // Only the limit tokens E_{j*} are read back: per (example, head) when H < n (slot h), else every
  // token (slot j) -- T min(H, n) d doubles each, not T n d.
  const bool tok_by_head = k.tok_by_head = H < n;
  const std::size_t slots = tok_by_head ? H : n;
  k.TokM.assign(T * slots * d, 0.0);
  k.TokR.assign(T * slots * d, 0.0);
  k.jstar.assign(H * T, 0);
  // Run it on every example (MPFR keeps its caches and flags per thread only when built with TLS).
  const unsigned fthreads = mpfr_buildopt_tls_p() ? std::max(threads, 1u) : 1u;
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (unsigned i = 0; i < fthreads; ++i) scratch.push_back(std::make_unique<Scratch>(n, d, H, dv, dout));
  auto step = [&](std::size_t t, unsigned worker, std::string& r) { return check_example(k, t, *scratch[worker], r); };
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
  return true;
}

}  // namespace memcert_checker::theorem1
