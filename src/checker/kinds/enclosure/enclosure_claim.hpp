#pragma once
// What both enclosure-rank kinds ("enclosure-rank": exact Gram + LDL^T; "enclosure-rank-rump": double
// Gram + Rump) read and check alike: the claim text, centre C and radius R (same shape, R >= 0 entrywise),
// k = rank_lower distinct rows S of C, and mu > 0 with ||R_S||_F^2 < mu EXACTLY. What remains for the kind
// is to certify C_S C_S^T - mu I positive definite.
#include <string>
#include <vector>

#include "kernel/read.hpp"

namespace memcert_checker {

struct EnclosureClaim {
  QMat c, r;
  std::size_t m = 0, n = 0, k = 0;
  std::vector<std::size_t> s;
  mpq_class mu;
};

bool read_enclosure_claim(const Value& cert, const std::string& kind, EnclosureClaim& e, std::string& why);

}  // namespace memcert_checker
