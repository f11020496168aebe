// Rump's floating-point PD certificate and the tiered enclosure rank: every certified mu is confirmed
// by exact rational LDL^T (independent second method); ill-conditioned and singular inputs make the
// double tier decline, and the escalation answers (or everything declines when the claim is false).
#include "catch.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <random>

#include "memcert/checker/checker.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/nmod/gemm_plain.hpp"

using namespace memcert;

namespace {

QMatrix to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}
// Exact: C_S C_S^T - mu I positive definite.
bool exact_gram_minus_mu_pd(const DMatrix& c, const std::vector<std::size_t>& rows, const Rational& mu) {
  QMatrix cs = to_q(mat_select_rows(c, rows));
  QMatrix g = mat_mul(cs, mat_transpose(cs));
  for (std::size_t i = 0; i < g.rows(); ++i) g(i, i) -= mu;
  return qmat_is_positive_definite(g);
}
std::vector<std::size_t> iota_rows(std::size_t k) {
  std::vector<std::size_t> r(k);
  for (std::size_t i = 0; i < k; ++i) r[i] = i;
  return r;
}
DMatrix hilbert(std::size_t n) {
  DMatrix h(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) h(i, j) = 1.0 / static_cast<double>(i + j + 1);
  return h;
}
EnclosureFastOptions double_only() {
  EnclosureFastOptions o;
  o.allow_mpfr = false;
  o.allow_exact = false;
  return o;
}

}  // namespace

TEST_CASE("rump_isspd: identity and PD matrices certify, indefinite and singular decline", "[linalg][fast]") {
  REQUIRE(rump_isspd(DMatrix::identity(50)).certified);
  REQUIRE(rump_isspd(DMatrix(0, 0)).certified);
  DMatrix a = DMatrix::identity(3);
  a(2, 2) = -1;
  REQUIRE(!rump_isspd(a).certified);
  DMatrix s(2, 2, 1.0);  // [[1,1],[1,1]]: singular PSD
  REQUIRE(!rump_isspd(s).certified);
  // PD but within the radius of a singular matrix: must decline.
  DMatrix e = DMatrix::identity(4);
  e(3, 3) = 1e-3;
  REQUIRE(rump_isspd(e, 1e-4).certified);
  REQUIRE(!rump_isspd(e, 2e-3).certified);
}

TEST_CASE("rump_isspd never certifies a matrix that is not PD (exact check)", "[linalg][fast]") {
  std::mt19937_64 g(71);
  std::normal_distribution<double> nd;
  int certified = 0, declined = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t n = 2 + g() % 10;
    DMatrix c(n, n + 1);
    for (auto& x : c.data()) x = nd(g);
    DMatrix a(n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double s = 0;
        for (std::size_t l = 0; l < c.cols(); ++l) s += c(i, l) * c(j, l);
        a(i, j) = a(j, i) = s;
      }
    // Shift to straddle lambda_min: some are PD by a hair, some indefinite by a hair.
    const double shift = std::ldexp(1.0, -static_cast<int>(g() % 50)) * (it % 2 ? 1 : -1);
    QMatrix exact = to_q(a);
    for (std::size_t i = 0; i < n; ++i) a(i, i) -= 1e-2 * (1 + shift);
    exact = to_q(a);
    const bool pd = qmat_is_positive_definite(exact);
    const bool cert = rump_isspd(a).certified;
    if (cert) REQUIRE(pd);
    (cert ? certified : declined)++;
  }
  REQUIRE(certified > 0);
}

