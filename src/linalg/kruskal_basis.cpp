// The sampled Kruskal protocol on shared basis coordinates (kruskal_sample.hpp). At ViT-B shape the
// general-position sample is 2000 random 768-subsets of 2000 queries: one 768 x 768 elimination each
// costs as much as the whole basis change, while a random subset already holds about 768^2 / 2000 = 295
// of the basis' rows, leaving a residual of about 473 on a side: (473 / 768)^3 = 0.23 of the work.
#include "memcert/linalg/kruskal_sample.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <stdexcept>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/progress.hpp"
#include "kruskal_sample_internal.hpp"

namespace memcert {

std::vector<std::vector<std::size_t>> kruskal_sample_subsets(std::size_t rows, std::size_t size, std::size_t trials,
                                                             std::uint64_t seed) {
  if (size > rows) throw std::invalid_argument("kruskal_sample_subsets: subset size exceeds the number of vectors");
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::size_t>> subsets(trials);
  std::vector<std::size_t> idx(rows);
  std::iota(idx.begin(), idx.end(), 0);
  for (auto& sub : subsets) {
    for (std::size_t i = 0; i < size; ++i) {  // partial Fisher-Yates: a uniform random subset
      std::uniform_int_distribution<std::size_t> u(i, rows - 1);
      std::swap(idx[i], idx[u(rng)]);
    }
    sub.assign(idx.begin(), idx.begin() + size);
    std::sort(sub.begin(), sub.end());
  }
  return subsets;
}

namespace {

// Step 1: P = -(all G) mod p with G a seeded random cols x k matrix of centred residues (the sign is a
// unit: it changes no rank). Rank all_S < k forces rank P_S < k, so only independence transfers back, which
// is all the protocol takes from P. The seed only affects how often step 3 needs the fallback.
DModMatrix kruskal_basis_project(const DModMatrix& all, std::size_t k, std::uint64_t seed, int threads) {
  const std::size_t d = all.cols;
  const std::int64_t half = static_cast<std::int64_t>((all.p - 1) / 2);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::uniform_int_distribution<std::int64_t> u(-half, half);
  std::vector<double> g(d * k);
  for (double& x : g) x = static_cast<double>(u(rng));
  DModMatrix out;
  out.p = all.p, out.rows = all.rows, out.cols = k;
  out.a.assign(all.rows * k, 0.0);
  fast_detail::dmod_gemm_sub(all.rows, k, d, all.a.data(), d, nullptr, g.data(), k, out.a.data(), k, all.p, threads);
  return out;
}

// Step 2: the coordinates C = P P_B^{-1} (rows x k, centred residues) of every row of P in the basis B
// (rows of P independent mod p, in any order), from P_B^T X = P^T (X = C^T).
DModMatrix kruskal_basis_coordinates(const DModMatrix& P, const std::vector<std::size_t>& B, int threads) {
  const std::size_t k = P.cols, rows = P.rows;
  DModMatrix bt, pt;
  bt.p = pt.p = P.p;
  bt.rows = bt.cols = k;
  bt.a.resize(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) bt.a[i * k + j] = P.a[B[j] * k + i];
  pt.rows = k, pt.cols = rows;
  pt.a.resize(k * rows);
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t i = 0; i < k; ++i) pt.a[i * rows + t] = P.a[t * k + i];
  auto x = dmod_solve(bt, pt, threads);
  if (!x) throw std::logic_error("kruskal_basis_coordinates: the rank profile's rows are singular mod p");
  DModMatrix c;
  c.p = P.p, c.rows = rows, c.cols = k;
  c.a.resize(rows * k);
  const std::uint64_t half = (P.p - 1) / 2;
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t t = 0; t < rows; ++t) {
      const std::uint64_t v = (*x)(j, t);
      c.a[t * k + j] = v > half ? -static_cast<double>(P.p - v) : static_cast<double>(v);
    }
  return c;
}

// Step 3 for one subset: is the residual minor C[S \ B, {j : B[j] not in S}] non-zero mod p?
// pos[t] = j when t = B[j], else k.
bool kruskal_basis_residual_full(const DModMatrix& C, const std::vector<std::size_t>& pos,
                                 const std::vector<std::size_t>& sub) {
  const std::size_t k = C.cols;
  thread_local std::vector<char> used;
  thread_local std::vector<std::size_t> rest, free_cols;
  thread_local DModMatrix m;  // reused across trials (fresh memory is costly to touch)
  used.assign(k, 0);
  rest.clear();
  for (std::size_t t : sub) {
    if (pos[t] < k) used[pos[t]] = 1;
    else rest.push_back(t);
  }
  free_cols.clear();
  for (std::size_t j = 0; j < k; ++j)
    if (!used[j]) free_cols.push_back(j);
  const std::size_t r = rest.size();
  if (r != free_cols.size()) throw std::logic_error("kruskal_basis_residual_full: subset size differs from the basis'");
  if (r == 0) return true;  // S = B: C_S is a permutation matrix
  m.p = C.p, m.rows = m.cols = r;
  m.a.resize(r * r);
  for (std::size_t i = 0; i < r; ++i) {
    const double* src = C.a.data() + rest[i] * k;
    double* dst = m.a.data() + i * r;
    for (std::size_t c = 0; c < r; ++c) dst[c] = src[free_cols[c]];
  }
  return dmod_rank_profile(m, {.threads = 1, .in_place = true}).rank == r;
}

