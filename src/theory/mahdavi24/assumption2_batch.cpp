// Assumption 2 over many contexts, one context per task, tasks spread over the kernels' threads; each task
// is a double modular elimination (exact mod p).
#include "memcert/theory/mahdavi24/assumption2_batch.hpp"

#include <algorithm>
#include <atomic>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/progress.hpp"

namespace memcert {

namespace {
QMatrix assumption2_batch_to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}
}  // namespace

BatchRankResult dmat_batch_rank(const std::vector<DMatrix>& mats, int threads) {
  BatchRankResult out;
  out.prime = prime_fast(0);
  out.rank.assign(mats.size(), 0);
  std::vector<char> esc(mats.size(), 0);
  const int t = threads <= 0 ? fast_threads() : threads;
  std::atomic<std::size_t> finished{0};
  parallel_for(mats.size(), t, [&](std::size_t i) {
    const DMatrix& m = mats[i];
    const std::size_t full = std::min(m.rows(), m.cols());
    std::size_t r = 0;
    if (full > 0) {
      DModMatrix d = dmod_from_double_rows(m.data().data(), m.rows(), m.cols(), out.prime);
      r = dmod_rank_profile(d, {.threads = 1, .in_place = true}).rank;
    }
    if (r < full) {  // escalate: exact rank over Q
      esc[i] = 1;
      r = qmat_rank(assumption2_batch_to_q(m));
    }
    out.rank[i] = r;
    progress_tick("rank of each matrix", ++finished, mats.size());
  });
  for (char e : esc) (e ? out.escalated : out.certified_mod_p)++;
  return out;
}

}  // namespace memcert
