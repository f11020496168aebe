#pragma once
// Rank lower bounds for matrices known only as enclosures A in [C - R, C + R] (docs/THEORY.md section 7,
// Lemma 5 / Weyl): choose k rows S, certify G - mu I positive definite for the exact Gram matrix
// G = C_S C_S^T, then ||R_S||_F^2 < mu gives rank A >= k for every A in the enclosure.
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert {

struct EnclosureRankCertificate {
  std::vector<std::size_t> rows;  // S, |S| = k
  Rational mu;                    // G - mu I positive definite => sigma_k(C_S) >= sqrt(mu)
  Rational radius_frobenius_sq;   // ||R_S||_F^2 (exact), < mu
  std::string method;             // "exact-ldl"; fmat/rump.hpp: "trivial", "double-rump", "mpfr-BITS"
};

// Certified lower bound sqrt(mu) on the k-th (= smallest) singular value of the k x n matrix `c`
// (k <= n): the largest mu found with c c^T - mu I certified positive definite; nullopt if none
// (c rank-deficient or too ill-conditioned at the tried mu values).
std::optional<Rational> qmat_sigma_min_sq_lower(const QMatrix& c);

// Tries to certify rank >= k for the enclosure (centre, radius) using rows `rows` (|rows| = k).
std::optional<EnclosureRankCertificate> enclosure_rank_lower(const QMatrix& centre, const QMatrix& radius,
                                                             const std::vector<std::size_t>& rows);

}  // namespace memcert
