// Property test (fixed seeds): certificates built by brute-force Gauss-Jordan over Q for random
// low-rank matrices are accepted; each single alteration that must break them is rejected.
#include "catch.hpp"

#include "brute_q.hpp"
#include "cert_text.hpp"

using namespace cert_text;
using brute_q::QMat;

namespace {

struct RankCase {
  QMat a;
  std::size_t m, n, k;
  std::vector<std::size_t> minor_rows, minor_cols, free_cols;
  QMat kernel;
  std::vector<std::string> primes;  // as few as the Hadamard bound needs
};

RankCase build(const QMat& a, std::size_t m, std::size_t n) {
  RankCase c{a, m, n, 0, {}, {}, {}, {}, {}};
  c.minor_rows = brute_q::independent_rows(a);
  c.k = c.minor_rows.size();
  brute_q::rref(brute_q::select_rows(a, c.minor_rows), c.minor_cols);  // pivot columns of A[R, :]
  c.kernel = brute_q::kernel(a, n, c.free_cols);
  // Hadamard bound (squared) of (k+1)-minors of the row-scaled matrix, then primes >= 10^6.
  std::vector<mpz_class> norms;
  for (const auto& row : a) {
    mpz_class s = 0;
    for (const auto& z : brute_q::scaled_row(row)) s += z * z;
    norms.push_back(s);
  }
  std::sort(norms.begin(), norms.end(), [](auto& x, auto& y) { return x > y; });
  mpz_class bound = 1;
  if (c.k < std::min(m, n))
    for (std::size_t i = 0; i <= c.k; ++i) bound *= norms[i];
  mpz_class prod = 1;
  for (std::uint64_t p = 1000000; prod * prod <= bound || c.primes.empty(); ++p)
    if (brute_q::prime_by_trial_division(p)) {
      c.primes.push_back(std::to_string(p));
      prod *= static_cast<unsigned long>(p);
    }
  return c;
}

std::string lower_json(const RankCase& c, const std::string& prime = "2305843009213693951") {
  if (c.k == 0) return R"({"method":"trivial"})";
  return R"({"method":"minor-mod-p","prime":")" + prime + "\",\"rows\":" + ints(c.minor_rows) +
         ",\"cols\":" + ints(c.minor_cols) + "}";
}
std::string kernel_json(const RankCase& c, const QMat& kernel) {
  std::string ks = "[";
  for (std::size_t t = 0; t < kernel.size(); ++t) {
    if (t) ks += ',';
    ks += strings(to_strings({kernel[t]})[0]);
  }
  return R"({"method":"kernel","kernel":)" + ks + "],\"free_rows\":" + ints(c.free_cols) + "}";
}
std::string cert(const QMat& a, std::size_t n, std::size_t lo, std::size_t up, const std::string& lower,
                 const std::string& upper) {
  return R"({"kind":"rank","claim":"rank","matrix":)" + matrix(to_strings(a), n) + ",\"rank_lower\":" +
         std::to_string(lo) + ",\"rank_upper\":" + std::to_string(up) + ",\"lower\":" + lower +
         ",\"upper\":" + upper + "}";
}
void accepted(const std::string& text) {
  auto v = check(text);
  INFO(text);
  INFO(v.reason);
  REQUIRE(v.valid);
}
void rejected(const std::string& text) {
  auto v = check(text);
  INFO(text);
  REQUIRE_FALSE(v.valid);
  REQUIRE_FALSE(v.reason.empty());
}

}  // namespace

TEST_CASE("rank property: brute-force certificates accepted, single alterations rejected", "[checker][rank][random]") {
  std::mt19937_64 rng(20261121);
  int kernels = 0, multis = 0, lowers = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::size_t m = 1 + rng() % 7, n = 1 + rng() % 7, r = rng() % (std::min(m, n) + 1);
    RankCase c = build(brute_q::random_low_rank(rng, m, n, r), m, n);
    INFO("trial " << trial << ": " << m << "x" << n << " rank " << c.k);
    const std::string multi = R"({"method":"multi-prime","primes":)" + strings(c.primes) + "}";
    accepted(cert(c.a, n, c.k, c.k, lower_json(c), kernel_json(c, c.kernel)));
    accepted(cert(c.a, n, c.k, c.k, lower_json(c), multi));

    // Claims beyond what was shown.
    if (c.k < std::min(m, n)) {
      rejected(cert(c.a, n, c.k + 1, c.k + 1, lower_json(c), kernel_json(c, c.kernel)));
      // Multi-prime with the last prime dropped: the product no longer beats the Hadamard bound.
      auto fewer = c.primes;
      fewer.pop_back();
      rejected(cert(c.a, n, c.k, c.k, lower_json(c), R"({"method":"multi-prime","primes":)" + strings(fewer) + "}"));
      ++multis;
    }
    if (c.k > 0) {
      // rank_upper = k - 1 is false: the checker must refuse it whatever the certificate. For
      // multi-prime this exercises soundness: either some rank mod p exceeds k - 1 or the bound fails.
      rejected(cert(c.a, n, c.k - 1, c.k - 1, R"({"method":"trivial"})", multi));
      // A composite "prime" (2^61 + 1 = 3 * 768614336404564651).
      rejected(cert(c.a, n, c.k, c.k, lower_json(c, "2305843009213693953"), kernel_json(c, c.kernel)));
      ++lowers;
    }
    if (c.k >= 2) {  // make two rows of the minor equal: the minor is singular
      QMat b = c.a;
      b[c.minor_rows[1]] = b[c.minor_rows[0]];
      rejected(cert(b, n, c.k, std::min(m, n), lower_json(c), R"({"method":"trivial"})"));
    }
    if (c.k > 0 && !c.kernel.empty()) {
      ++kernels;
      // A kernel entry changed at a coordinate j whose column of A is non-zero: A v != 0.
      std::size_t t = rng() % c.kernel.size(), j = 0;
      while (j < n && [&] { for (auto& row : c.a) if (row[j] != 0) return false; return true; }()) ++j;
      QMat kv = c.kernel;
      kv[t][j] += 1;
      rejected(cert(c.a, n, c.k, c.k, lower_json(c), kernel_json(c, kv)));
      // A matrix entry changed at a coordinate where a kernel vector is non-zero: that row times it != 0.
      std::size_t jj = 0;
      while (c.kernel[t][jj] == 0) ++jj;
      QMat b = c.a;
      b[rng() % m][jj] += mpq_class(1, 3);
      rejected(cert(b, n, c.k, c.k, lower_json(c), kernel_json(c, c.kernel)));
    }
  }
  // The generator must exercise every branch.
  CHECK(kernels > 20);
  CHECK(multis > 20);
  CHECK(lowers > 50);
}
