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
#include "memcert/util/progress.hpp"

namespace memcert {

using modp::u64;

namespace {

constexpr const char* kEnumerationStage = "kruskal: subset enumeration (budget used)";

// Vectors reduced mod p, with an incremental echelon basis for DFS.
class SubsetSearch {
 public:
  // `residues`: T x d row-major, entries in [0, p); p < 2^32 (Shoup's products below need it).
  SubsetSearch(std::vector<u64> residues, std::size_t T, std::size_t d, u64 p)
      : p_(p), T_(T), d_(d), v_(std::move(residues)) {}

  // Progress is reported as budget used out of `max_budget` (0: none).
  void set_progress_total(std::uint64_t max_budget) { max_budget_ = max_budget; }

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
  // Shoup's multiplication by a fixed a < p < 2^32: with a_pre = floor(a 2^32 / p), q = floor(a_pre b /
  // 2^32) is floor(a b / p) or one less for every b < p, so a b - q p (mod 2^64, exact as it is < 2p)
  // needs one correction. Replaces a 64-bit division per entry in the enumeration's inner loop.
  u64 shoup_pre(u64 a) const { return (a << 32) / p_; }
  u64 shoup_mul(u64 a, u64 a_pre, u64 b) const {
    const u64 r = a * b - ((a_pre * b) >> 32) * p_;
    return r >= p_ ? r - p_ : r;
  }

  // Reduces vector `idx` against the first `depth` basis rows into row `depth`; returns false if it
  // reduces to zero (dependent on the prefix).
  bool extend(std::size_t depth, std::size_t idx) {
    u64* w = &basis_[depth * d_];
    std::copy(&v_[idx * d_], &v_[idx * d_] + d_, w);
    for (std::size_t b = 0; b < depth; ++b) {
      const u64* bv = &basis_[b * d_];
      const u64 f = w[pivots_[b]];
      if (f == 0) continue;
      const u64 nf = p_ - f, nf_pre = shoup_pre(nf);
      for (std::size_t c = 0; c < d_; ++c) {
        const u64 s = w[c] + shoup_mul(nf, nf_pre, bv[c]);
        w[c] = s >= p_ ? s - p_ : s;
      }
    }
    std::size_t piv = 0;
    while (piv < d_ && w[piv] == 0) ++piv;
    if (piv == d_) return false;
    const u64 inv = modp::nmod_inv(w[piv], p_), inv_pre = shoup_pre(inv);
    for (std::size_t c = 0; c < d_; ++c) w[c] = shoup_mul(inv, inv_pre, w[c]);
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
      // The budget is the only bound on this enumeration's time, so its use is the progress shown.
      if ((budget & 0xFFFF) == 0 && max_budget_) progress_report(kEnumerationStage, max_budget_ - budget, max_budget_);
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
  std::uint64_t max_budget_ = 0;
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

KruskalResult kruskal_rank_by_residues(std::size_t count, std::size_t dim, const KruskalResidues& residues,
                                       const KruskalDependency& dependency, const KruskalOptions& opt) {
  KruskalResult res;
  res.count = count;
  res.dim = dim;
  const std::size_t trivial = std::min(res.count, res.dim);

  for (std::size_t attempt = 0; attempt < 16; ++attempt) {
    const u64 p = modp::prime_31(attempt);
    SubsetSearch search(residues(p), count, dim, p);
    std::uint64_t budget = opt.max_subsets;
    search.set_progress_total(opt.max_subsets);
    std::size_t lo = 0, hi = trivial;  // invariant: kruskal >= lo certified, kruskal <= hi certified
    std::vector<std::size_t> best_dep;
    QVector best_coef;
    bool false_dependency = false, exhausted = false;

    auto check_level = [&](std::size_t k) -> bool {  // true: level k clean (mod p)
      std::vector<std::size_t> dep;
      if (search.level_clean(k, dep, budget)) return true;
      if (dep.empty()) { exhausted = true; return false; }
      QVector c = dependency(dep);
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
    progress_report(kEnumerationStage, opt.max_subsets, opt.max_subsets);
    return res;
  }
  throw std::runtime_error("kruskal_rank_by_residues: 16 primes produced false dependencies");
}

KruskalResult qmat_kruskal_rank(const QMatrix& vectors, const KruskalOptions& opt) {
  const ZMatrix z = qmat_row_scaled_integer(vectors);
  return kruskal_rank_by_residues(
      vectors.rows(), vectors.cols(),
      [&](u64 p) {
        std::vector<u64> r(z.data().size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = modp::reduce(z.data()[i], p);
        return r;
      },
      [&](const std::vector<std::size_t>& dep) { return exact_dependency(vectors, dep); }, opt);
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