TEST_CASE("double-rump enclosure certificate is exact-correct and the checker re-runs it", "[linalg][fast]") {
  std::mt19937_64 g(72);
  std::normal_distribution<double> nd;
  for (std::size_t k : {1u, 3u, 20u, 60u}) {
    DMatrix c(k, k + 7), r(k, k + 7, 1e-6);
    for (auto& x : c.data()) x = nd(g);
    auto rows = iota_rows(k);
    auto cert = enclosure_rank_lower_fast(c, r, rows, double_only());
    REQUIRE(cert);
    REQUIRE(cert->method == "double-rump");
    REQUIRE(cert->mu > cert->radius_frobenius_sq);
    REQUIRE(cert->radius_frobenius_sq == to_q(r).data()[0] * to_q(r).data()[0] * Rational(k * (k + 7)));
    REQUIRE(exact_gram_minus_mu_pd(c, rows, cert->mu));
    auto v = memcert_checker::verify_certificate_text(enclosure_rank_fast_certificate_to_json(c, r, *cert).dump());
    INFO(v.reason);
    REQUIRE(v.valid);
    REQUIRE(v.kind == "enclosure-rank-rump");
    // Tampering with mu (far above sigma_min^2) is rejected by the checker.
    auto bad = *cert;
    bad.mu *= 1000;
    REQUIRE(!memcert_checker::verify_certificate_text(enclosure_rank_fast_certificate_to_json(c, r, bad).dump()).valid);
  }
}

TEST_CASE("Hilbert matrices: the double tier declines and the escalation answers", "[linalg][fast]") {
  for (std::size_t n : {10u, 14u}) {
    DMatrix h = hilbert(n), r(n, n, 0.0);
    auto rows = iota_rows(n);
    REQUIRE(!enclosure_rank_lower_fast(h, r, rows, double_only()));
    auto cert = enclosure_rank_lower_fast(h, r, rows);
    REQUIRE(cert);
    REQUIRE((cert->method.rfind("mpfr-", 0) == 0 || cert->method == "exact-ldl"));
    REQUIRE(exact_gram_minus_mu_pd(h, rows, cert->mu));
    EnclosureFastOptions exact_only = double_only();
    exact_only.allow_exact = true;
    auto e = enclosure_rank_lower_fast(h, r, rows, exact_only);
    REQUIRE(e);
    REQUIRE(e->method == "exact-ldl");
    REQUIRE(exact_gram_minus_mu_pd(h, rows, e->mu));
  }
}

TEST_CASE("a tiny singular value declines in double, escalates; exact singularity declines everywhere", "[linalg][fast]") {
  std::mt19937_64 g(73);
  std::normal_distribution<double> nd;
  const std::size_t k = 12, n = 20;
  DMatrix c(k, n);
  for (auto& x : c.data()) x = nd(g);
  // Last row = exactly half the first (scaling by 2^-1 is exact) + 2^-40 e_3: sigma_min ~ 1e-12.
  DMatrix near = c;
  for (std::size_t j = 0; j < n; ++j) near(k - 1, j) = 0.5 * c(0, j);
  DMatrix singular = near;
  near(k - 1, 3) += std::ldexp(1.0, -40);
  DMatrix r(k, n, 0.0);
  auto rows = iota_rows(k);
  REQUIRE(!enclosure_rank_lower_fast(near, r, rows, double_only()));
  auto cert = enclosure_rank_lower_fast(near, r, rows);
  REQUIRE(cert);
  REQUIRE(cert->method != "double-rump");
  REQUIRE(exact_gram_minus_mu_pd(near, rows, cert->mu));
  REQUIRE(!enclosure_rank_lower_fast(singular, r, rows));  // false claim: every tier declines
  auto s = sigma_min_sq_lower_fast(singular);
  REQUIRE(!s);
  // A radius larger than the tiny singular value: rank k is not provable; nothing certifies.
  DMatrix big(k, n, 1e-9);
  REQUIRE(!enclosure_rank_lower_fast(near, big, rows));
}

TEST_CASE("rational enclosures and thread-count independence", "[linalg][fast]") {
  std::mt19937_64 g(74);
  QMatrix c(5, 8), r(5, 8, Rational(1, 1000000));
  for (auto& x : c.data()) x = Rational(static_cast<long>(g() % 201) - 100, 3 + static_cast<long>(g() % 5));
  auto cert = enclosure_rank_lower_fast(c, r, iota_rows(5));
  REQUIRE(cert);
  REQUIRE(cert->mu > cert->radius_frobenius_sq);
  REQUIRE(cert->radius_frobenius_sq >= Rational(40) / Rational(1000000) / Rational(1000000));  // widened, never narrowed

  std::normal_distribution<double> nd;
  DMatrix d(150, 400), rd(150, 400, 1e-8);
  for (auto& x : d.data()) x = nd(g);
  fast_set_threads(1);
  auto g1 = gram_double(d);
  auto c1 = enclosure_rank_lower_fast(d, rd, iota_rows(150), double_only());
  fast_set_threads(2);
  auto g2 = gram_double(d);
  auto c2 = enclosure_rank_lower_fast(d, rd, iota_rows(150), double_only());
  REQUIRE(g1.g == g2.g);
  REQUIRE(g1.err2 == g2.err2);
  REQUIRE(c1);
  REQUIRE(c2);
  REQUIRE(c1->mu == c2->mu);
  REQUIRE(c1->method == c2->method);
}

