// Exact two-sided certified rank through the double modular fast path.
//
// rank >= r: one elimination mod p0 gives a minor that is non-zero mod p0, hence over Z.
// rank <= r: every (r+1)-minor D satisfies |D| <= B (Hadamard: product of the r+1 largest row norms,
// or column norms). If rank(A mod q) <= r for distinct primes q_1..q_s, each q_i divides D, so their
// product M divides D; M > B >= |D| forces D = 0. This is docs/THEORY.md section 7's multi-prime upper bound.
// Its cost is (bits of B)/(bits per prime) eliminations of the whole matrix, which the double kernels
// run at near-GEMM speed, two primes at a time on the two cores.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <optional>
#include <thread>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/numeric/modp.hpp"
#include "memcert/util/progress.hpp"

namespace memcert {

namespace {

double log2_mpz(const Integer& z) {
  if (z <= 0) return -1e300;
  long e;
  double d = mpz_get_d_2exp(&e, z.get_mpz_t());
  return std::log2(d) + static_cast<double>(e);
}

Integer top_k_product(std::vector<Integer> v, std::size_t k) {
  std::sort(v.begin(), v.end(), [](const Integer& x, const Integer& y) { return x > y; });
  Integer prod = 1;
  for (std::size_t i = 0; i < k && i < v.size(); ++i) prod *= v[i];
  return prod;
}

// Residues of z mod q, through an int64 copy when every entry fits.
struct Reducer {
  const ZMatrix& z;
  std::vector<std::int64_t> small;
  bool fits = true;
  explicit Reducer(const ZMatrix& zz) : z(zz) {
    small.resize(z.data().size());
    for (std::size_t i = 0; i < small.size() && fits; ++i) {
      if (!z.data()[i].fits_slong_p()) fits = false;
      else small[i] = z.data()[i].get_si();
    }
    if (!fits) small.clear();
  }
};

}  // namespace

Integer zmat_minor_bound_sq(const ZMatrix& a, std::size_t k) {
  // Row norms only: the checker's multi-prime rule (docs/CERTIFICATES.md) uses exactly this bound.
  std::vector<Integer> rn(a.rows(), Integer(0));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) mpz_addmul(rn[i].get_mpz_t(), a(i, j).get_mpz_t(), a(i, j).get_mpz_t());
  return top_k_product(rn, k);
}

