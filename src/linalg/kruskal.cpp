// Kruskal rank by levels: "every k-subset independent" is monotone in k, so we binary-search k, and each
// level is checked by a depth-first enumeration of subsets that extends a prefix's reduced basis mod p
// (cost O(k d) per subset instead of a fresh elimination). Dependencies found mod p are confirmed exactly.
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/nmod/dmod.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/numeric/modp.hpp"
#include "memcert/util/progress.hpp"

namespace memcert {

using modp::u64;

namespace {

constexpr const char* kEnumerationStage = "kruskal: subset enumeration (budget used)";

// Shoup's multiplication in 32-bit lanes, for p < 2^31 and a, b < p: with a_pre = floor(a 2^32 / p),
// q = floor(a_pre b / 2^32) is floor(a b / p) or one less, so a b - q p lies in [0, 2p) and, being
// below 2^32, equals its low 32 bits (a b - q p computed mod 2^32); one correction brings it below p.
// The loops below compile to vector code (32 x 32 -> 64-bit products) on AVX2 and plain SSE2 alike.
inline std::uint32_t shoup_pre_u32(std::uint32_t a, std::uint32_t p) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) << 32) / p);
}

// w[c] = (w[c] + a b[c]) mod p for c < n (all entries and a in [0, p)).
__attribute__((target_clones("avx2", "default")))
void shoup_axpy_u32(std::uint32_t* __restrict w, const std::uint32_t* __restrict b, std::uint32_t a,
                    std::uint32_t a_pre, std::uint32_t p, std::size_t n) {
  for (std::size_t c = 0; c < n; ++c) {
    const auto q = static_cast<std::uint32_t>((static_cast<std::uint64_t>(a_pre) * b[c]) >> 32);
    std::uint32_t r = a * b[c] - q * p;
    r = r >= p ? r - p : r;
    const std::uint32_t t = w[c] + r;
    w[c] = t >= p ? t - p : t;
  }
}

// w[c] = a w[c] mod p for c < n.
__attribute__((target_clones("avx2", "default")))
void shoup_scale_u32(std::uint32_t* __restrict w, std::uint32_t a, std::uint32_t a_pre, std::uint32_t p,
                     std::size_t n) {
  for (std::size_t c = 0; c < n; ++c) {
    const auto q = static_cast<std::uint32_t>((static_cast<std::uint64_t>(a_pre) * w[c]) >> 32);
    const std::uint32_t r = a * w[c] - q * p;
    w[c] = r >= p ? r - p : r;
  }
}

// Vectors reduced mod p, with an incremental echelon basis for DFS.
class SubsetSearch {
 public:
  // `residues`: T x d row-major, entries in [0, p); p < 2^31 (Shoup's 32-bit products need it).
  SubsetSearch(const std::vector<u64>& residues, std::size_t T, std::size_t d, u64 p)
      : p_(static_cast<std::uint32_t>(p)), T_(T), d_(d), v_(residues.begin(), residues.end()) {
    if (p >= (u64{1} << 31)) throw std::invalid_argument("SubsetSearch: prime >= 2^31");
  }

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
  // Reduces vector `idx` against the first `depth` basis rows into row `depth`; returns false if it
  // reduces to zero (dependent on the prefix). `leaf`: row `depth` will never be reduced against, so it
  // is not normalised (most extensions are leaves of the search, and the inverse is their largest cost).
  bool extend(std::size_t depth, std::size_t idx, bool leaf) {
    std::uint32_t* w = &basis_[depth * d_];
    std::copy(&v_[idx * d_], &v_[idx * d_] + d_, w);
    for (std::size_t b = 0; b < depth; ++b) {
      const std::uint32_t f = w[pivots_[b]];
      if (f == 0) continue;
      const std::uint32_t nf = p_ - f;
      shoup_axpy_u32(w, &basis_[b * d_], nf, shoup_pre_u32(nf, p_), p_, d_);
    }
    std::size_t piv = 0;
    while (piv < d_ && w[piv] == 0) ++piv;
    if (piv == d_) return false;
    if (leaf) return true;
    const auto inv = static_cast<std::uint32_t>(modp::nmod_inv(w[piv], p_));
    shoup_scale_u32(w, inv, shoup_pre_u32(inv, p_), p_, d_);
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
      if (!extend(depth, i, depth + 1 == k)) {
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

  std::uint32_t p_;
  std::uint64_t max_budget_ = 0;
  std::size_t T_, d_;
  std::vector<std::uint32_t> v_, basis_;
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
    QVector c;
    const Decision independent = decide(
        [&] {
          DModMatrix r = dmod_from_zmat(mat_select_rows(z, sub), p);
          return dmod_rank_profile(r, {.threads = 0, .in_place = true}).rank == size ? UncertainBool::certain(true)
                                                                                    : UncertainBool::indeterminate();
        },
        [&] {
          c = exact_dependency(vectors, sub);
          return UncertainBool::certain(c.empty());
        });
    if (independent.value.certainly_true()) { ++s.independent; continue; }
    ++s.dependent;
    if (s.first_dependent_subset.empty()) {
      s.first_dependent_subset = sub;
      s.first_dependent_coefficients = c;
    }
  }
  return s;
}

}  // namespace memcert
