// dana24 construction, steps 1-7 of docs/papers/dana24.md section 5 (step 8 is argmax.cpp).
#include <Eigen/Dense>

#include <cmath>
#include <stdexcept>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/model/mha_enclosure.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/theory/dana24/construct.hpp"

namespace memcert::dana24 {

using dbound::dn;
using dbound::up;

namespace {

using EMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

EMat to_eigen(const DMatrix& a) {
  EMat m(a.rows(), a.cols());
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) m(i, j) = a(i, j);
  return m;
}
DMatrix from_eigen(const EMat& m) {
  DMatrix a(m.rows(), m.cols());
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) a(i, j) = m(i, j);
  return a;
}
// A uniform dyadic k / den with k in [lo, hi].
double dyadic(std::mt19937_64& rng, long lo, long hi, double den) {
  return static_cast<double>(std::uniform_int_distribution<long>(lo, hi)(rng)) / den;
}

}  // namespace

void dana24_base_embeddings(std::size_t N, std::size_t S, std::size_t d, std::mt19937_64& rng, BaseModel& m) {
  // Positive coordinates in [1, 3] (A.1 uses positive reals): x' = e' + pos' then lies in [2, 6]^d and
  // every sum is exact in double.
  m.e = DMatrix(N, d);
  m.pos = DMatrix(S, d);
  for (double& x : m.e.data()) x = dyadic(rng, 16, 48, 16);
  for (double& x : m.pos.data()) x = dyadic(rng, 16, 48, 16);
}

void dana24_rank_one_heads(std::size_t H, std::size_t d, std::size_t dh, std::mt19937_64& rng, BaseModel& m,
                           int boost) {
  // |q.x'| and |k.x'| grow like sqrt(d) * |q|_inf * 4; the scale 2^-floor(log2 sqrt d) / 2 keeps the
  // scores (q.x'_S)(k.x'_s) and, more importantly, their spread over s of order 1.
  const int shift = static_cast<int>(std::floor(std::log2(std::sqrt(static_cast<double>(d))))) + 1;
  const double den = std::ldexp(32.0, shift - boost);
  m.q = DMatrix(H, d);
  m.k = DMatrix(H, d);
  for (double& x : m.q.data()) x = dyadic(rng, -32, 32, den);
  for (double& x : m.k.data()) x = dyadic(rng, -32, 32, den);
  m.U.assign(H, DMatrix(dh, d));
  for (auto& u : m.U)
    for (double& x : u.data()) x = dyadic(rng, -16, 16, 16);
}

FeatureEnclosure dana24_attention_features(const AssocData& a, const BaseModel& m) {
  const std::size_t T = a.T(), S = a.S, d = m.e.cols(), H = m.q.rows();
  const std::size_t dh = H ? m.U[0].rows() : 0;
  std::vector<DMatrix> contexts(T, DMatrix(S, d));
  DMatrix queries(T, d);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t i = 0; i < d; ++i) contexts[t](s, i) = m.e(a.sequences[t][s], i) + m.pos(s, i);  // exact
    for (std::size_t i = 0; i < d; ++i) queries(t, i) = contexts[t](S - 1, i);
  }
  // Eq. (1) with W'^h = q_h k_h^T: score_s = x'(t,S)^T q_h k_h^T x'(t,s), which is the kernel's
  // E W_K W_Q^T e with W_K = k_h, W_Q = q_h (d x 1).
  std::vector<DMatrix> WK(H, DMatrix(d, 1)), WQ(H, DMatrix(d, 1));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < d; ++i) WK[h](i, 0) = m.k(h, i), WQ[h](i, 0) = m.q(h, i);
  ZEnclosureDouble z = mha_z_enclosure_double(contexts, queries, WK, WQ, 1);
  const std::size_t cols = d + H * dh;
  FeatureEnclosure f{DMatrix(T, cols, 0.0), DMatrix(T, cols, 0.0)};
  std::vector<DInterval> A(d);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < d; ++i) f.centre(t, i) = queries(t, i);  // the skip block, exact
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < d; ++i) {
        const double c = z.centre(t, h * d + i), r = z.radius(t, h * d + i);
        A[i] = {dn(c - r), up(c + r)};
      }
      for (std::size_t r = 0; r < dh; ++r) {
        DInterval g{0, 0};
        for (std::size_t i = 0; i < d; ++i) fma_into(g, m.U[h](r, i), A[i]);
        const double c = 0.5 * (g.lo + g.hi);  // any double works as centre: the radius covers it
        f.centre(t, d + h * dh + r) = c;
        f.radius(t, d + h * dh + r) = up(std::max(up(g.hi - c), up(c - g.lo)));
      }
    }
  }
  return f;
}

std::optional<EnclosureRankCertificate> dana24_certify_feature_rank(const FeatureEnclosure& f) {
  const std::size_t T = f.centre.rows();
  if (T > f.centre.cols()) return std::nullopt;  // more sequences than features: rank T impossible
  std::vector<std::size_t> rows(T);
  for (std::size_t t = 0; t < T; ++t) rows[t] = t;
  // Double Rump, then MPFR; the exact rational tier is cubic in big rationals and would dominate the
  // run on ill-conditioned draws, which are better redrawn.
  EnclosureFastOptions opt;
  opt.allow_exact = false;
  return enclosure_rank_lower_fast(f.centre, f.radius, rows, opt);
}

