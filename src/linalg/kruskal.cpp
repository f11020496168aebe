// Kruskal rank by levels: "every k-subset independent" is monotone in k, so we binary-search k, and each
// level is checked by a depth-first enumeration of subsets that extends a prefix's reduced basis mod p
// (cost O(k d) per subset instead of a fresh elimination). Dependencies found mod p are confirmed exactly.
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/fast/dmod.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "memcert/linalg/qmat.hpp"
#include "memcert/numeric/modp.hpp"

namespace memcert {

using modp::u64;

namespace {

// Vectors reduced mod p, with an incremental echelon basis for DFS.
class SubsetSearch {
 public:
  SubsetSearch(const ZMatrix& z, u64 p) : p_(p), T_(z.rows()), d_(z.cols()), v_(T_ * d_) {
    for (std::size_t i = 0; i < T_ * d_; ++i) v_[i] = modp::reduce(z.data()[i], p);
  }

  // Enumerates subsets of size <= k in DFS order. Returns true when every k-subset (hence every smaller
  // subset) is independent mod p; otherwise `dependent` receives the first subset found to be dependent
  // (minimal along its DFS branch). `budget` counts subset extensions and is decremented; on exhaustion
  // returns false with `dependent` empty.
  bool level_clean(std::size_t k, std::vector<std::size_t>& dependent, std::uint64_t& budget) {
    dependent.clear();
    basis_.assign(k * d_, 0);
    pivots_.assign(k, 0);
    prefix_.clear();
    return dfs(0, k, dependent, budget);
  }

 private:
  // Reduces vector `idx` against the first `depth` basis rows into row `depth`; returns false if it
  // reduces to zero (dependent on the prefix).
  bool extend(std::size_t depth, std::size_t idx) {
    u64* w = &basis_[depth * d_];
    std::copy(&v_[idx * d_], &v_[idx * d_] + d_, w);
    for (std::size_t b = 0; b < depth; ++b) {
      const u64* bv = &basis_[b * d_];
      const u64 f = w[pivots_[b]];
      if (f == 0) continue;
      const u64 nf = p_ - f;
      for (std::size_t c = 0; c < d_; ++c) w[c] = (w[c] + nf * bv[c]) % p_;
    }
    std::size_t piv = 0;
    while (piv < d_ && w[piv] == 0) ++piv;
    if (piv == d_) return false;
    const u64 inv = modp::nmod_inv(w[piv], p_);
    for (std::size_t c = 0; c < d_; ++c) w[c] = modp::nmod_mul(w[c], inv, p_);
    pivots_[depth] = piv;
    return true;
  }

  bool dfs(std::size_t start, std::size_t k, std::vector<std::size_t>& dependent, std::uint64_t& budget) {
    const std::size_t depth = prefix_.size();
    if (depth == k) return true;
    // Need k - depth more indices from [start, T).
    for (std::size_t i = start; i + (k - depth) <= T_; ++i) {
      if (budget == 0) { dependent.clear(); return false; }
      --budget;
      prefix_.push_back(i);
      if (!extend(depth, i)) {
        dependent = prefix_;
        prefix_.pop_back();
        return false;
      }
      bool ok = dfs(i + 1, k, dependent, budget);
      prefix_.pop_back();
      if (!ok) return false;
    }
    return true;
  }