std::optional<RankCertificate> rank_certified_multimodular(
    std::size_t rows, std::size_t cols, const ResiduesInto& residues,
    const std::function<std::vector<Integer>()>& row_norms_sq, std::size_t max_primes, int threads) {
  RankCertificate cert;
  cert.rows = rows;
  cert.cols = cols;
  cert.upper = RankUpper::trivial;
  if (rows == 0 || cols == 0) return cert;
  const int t = threads <= 0 ? fast_threads() : threads;
  const std::size_t full = std::min(rows, cols);
  auto set_lower = [&](const ModpRankProfile& pr) {
    cert.rank = pr.rank;
    cert.prime = pr.prime;
    cert.minor_rows = pr.pivot_rows;
    cert.minor_cols = pr.pivot_cols;
  };
  {
    DModMatrix buf;
    residues(prime_fast(0), buf);
    set_lower(dmod_rank_profile(buf, {.threads = t, .in_place = true}));  // in place: no second copy of the matrix
  }
  if (cert.rank == full) return cert;

  std::size_t next = 1;  // next prime index
  std::vector<std::uint64_t> ok = {cert.prime};
  double bits = std::log2(static_cast<double>(cert.prime));
  const std::vector<Integer> norms = row_norms_sq();  // only now: a full-rank matrix never needs them
  for (;;) {
    const Integer bound_sq = top_k_product(norms, cert.rank + 1);
    const double target = 0.5 * log2_mpz(bound_sq) + 1.0;
    // The primes still needed (fixed in advance, so the outcome does not depend on the thread count).
    std::vector<std::uint64_t> todo;
    double b = bits;
    while (b <= target) {
      std::uint64_t q = prime_fast(next++);
      todo.push_back(q);
      b += std::log2(static_cast<double>(q));
    }
    if (ok.size() + todo.size() > max_primes) return std::nullopt;
    std::vector<std::size_t> ranks(todo.size());
    std::vector<ModpRankProfile> higher(todo.size());
    std::atomic<std::size_t> idx{0}, finished{0};
    // One prime per thread, each with its own buffer reused across primes (no fresh allocation per prime).
    auto work = [&] {
      DModMatrix buf;
      for (std::size_t i; (i = idx.fetch_add(1)) < todo.size();) {
        residues(todo[i], buf);
        ranks[i] = dmod_rank_profile(buf, {.threads = 1, .in_place = true}).rank;
        if (ranks[i] > cert.rank) {  // rare (p0 was unlucky): the full profile for the better lower bound
          residues(todo[i], buf);
          higher[i] = dmod_rank_profile(buf, {.threads = 1, .in_place = true});
        }
        progress_tick("rank: upper bound, primes", ++finished, todo.size());
      }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < t && static_cast<std::size_t>(i) < todo.size(); ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
    std::size_t best = cert.rank, best_i = todo.size();
    for (std::size_t i = 0; i < todo.size(); ++i)
      if (ranks[i] > best) best = ranks[i], best_i = i;
    if (best_i == todo.size()) {
      for (auto q : todo) ok.push_back(q);
      cert.upper_primes = ok;
      cert.upper = RankUpper::multi_prime;
      // Exact confirmation of the bound.
      Integer prod = 1;
      for (auto q : ok) prod *= static_cast<unsigned long>(q);
      if (prod * prod <= bound_sq) throw std::logic_error("rank_certified_multimodular: prime product short");
      return cert;
    }
    // A prime with a larger rank: a better lower bound (p0 was unlucky). Primes whose rank is <= the
    // new r stay valid for the upper bound.
    set_lower(higher[best_i]);
    if (cert.rank == full) {
      cert.upper_primes.clear();
      return cert;
    }
    ok.clear();
    bits = 0;
    for (std::size_t i = 0; i < todo.size(); ++i)
      if (ranks[i] <= cert.rank) ok.push_back(todo[i]), bits += std::log2(static_cast<double>(todo[i]));
  }
}

RankCertificate zmat_rank_certified_fast(const ZMatrix& a) {
  Reducer red(a);
  std::vector<Integer> rn(a.rows(), Integer(0));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) mpz_addmul(rn[i].get_mpz_t(), a(i, j).get_mpz_t(), a(i, j).get_mpz_t());
  auto residues = [&](std::uint64_t q, DModMatrix& buf) {
    if (red.fits) dmod_from_i64_into(red.small.data(), a.rows(), a.cols(), q, buf);
    else buf = dmod_from_zmat(a, q);
  };
  return *rank_certified_multimodular(a.rows(), a.cols(), residues, [&] { return rn; }, static_cast<std::size_t>(-1));
}

bool zmat_rank_certificate_check(const ZMatrix& a, const RankCertificate& c) {
  if (c.rows != a.rows() || c.cols != a.cols()) return false;
  const std::size_t full = std::min(a.rows(), a.cols());
  if (c.rank > full || c.minor_rows.size() != c.rank || c.minor_cols.size() != c.rank) return false;
  if (c.rank > 0) {
    if (!modp::is_prime_u64(c.prime)) return false;
    ZMatrix minor = mat_submatrix(a, c.minor_rows, c.minor_cols);
    if (zmat_rank_profile_modp(minor, c.prime).rank != c.rank) return false;
  }
  if (c.rank == full) return true;
  std::vector<std::uint64_t> qs = c.upper_primes;
  std::sort(qs.begin(), qs.end());
  if (std::adjacent_find(qs.begin(), qs.end()) != qs.end()) return false;
  Integer prod = 1;
  for (auto q : qs) {
    if (!modp::is_prime_u64(q) || q >= (std::uint64_t(1) << 31)) return false;
    if (zmat_rank_profile_modp(a, q).rank > c.rank) return false;
    prod *= static_cast<unsigned long>(q);
  }
  return prod * prod > zmat_minor_bound_sq(a, c.rank + 1);
}

}  // namespace memcert
