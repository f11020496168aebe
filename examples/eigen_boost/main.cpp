// Eigen and Boost.Multiprecision types end to end (examples/eigen_boost/CMakeLists.txt): an exact rational
// matrix's certified rank with its certificate, re-verified by the independent checker, its exact kernel,
// and a certified rank lower bound for a double matrix known up to a rounding-error enclosure (Lemma 5).
// Prints three lines and exits 0 when every result is as expected.
#include <memcert/checker/checker.hpp>
#include <memcert/eigen.hpp>

#include <Eigen/Dense>
#include <boost/multiprecision/gmp.hpp>
#include <iostream>

int main() {
  using boost::multiprecision::mpq_rational;
  using Q = Eigen::Matrix<mpq_rational, Eigen::Dynamic, Eigen::Dynamic>;

  // Row 3 = row 1 + row 2, with exact thirds: rank 2.
  Q a(3, 3);
  a << mpq_rational(1, 3), mpq_rational(2), mpq_rational(1, 8),  //
      mpq_rational(0), mpq_rational(1), mpq_rational(3),          //
      mpq_rational(1, 3), mpq_rational(3), mpq_rational(25, 8);
  const memcert::eigen::RankResult r = memcert::eigen::rank_certified(a);
  const memcert_checker::Verdict v = memcert_checker::verify_certificate_text(r.certificate);
  std::cout << "rank " << r.rank << (v.valid ? " VALID" : " INVALID: " + v.reason) << "\n";

  // Its kernel, exactly: A x = 0.
  const Q k = memcert::eigen::kernel(a);
  bool kernel_ok = k.cols() == 1;
  for (Eigen::Index i = 0; i < a.rows() && kernel_ok; ++i) {
    mpq_rational s = 0;
    for (Eigen::Index j = 0; j < a.cols(); ++j) s += a(i, j) * k(j, 0);
    kernel_ok = s == 0;
  }
  std::cout << "kernel";
  for (Eigen::Index i = 0; i < k.rows(); ++i) std::cout << " " << k(i, 0).str();
  std::cout << (kernel_ok ? " A*x = 0" : " WRONG") << "\n";

  // A 4 x 6 double matrix known to within 1e-12 per entry: rank >= 4 for every matrix in that enclosure.
  Eigen::MatrixXd c(4, 6);
  c << 1, 2, 0, 1, 0.5, 3,  //
      0, 1, 4, 0, 1, 1,     //
      2, 0, 1, 1, 0, 0.25,  //
      1, 1, 1, 1, 1, 1;
  const Eigen::MatrixXd radius = Eigen::MatrixXd::Constant(4, 6, 1e-12);
  const memcert::eigen::EnclosureRankResult e = memcert::eigen::enclosure_rank_lower(c, radius);
  const memcert_checker::Verdict ve = memcert_checker::verify_certificate_text(e.certificate);
  std::cout << "enclosure rank >= " << e.rank_lower << (ve.valid ? " VALID" : " INVALID: " + ve.reason) << "\n";

  return r.rank == 2 && v.valid && kernel_ok && e.rank_lower == 4 && ve.valid ? 0 : 1;
}