  u64 p_;
  std::size_t T_, d_;
  std::vector<u64> v_, basis_;
  std::vector<std::size_t> pivots_, prefix_;
};

// Exact coefficients c != 0 with sum_i c_i v_{subset_i} = 0, or empty if the subset is independent.
QVector exact_dependency(const QMatrix& vectors, const std::vector<std::size_t>& subset) {
  QMatrix cols = mat_transpose(mat_select_rows(vectors, subset));  // d x s, columns = vectors
  QMatrix k = qmat_kernel(cols);
  if (k.cols() == 0) return {};
  QVector c(subset.size());
  for (std::size_t i = 0; i < subset.size(); ++i) c[i] = k(i, 0);
  return c;
}

}  // namespace

KruskalResult qmat_kruskal_rank(const QMatrix& vectors, const KruskalOptions& opt) {
  KruskalResult res;
  res.count = vectors.rows();
  res.dim = vectors.cols();
  const std::size_t trivial = std::min(res.count, res.dim);
  ZMatrix z = qmat_row_scaled_integer(vectors);

  for (std::size_t attempt = 0; attempt < 16; ++attempt) {
    const u64 p = modp::prime_31(attempt);
    SubsetSearch search(z, p);
    std::uint64_t budget = opt.max_subsets;
    std::size_t lo = 0, hi = trivial;  // invariant: kruskal >= lo certified, kruskal <= hi certified
    std::vector<std::size_t> best_dep;
    QVector best_coef;
    bool false_dependency = false, exhausted = false;

    auto check_level = [&](std::size_t k) -> bool {  // true: level k clean (mod p)
      std::vector<std::size_t> dep;
      if (search.level_clean(k, dep, budget)) return true;
      if (dep.empty()) { exhausted = true; return false; }
      QVector c = exact_dependency(vectors, dep);
      if (c.empty()) { false_dependency = true; return false; }  // unlucky prime: restart
      if (dep.size() - 1 < hi) {
        hi = dep.size() - 1;
        best_dep = dep;
        best_coef = c;
      }
      return false;
    };

    if (opt.at_least) {
      const std::size_t K = *opt.at_least;
      if (K <= trivial && K > 0) {
        if (check_level(K)) lo = K;
      } else if (K == 0) {
        lo = 0;
      }
    } else {
      // Binary search for the largest clean level in [lo, hi].
      while (lo < hi && !exhausted && !false_dependency) {
        std::size_t mid = lo + (hi - lo + 1) / 2;
        if (check_level(mid)) lo = mid;
        else if (!exhausted && !false_dependency && hi >= mid) hi = mid - 1;
      }
    }
    if (false_dependency) continue;
    res.prime = p;
    res.lower = lo;
    res.upper = hi;
    res.dependent_subset = best_dep;
    res.dependent_coefficients = best_coef;
    res.method = exhausted ? "bounded" : (opt.at_least ? "at-least" : "exhaustive");
    return res;
  }
  throw std::runtime_error("qmat_kruskal_rank: 16 primes produced false dependencies");
}

KruskalSample qmat_kruskal_sample(const QMatrix& vectors, std::size_t size, std::size_t trials,
                                  std::uint64_t seed) {
  if (size > vectors.rows()) throw std::invalid_argument("qmat_kruskal_sample: subset larger than the set");
  KruskalSample s;
  ZMatrix z = qmat_row_scaled_integer(vectors);
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> idx(vectors.rows());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  const u64 p = prime_fast(0);  // fast path: double modular elimination, p < 2^26
  for (std::size_t t = 0; t < trials; ++t) {
    // Partial Fisher-Yates: the first `size` entries are a uniform random subset.
    for (std::size_t i = 0; i < size; ++i) {
      std::uniform_int_distribution<std::size_t> u(i, idx.size() - 1);
      std::swap(idx[i], idx[u(rng)]);
    }
    std::vector<std::size_t> sub(idx.begin(), idx.begin() + size);
    std::sort(sub.begin(), sub.end());
    ++s.trials;
    // Independent mod p certifies independence over Q; otherwise decide exactly.
    if (dmod_rank_profile(mat_select_rows(z, sub), p).rank == size) { ++s.independent; continue; }
    QVector c = exact_dependency(vectors, sub);
    if (c.empty()) { ++s.independent; continue; }
    ++s.dependent;
    if (s.first_dependent_subset.empty()) {
      s.first_dependent_subset = sub;
      s.first_dependent_coefficients = c;
    }
  }
  return s;
}

}  // namespace memcert
