// Theorem 1's Gram-matrix steps: Lemma 5's sigma_lower per head (or the B.2 head's rank) re-certified on
// the Gram matrix of that step's Z_inf, and rank(Z) >= T for every matrix of the enclosure (Rump's test).
#include <algorithm>
#include <cmath>

#include "kernel/context.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker::theorem1 {

namespace {

// acc += the lower triangle of fl(C_h C_h^T) (C_h: head h's T x d block of the centres); with rowsq and
// rad2, also each row's squared norm and squared radius (round-to-nearest sums).
void gram_add_head(Theorem1& z, std::size_t h, std::vector<double>* rowsq, std::vector<double>* rad2, unsigned threads) {
  const std::size_t T = z.T, d = z.d, m = z.m;
  const auto &C = z.C, &R = z.R;
  auto &acc = z.acc, &Ch = z.Ch;
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t c = 0; c < d; ++c) {
      const double zc = C[i * m + h * d + c], r = R[i * m + h * d + c];
      Ch[i * d + c] = zc;
      if (rowsq) (*rowsq)[i] += zc * zc, (*rad2)[i] += r * r;
    }
  syrk_lower(Ch.data(), d, T, d, acc.data(), T, /*subtract=*/false, threads);
  z.acc_heads = h + 1;
}

// Error bounds of a Gram matrix accumulated over `blocks` head blocks (mk = blocks d products per
// entry, one blocked dot product per block and one addition each) on k rows whose squared norms and
// radii (summed in round-to-nearest) are norm2 and xr2: gerr >= ||fl(G) - G||_2, radF >= ||R||_F.
bool lemma5_gram_bounds(std::size_t d, std::size_t k, std::size_t blocks, double norm2, double xr2, double& gerr, double& radF) {
  const double eta5 = std::ldexp(1.0, -1074);
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
}

}  // namespace

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
bool check_lemma5_sigma(Theorem1& z, unsigned threads, std::string& why) {
  const std::size_t H = z.H, n = z.n, d = z.d, T = z.T, m = z.m;
  const auto &C = z.C, &R = z.R, &TokM = z.TokM, &TokR = z.TokR;
  const auto& ht = z.ht;
  const auto& jstar = z.jstar;
  const bool tok_by_head = z.tok_by_head;
  auto& acc = z.acc;
  z.acc.assign(T * T, 0.0);
  z.Ch.assign(T * d, 0.0);
  z.acc_heads = 0;
  std::vector<double> gx, X;
  std::vector<double> rowsq(T, 0.0), rad2(T, 0.0);             // same heads: squared row norms (RN sums)
  std::size_t last = 0;  // the last head whose sigma is used
  for (std::size_t h = 0; h < H; ++h)
    if (ht[h].sat) last = h + 1;
  mpfr_t sq;
  mpfr_init2(sq, 64);
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
      bool ok = lemma5_gram_bounds(d, K, h, norm2, xr2, gerr, radF);
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
      if (!lemma5_gram_bounds(d, k, h + 1, norm2, xr2, gerr, radF)) { why = "trace: dimension too large"; mpfr_clear(sq); return false; }
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
    if (h + 1 < last) gram_add_head(z, h, &rowsq, &rad2, threads);
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
  return true;
}

bool check_rank_Z(Theorem1& z, unsigned threads, std::string& why) {
  const std::size_t H = z.H, T = z.T, m = z.m;
  const auto &C = z.C, &R = z.R;
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
  for (std::size_t h = z.acc_heads; h < H; ++h) gram_add_head(z, h, nullptr, nullptr, threads);
  std::vector<double> g = std::move(z.acc);
  for (std::size_t j = 0; j < T; ++j) g[j * T + j] = dn(g[j * T + j] - mu);
  if (!std::isfinite(gerr) || !rump_pd(g, T, gerr, threads)) {
    why = "rank: could not certify rank(Z) >= " + std::to_string(T) +
          " (Gram matrix of the enclosure centres minus ||R||_F^2 not proved positive definite)";
    return false;
  }
  return true;
}

}  // namespace memcert_checker::theorem1
