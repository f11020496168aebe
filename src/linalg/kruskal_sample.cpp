// The sampled Kruskal protocol, one trial per task, tasks spread over the kernels' threads; each task is a
// double modular elimination (exact mod p).
#include "memcert/linalg/kruskal_sample.hpp"

#include <algorithm>
#include <atomic>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/progress.hpp"
#include "kruskal_sample_internal.hpp"

namespace memcert {

namespace {
QMatrix to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}
}  // namespace

void kruskal_subset_exact(const std::vector<std::size_t>& subset, bool independent_mod_p,
                          const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows, KruskalSample& s) {
  QMatrix ker;
  const Decision independent = decide(
      [&] { return independent_mod_p ? UncertainBool::certain(true) : UncertainBool::indeterminate(); },
      [&] {
        ker = qmat_kernel(mat_transpose(exact_rows(subset)));
        return UncertainBool::certain(ker.cols() == 0);
      });
  if (independent.value.certainly_true()) {
    ++s.independent;
    return;
  }
  ++s.dependent;
  if (s.first_dependent_subset.empty()) {
    s.first_dependent_subset = subset;
    s.first_dependent_coefficients.resize(subset.size());
    for (std::size_t i = 0; i < subset.size(); ++i) s.first_dependent_coefficients[i] = ker(i, 0);
  }
}

KruskalSample dmod_kruskal_sample(const DModMatrix& all, std::size_t size, std::size_t trials, std::uint64_t seed,
                                  const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows,
                                  int threads) {
  KruskalSample s;
  s.trials = trials;
  const std::size_t T = all.rows, d = all.cols;
  if (size > T) throw std::invalid_argument("dmod_kruskal_sample: subset size exceeds the number of vectors");
  // The subsets are drawn sequentially (reproducible), exactly as qmat_kruskal_sample draws them (a seed
  // names the same subsets on every route), then checked in parallel.
  const auto subsets = kruskal_sample_subsets(T, size, trials, seed);
  std::vector<char> indep(trials, 0);
  const int t = threads <= 0 ? fast_threads() : threads;
  std::atomic<std::size_t> finished{0};
  parallel_for(trials, t, [&](std::size_t k) {
    thread_local DModMatrix sub;  // reused across trials (fresh memory is costly to touch)
    sub.p = all.p, sub.rows = size, sub.cols = d;
    sub.a.resize(size * d);
    for (std::size_t i = 0; i < size; ++i)
      std::copy(all.a.begin() + subsets[k][i] * d, all.a.begin() + (subsets[k][i] + 1) * d, sub.a.begin() + i * d);
    indep[k] = (size == 0 || dmod_rank_profile(sub, {.threads = 1, .in_place = true}).rank == size) ? 1 : 0;
    progress_tick("Kruskal sample: trials", ++finished, trials);
  });
  for (std::size_t k = 0; k < trials; ++k) kruskal_subset_exact(subsets[k], indep[k] != 0, exact_rows, s);
  return s;
}

KruskalSample dmat_kruskal_sample_fast(const DMatrix& v, std::size_t size, std::size_t trials, std::uint64_t seed,
                                       int threads) {
  if (size > v.rows()) throw std::invalid_argument("dmat_kruskal_sample_fast: subset size exceeds the number of vectors");
  const DModMatrix all = dmod_from_double_rows(v.data().data(), v.rows(), v.cols(), prime_fast(0));  // per-row scaling: fine
  return dmod_kruskal_sample(all, size, trials, seed,
                             [&](const std::vector<std::size_t>& sub) { return to_q(mat_select_rows(v, sub)); }, threads);
}

}  // namespace memcert