// The half Gram product (block rows against the columns up to the block's end, B read by rows) against
// the exact rational Gram matrix: every lower entry within the bound err2 (which bounds the 2-norm, hence
// every entry), sizes that cross the 256-row blocks; and gemm_plain_sub_bt against gemm_plain_sub fed
// the explicit transpose (both compute each entry as one dot product, so they agree to the bound).
TEST_CASE("gram_lower_double: lower triangle within err2 of the exact Gram matrix", "[linalg][fast]") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0, 1);
  for (auto [k, n] : {std::pair<std::size_t, std::size_t>{7, 5}, {300, 40}, {40, 300}}) {
    DMatrix c(k, n);
    for (double& x : c.data()) x = g(rng) * (1 + static_cast<double>(k % 5));
    std::vector<double> lower(k * k, 12345.0);
    const double err2 = gram_lower_double(c.data().data(), k, n, lower.data(), 2);
    REQUIRE(std::isfinite(err2));
    QMatrix exact = mat_mul(to_q(c), mat_transpose(to_q(c)));
    const Rational bound = rational_from_double(err2);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        Rational diff = rational_from_double(lower[i * k + j]) - exact(i, j);
        if (sgn(diff) < 0) diff = -diff;
        REQUIRE(diff <= bound);
      }
    // gram_double (both triangles) is the same lower triangle, symmetrised.
    GramDouble full = gram_double(c, 1);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        CHECK(full.g(i, j) == lower[i * k + j]);
        CHECK(full.g(j, i) == lower[i * k + j]);
      }
  }
  // gemm_plain_sub_bt: integer-valued operands, so both products are exact and must agree exactly.
  std::uniform_int_distribution<int> u(-50, 50);
  const std::size_t m = 37, nn = 53, kk = 29;
  std::vector<double> a(m * kk), bt(nn * kk), b(kk * nn), c1(m * nn, 3.0), c2(m * nn, 3.0);
  for (double& x : a) x = u(rng);
  for (std::size_t j = 0; j < nn; ++j)
    for (std::size_t l = 0; l < kk; ++l) b[l * nn + j] = bt[j * kk + l] = u(rng);
  fast_detail::gemm_plain_sub(m, nn, kk, a.data(), kk, b.data(), nn, c1.data(), nn, 2);
  fast_detail::gemm_plain_sub_bt(m, nn, kk, a.data(), kk, bt.data(), kk, c2.data(), nn, 2);
  CHECK(c1 == c2);
}

TEST_CASE("gram_accumulate: the lower triangle of a sum of blocks' Gram matrices, within gamma of exact", "[linalg][fast]") {
  // Integer-valued blocks: every product and partial sum is exact in double, so the accumulated lower
  // triangle must equal the exact rational Gram matrix entry for entry (across 256-row block boundaries).
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<int> u(-40, 40);
  for (std::size_t k : {1u, 255u, 257u, 600u}) {
    DMatrix g(k, k, 0.0);
    QMatrix exact(k, k, Rational(0));
    for (std::size_t n : {3u, 17u}) {
      DMatrix c(k, n);
      for (double& x : c.data()) x = u(rng);
      gram_accumulate(g, c, 2);
      const QMatrix p = mat_mul(to_q(c), mat_transpose(to_q(c)));
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j) exact(i, j) += p(i, j);
    }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) REQUIRE(rational_from_double(g(i, j)) == exact(i, j));
  }
  // Non-integer entries: within gamma_{n+1} ||c_i|| ||c_j|| per call of the exact entry.
  std::normal_distribution<double> gd(0, 1);
  const std::size_t k = 300, n = 40;
  DMatrix c(k, n), g(k, k, 0.0);
  for (double& x : c.data()) x = gd(rng);
  gram_accumulate(g, c, 1);
  const QMatrix cq = to_q(c);
  for (std::size_t i = 0; i < k; i += 7)
    for (std::size_t j = 0; j <= i; j += 3) {
      Rational e = 0, ni = 0, nj = 0;
      for (std::size_t l = 0; l < n; ++l) { e += cq(i, l) * cq(j, l); ni += cq(i, l) * cq(i, l); nj += cq(j, l) * cq(j, l); }
      Rational diff = rational_from_double(g(i, j)) - e;
      if (sgn(diff) < 0) diff = -diff;
      // gamma_{n+1} < 2 (n + 1) u; ||c_i|| ||c_j|| <= (ni + nj) / 2.
      REQUIRE(diff <= Rational(n + 1) * rational_from_double(std::ldexp(1.0, -52)) * (ni + nj) / 2);
    }
}