Targets dana24_targets(const AssocData& a, std::size_t d, Choice<Dana24Targets> kind, std::mt19937_64& rng) {
  const std::size_t N = a.N, T = a.T();
  const std::size_t b = hypercube_bits(N);
  Targets tg;
  tg.kind = kind.str();
  if (kind == Dana24Targets::automatic) tg.kind = (b <= d && b < 60) ? "hypercube" : "moment";
  if (tg.kind == "hypercube" && (b > d || d < 1)) throw std::invalid_argument("hypercube targets need N <= 2^d");
  if (tg.kind == "moment" && d < 2) throw std::invalid_argument("moment-curve targets need d >= 2");
  tg.WU = DMatrix(N, d, 0.0);
  tg.E = DMatrix(d, T, 0.0);
  if (tg.kind == "hypercube") {
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t i = 0; i < b; ++i) tg.WU(j, i) = ((j >> i) & 1) ? 1.0 : -1.0;
    // |zeta| <= 1/(4b), a dyadic with denominator 64 b (exact: b <= 60).
    const long zmax = 16;
    const double den = 64.0 * static_cast<double>(b);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t i = 0; i < d; ++i)
        tg.E(i, t) = (i < b ? tg.WU(a.next[t], i) : 0.0) + dyadic(rng, -zmax, zmax, den);
    tg.design_margin = 1.5;
  } else {
    for (std::size_t j = 0; j < N; ++j) {
      tg.WU(j, 0) = static_cast<double>(j);
      tg.WU(j, 1) = -static_cast<double>(j) * static_cast<double>(j);
    }
    for (std::size_t t = 0; t < T; ++t) {
      tg.E(0, t) = 2.0 * (static_cast<double>(a.next[t]) + dyadic(rng, -16, 16, 64));
      tg.E(1, t) = 1.0;
      for (std::size_t i = 2; i < d; ++i) tg.E(i, t) = dyadic(rng, -16, 16, 16);
    }
    tg.design_margin = 0.5;
  }
  return tg;
}

std::optional<Readout> dana24_solve_readout(const FeatureEnclosure& f, const Targets& tg, std::mt19937_64& rng) {
  const std::size_t T = f.centre.rows(), m = f.centre.cols(), d = tg.E.rows();
  const EMat Ft = to_eigen(f.centre);  // T x m = F~^T
  const EMat E = to_eigen(tg.E);       // d x T
  EMat X(d, m);
  if (T == m) {
    Eigen::PartialPivLU<EMat> lu(Ft);
    EMat Xt = lu.solve(E.transpose());
    Xt += lu.solve(E.transpose() - Ft * Xt);  // one step of iterative refinement
    X = Xt.transpose();
  } else {
    // F~ = Q R (thin); X = E* R^{-1} Q^T + Z (I - Q Q^T) solves X F~ = E* for any Z.
    const EMat F = Ft.transpose();
    Eigen::HouseholderQR<EMat> qr(F);
    const EMat Q = qr.householderQ() * EMat::Identity(m, T);
    const EMat R = qr.matrixQR().topLeftCorner(T, T).triangularView<Eigen::Upper>();
    const EMat Y = R.transpose().triangularView<Eigen::Lower>().solve(E.transpose()).transpose();  // E R^{-1}
    EMat Z(d, m);
    for (Eigen::Index i = 0; i < Z.size(); ++i) Z.data()[i] = dyadic(rng, -16, 16, 16);
    X = Y * Q.transpose() + Z - (Z * Q) * Q.transpose();
  }
  Readout r;
  r.M = DMatrix(d, d);
  r.WO = DMatrix(d, m - d);
  QMatrix Mq(d, d);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      const double x = X(i, j);
      if (!std::isfinite(x)) return std::nullopt;
      if (j < d) r.M(i, j) = x, Mq(i, j) = rational_from_double(x);
      else r.WO(i, j - d) = x;
    }
  r.det_M = qmat_det(Mq);  // exact
  if (r.det_M == 0) return std::nullopt;
  return r;
}

Model dana24_map_back(const BaseModel& b, const Readout& r, const Targets& tg, std::size_t dh) {
  const std::size_t N = b.e.rows(), S = b.pos.rows(), d = b.e.cols(), H = b.q.rows();
  const EMat M = to_eigen(r.M);
  const EMat P = M.fullPivLu().inverse();
  Model md;
  md.N = N, md.S = S, md.d = d, md.dh = dh, md.H = H;
  md.e = from_eigen(to_eigen(b.e) * M.transpose());      // row n = (M e'(n))^T
  md.pos = from_eigen(to_eigen(b.pos) * M.transpose());
  md.WU = tg.WU;
  const EMat q = to_eigen(b.q) * P, k = to_eigen(b.k) * P;  // row h = (P^T q_h)^T
  for (std::size_t h = 0; h < H; ++h) {
    DMatrix wq(dh, d, 0.0), wk(dh, d, 0.0);
    for (std::size_t i = 0; i < d; ++i) wq(0, i) = q(h, i), wk(0, i) = k(h, i);
    md.WQ.push_back(wq);
    md.WK.push_back(wk);
    md.WV.push_back(from_eigen(to_eigen(b.U[h]) * P));
    DMatrix wo(d, dh);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < dh; ++j) wo(i, j) = r.WO(i, h * dh + j);
    md.WO.push_back(wo);
  }
  return md;
}

}  // namespace memcert::dana24
