// A program built against an installed memcert (examples/consumer/CMakeLists.txt) through the one public
// header: the exact rank of a small matrix with its certificate from memcert::core, re-verified by
// memcert::checker, the independent checker, and a data set from each paper's library (memcert::mahdavi24,
// memcert::ks25, memcert::dana24). Prints "rank 2 VALID memcert X.Y.Z" and "papers T=3 N=4 T=2", and exits 0
// when all agree.
#include <memcert/memcert.hpp>

#include <iostream>

int main() {
  using namespace memcert;
  // Row 3 = row 1 + row 2 with an exact dyadic entry (0.125): the rank is 2, not 3.
  QMatrix a(3, 3);
  const char* entries[3][3] = {{"1", "2", "1/8"}, {"0", "1", "3"}, {"1", "3", "25/8"}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) a(i, j) = Rational(entries[i][j]);
  RankCertificate c = rank_certified(typed_matrix_from_qmat(a));
  memcert_checker::Verdict v = memcert_checker::verify_certificate_text(rank_certificate_to_json(a, c).dump());
  std::cout << "rank " << c.rank << (v.valid ? " VALID" : " INVALID: " + v.reason) << " memcert "
            << version_string << "\n";
  // One call into each paper's library (each links only through its own target).
  const AttentionDataset m = mahdavi24::generate_attention_dataset("theorem1", 3, 2, 3, std::nullopt, 1);
  const SequenceDataset k = ks25::ks_generate(4, 2, 2, 3, 2, 1, false);
  const dana24::AssocData s = dana24::assoc_data_generate(4, 2, 2, 1, false);
  std::cout << "papers T=" << m.T() << " N=" << k.N() << " T=" << s.T() << "\n";
  return c.rank == 2 && v.valid && m.T() == 3 && k.N() == 4 && s.T() == 2 ? 0 : 1;
}