TEST_CASE("blocked Cholesky: factor agrees with Eigen's LLT across block and panel boundaries", "[linalg][fast]") {
  std::mt19937_64 g(73);
  std::normal_distribution<double> nd;
  for (std::size_t n : {1u, 127u, 128u, 129u, 300u, 517u}) {
    Eigen::MatrixXd b(n, n);
    for (Eigen::Index i = 0; i < b.size(); ++i) b.data()[i] = nd(g);
    Eigen::MatrixXd a = b * b.transpose() + static_cast<double>(n) * Eigen::MatrixXd::Identity(n, n);
    std::vector<double> buf(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) buf[i * n + j] = a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
    for (int threads : {1, 2, 3}) {
      std::vector<double> l = buf;
      REQUIRE(fast_detail::cholesky_rn(l.data(), n, threads));
      Eigen::MatrixXd ref = a.llt().matrixL();
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j <= i; ++j)
          worst = std::max(worst, std::abs(l[i * n + j] - ref(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))));
      CHECK(worst < 1e-9 * std::sqrt(static_cast<double>(n)));
    }
  }
}

TEST_CASE("rump_isspd_lower_inplace declines exactly singular Gram matrices of every size", "[linalg][fast]") {
  // G = C C^T with C k x (k - 3) integer: exactly singular (rank k - 3) and exactly representable, so a
  // certificate would be a false proof; the same G plus I is PD with margin 1 and must certify.
  std::mt19937_64 g(74);
  for (std::size_t k : {50u, 129u, 300u}) {
    std::vector<double> c(k * (k - 3));
    for (double& x : c) x = static_cast<double>(static_cast<int>(g() % 7) - 3);
    std::vector<double> gram(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double s = 0;
        for (std::size_t l = 0; l < k - 3; ++l) s += c[i * (k - 3) + l] * c[j * (k - 3) + l];
        gram[i * k + j] = s;  // exact: |s| <= 9 k < 2^53
      }
    std::vector<double> singular = gram, shifted = gram;
    CHECK_FALSE(rump_isspd_lower_inplace(singular.data(), k).certified);
    for (std::size_t i = 0; i < k; ++i) shifted[i * k + i] += 1e3;
    CHECK(rump_isspd_lower_inplace(shifted.data(), k).certified);
  }
}

TEST_CASE("symmetric_lower_mul_vec equals the full product on any thread count", "[linalg][fast]") {
  std::mt19937_64 g(75);
  for (std::size_t k : {1u, 7u, 300u, 1000u}) {
    std::vector<double> full(k * k), lower(k * k, std::nan("")), v(k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const double x = static_cast<double>(static_cast<int>(g() % 2001) - 1000);
        full[i * k + j] = full[j * k + i] = lower[i * k + j] = x;
      }
    for (double& x : v) x = static_cast<double>(static_cast<int>(g() % 201) - 100);
    std::vector<double> ref(k, 0.0), w(k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) ref[i] += full[i * k + j] * v[j];  // exact: integers below 2^53
    for (int threads : {1, 2, 3, 5}) {
      symmetric_lower_mul_vec(lower.data(), k, v.data(), w.data(), threads);
      CHECK(w == ref);  // the upper triangle (NaN) is never read
    }
  }
}