// dmod_kruskal_sample's own test of one subset: its residues eliminated mod p.
bool kruskal_subset_full_modp(const DModMatrix& all, const std::vector<std::size_t>& sub) {
  thread_local DModMatrix m;
  const std::size_t d = all.cols, s = sub.size();
  m.p = all.p, m.rows = s, m.cols = d;
  m.a.resize(s * d);
  for (std::size_t i = 0; i < s; ++i)
    std::copy(all.a.begin() + sub[i] * d, all.a.begin() + (sub[i] + 1) * d, m.a.begin() + i * d);
  return dmod_rank_profile(m, {.threads = 1, .in_place = true}).rank == s;
}

}  // namespace

KruskalSample dmod_kruskal_sample_basis(const DModMatrix& all, std::size_t size, std::size_t trials, std::uint64_t seed,
                                        const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows,
                                        int threads, KruskalBasisStats* stats) {
  KruskalBasisStats st;
  const int th = threads <= 0 ? fast_threads() : threads;
  if (size == 0 || size > all.cols || size > all.rows || trials == 0) {
    if (stats) *stats = st;
    return dmod_kruskal_sample(all, size, trials, seed, exact_rows, th);
  }
  const std::size_t k = size;
  const auto subsets = kruskal_sample_subsets(all.rows, size, trials, seed);
  DModMatrix P = k < all.cols ? kruskal_basis_project(all, k, seed, th) : all;
  // The basis: the first independent rows in the order of how many subsets hold them (most first). A
  // trial's residual is its rows outside the basis, so rows that many trials share shrink the residuals
  // (about 5% of the work at 768 of 2000: a trial's cost is the residual's cube).
  std::vector<std::size_t> order(all.rows), freq(all.rows, 0);
  for (const auto& sub : subsets)
    for (std::size_t t : sub) ++freq[t];
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return freq[x] > freq[y]; });
  DModMatrix ordered;
  ordered.p = P.p, ordered.rows = P.rows, ordered.cols = P.cols;
  ordered.a.resize(P.a.size());
  for (std::size_t i = 0; i < P.rows; ++i)
    std::copy(P.a.begin() + order[i] * P.cols, P.a.begin() + (order[i] + 1) * P.cols, ordered.a.begin() + i * P.cols);
  ModpRankProfile prof = dmod_rank_profile(ordered, {.threads = th, .in_place = true});
  if (prof.rank < k) {  // no basis: every subset of P is singular, the per-subset route decides
    if (stats) *stats = st;
    return dmod_kruskal_sample(all, size, trials, seed, exact_rows, th);
  }
  std::vector<std::size_t> basis(k);
  for (std::size_t j = 0; j < k; ++j) basis[j] = order[prof.pivot_rows[j]];
  st.basis_size = k;
  st.projected = k < all.cols;
  const DModMatrix C = kruskal_basis_coordinates(P, basis, th);
  P = DModMatrix{};
  std::vector<std::size_t> pos(all.rows, k);
  for (std::size_t j = 0; j < k; ++j) pos[basis[j]] = j;

  std::vector<char> how(trials, 0);  // 1: residual minor, 2: own residues, 0: dependent mod p
  std::atomic<std::size_t> finished{0};
  parallel_for(trials, th, [&](std::size_t t) {
    if (kruskal_basis_residual_full(C, pos, subsets[t])) how[t] = 1;
    else if (kruskal_subset_full_modp(all, subsets[t])) how[t] = 2;
    progress_tick("Kruskal sample: trials", ++finished, trials);
  });

  KruskalSample s;
  s.trials = trials;
  for (std::size_t t = 0; t < trials; ++t) {
    // Independent mod p (by the basis or the subset's own elimination) proves independence over Q; else
    // the subset is decided over Q, as dmod_kruskal_sample decides it.
    if (how[t]) ++(how[t] == 1 ? st.by_basis : st.by_subset);
    else ++st.exact;
    kruskal_subset_exact(subsets[t], how[t] != 0, exact_rows, s);
  }
  if (stats) *stats = st;
  return s;
}

}  // namespace memcert
