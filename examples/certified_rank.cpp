// Certified rank in a few lines: the rank of a rational matrix with both halves of its certificate.
//   build/example_certified_rank
#include <iostream>

#include "memcert/linalg/rank.hpp"

int main() {
  using namespace memcert;
  // A 3 x 4 matrix whose third row is the sum of the first two, so its rank is 2.
  QMatrix a(3, 4);
  const char* rows[3][4] = {{"1", "1/2", "0", "3"}, {"2", "-1", "7/3", "0"}, {"3", "-1/2", "7/3", "3"}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) a(i, j) = *rational_parse(rows[i][j]);

  RankCertificate c = rank_certified(typed_matrix_from_qmat(a));  // the one rank entry
  std::cout << "rank = " << c.rank << "\n";
  // Lower half: a k x k minor that is non-singular modulo a prime (hence over Q).
  std::cout << "non-singular minor mod " << c.prime << ": rows {";
  for (auto r : c.minor_rows) std::cout << ' ' << r;
  std::cout << " }, cols {";
  for (auto col : c.minor_cols) std::cout << ' ' << col;
  std::cout << " }\n";
  // Upper half, by the argument the route chose (rank_certificate.hpp): rank(A mod q) <= k for primes q
  // whose product exceeds the Hadamard bound of the (k+1)-minors, or cols - k independent kernel vectors
  // with A x = 0 exactly.
  std::cout << "upper side: " << rank_upper_name(c.upper);
  if (c.upper == RankUpper::multi_prime) {
    std::cout << ", rank <= " << c.rank << " modulo";
    for (auto q : c.upper_primes) std::cout << ' ' << q;
  }
  std::cout << "\n";
  for (std::size_t i = 0; i < c.kernel.rows(); ++i) {
    for (std::size_t j = 0; j < c.kernel.cols(); ++j) std::cout << "  " << rational_to_string(c.kernel(i, j));
    std::cout << "\n";
  }
  return 0;
}
