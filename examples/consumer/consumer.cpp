// A program built against an installed memcert (examples/consumer/CMakeLists.txt): the exact rank of a
// small matrix with its certificate from memcert::core, re-verified by memcert::checker, the independent
// checker. Prints "rank 2 VALID memcert X.Y.Z" and exits 0 when both agree.
#include <iostream>

#include "memcert/cert/linalg_cert.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/version.hpp"

int main() {
  using namespace memcert;
  // Row 3 = row 1 + row 2 with an exact dyadic entry (0.125): the rank is 2, not 3.
  QMatrix a(3, 3);
  const char* entries[3][3] = {{"1", "2", "1/8"}, {"0", "1", "3"}, {"1", "3", "25/8"}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) a(i, j) = Rational(entries[i][j]);
  RankCertificate c = qmat_rank_certified(a);
  memcert_checker::Verdict v = memcert_checker::verify_certificate_text(rank_certificate_to_json(a, c).dump());
  std::cout << "rank " << c.rank << (v.valid ? " VALID" : " INVALID: " + v.reason) << " memcert "
            << version_string << "\n";
  return c.rank == 2 && v.valid ? 0 : 1;
}
