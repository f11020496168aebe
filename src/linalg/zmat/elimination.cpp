// The exact elimination of an integer matrix, computed once (zmat.hpp's ZmatElimination): a rank
// profile mod a word-size prime, settled by the trivial bound or by a CRT kernel that passes the exact
// check Z K = 0, retrying the next prime otherwise.
#include <algorithm>
#include <stdexcept>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/zmat/zmat.hpp"

namespace memcert {

namespace {
constexpr std::size_t kEliminationPrimes = 64;

ModpRankProfile zmat_profile_mod(const ZMatrix& z, std::uint64_t p) {
  DModMatrix r = dmod_from_zmat(z, p);
  return dmod_rank_profile(r, {.threads = 0, .in_place = true});
}
}  // namespace

ZmatElimination::ZmatElimination(ZMatrix z) : z_(std::move(z)), prof_(zmat_profile_mod(z_, prime_fast(0))) {}

// rank mod p <= rank over Q; an unlucky prime shows up as a kernel candidate that fails the exact check,
// and the next prime is tried. Each attempt fails with probability ~ (minor size)/2^31.
void ZmatElimination::settle(bool need_kernel) {
  for (;;) {
    // Full row rank short of the columns: the minor proves rank >= rows and nothing can exceed it.
    if (!need_kernel && prof_.rank == std::min(z_.rows(), z_.cols()) && prof_.rank < z_.cols()) {
      trivial_ = true;
      return;
    }
    if (kernel_verified_) {
      trivial_ = false;
      return;
    }
    bool verified = false;
    kernel_ = zmat_kernel_from_profile_crt(z_, prof_, free_rows_, &verified);
    if (verified) {
      kernel_verified_ = true;
      trivial_ = false;
      return;
    }
    if (++attempt_ == kEliminationPrimes)
      throw std::runtime_error("exact elimination: 64 primes failed (input far beyond supported size)");
    prof_ = zmat_profile_mod(z_, prime_fast(attempt_));
  }
}

std::size_t ZmatElimination::rank() {
  settle(false);
  return prof_.rank;
}

const ModpRankProfile& ZmatElimination::profile() {
  settle(false);
  return prof_;
}

const QMatrix& ZmatElimination::kernel() {
  settle(true);
  return kernel_;
}

const std::vector<std::size_t>& ZmatElimination::kernel_free_rows() {
  settle(true);
  return free_rows_;
}

RankCertificate ZmatElimination::certificate(bool with_kernel) {
  settle(with_kernel);
  RankCertificate c;
  c.rows = z_.rows();
  c.cols = z_.cols();
  c.rank = prof_.rank;
  c.prime = prof_.prime;
  c.minor_rows = prof_.pivot_rows;
  c.minor_cols = prof_.pivot_cols;
  if (trivial_) {
    c.upper = RankUpper::trivial;
    c.kernel = QMatrix(z_.cols(), 0);
  } else {
    c.upper = RankUpper::kernel;
    c.kernel = kernel_;
    c.kernel_free_rows = free_rows_;
  }
  return c;
}

}  // namespace memcert
