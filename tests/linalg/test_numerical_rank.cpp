// numerical_rank against the exact rank (qmat_rank) on well-conditioned integer matrices of known rank,
// and against the exact rank's disagreement on a low-rank matrix with rounding-level noise.
#include "catch.hpp"

#include <cstring>
#include <limits>
#include <random>
#include <tuple>

#include "memcert/linalg/fmat/numerical_rank.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/typed_matrix.hpp"

#include "memcert/linalg/fmat/eigen_svd.hpp"  // Eigen::BDCSVD, instantiated once in the engine

using namespace memcert;

namespace {
// U V with U m x k, V k x n of small random integers: rank k (almost surely; checked exactly).
QMatrix low_rank(std::size_t m, std::size_t n, std::size_t k, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(-5, 5);
  QMatrix U(m, k), V(k, n), A(m, n, Rational(0));
  for (auto& x : U.data()) x = u(rng);
  for (auto& x : V.data()) x = u(rng);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < k; ++l) A(i, j) += U(i, l) * V(l, j);
  return A;
}
// Eigen's singular values of the rows x cols row-major doubles v (the second method of these tests).
Eigen::VectorXd singular_values_of(const std::vector<double>& v, std::size_t rows, std::size_t cols) {
  Eigen::MatrixXd e(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) e(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = v[i * cols + j];
  Eigen::BDCSVD<Eigen::MatrixXd> svd(e);
  return svd.singularValues();
}
}  // namespace

TEST_CASE("numerical rank equals the exact rank on small integer matrices", "[numerical_rank]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    std::size_t m = 3 + rng() % 8, n = 3 + rng() % 8, k = 1 + rng() % std::min(m, n);
    QMatrix A = low_rank(m, n, k, rng);
    NumericalRank nr = numerical_rank(A);
    CHECK(nr.rank == qmat_rank(A));
    CHECK(nr.eps == std::numeric_limits<double>::epsilon());  // integers: numpy converts to float64
    CHECK(nr.tol == numerical_rank_default_tol(nr.sigma_max, m, n, nr.eps));
  }
  CHECK(numerical_rank(QMatrix(4, 3, Rational(0))).rank == 0);
}

TEST_CASE("rounding-level noise: full exact rank, low numerical rank", "[numerical_rank]") {
  std::mt19937_64 rng(3);
  QMatrix A = low_rank(12, 10, 2, rng);
  // Perturb every entry by 0 or +-2^-47 (|A| < 2^6, so every entry stays an exact double): noise at the
  // level of double rounding, as float storage of computed values has.
  std::uniform_int_distribution<int> u(-1, 1);
  for (auto& x : A.data()) {
    REQUIRE(abs(x) < 64);
    x += Rational(u(rng), Integer(1) << 47);
  }
  CHECK(qmat_rank(A) == 10);          // exactly: the noise is independent directions
  CHECK(numerical_rank(A).rank == 2);  // numerically: rank 2 as the data's structure
  // An explicit tolerance above every singular value gives 0; tol 0 counts every non-zero one.
  CHECK(numerical_rank(A, 1e6).rank == 0);
  CHECK(numerical_rank(A, 0.0).rank == 10);
}

// The "gram-rump" shortcut (large well-conditioned matrices, no SVD) against the SVD it replaces, and its
// refusal on matrices whose numerical rank is not full (they must reach the SVD and get its answer).
TEST_CASE("gram-rump shortcut agrees with the SVD and declines rank-deficient matrices", "[numerical_rank]") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  for (auto [m, n] : {std::pair<int, int>{60, 90}, {120, 70}, {64, 64}, {300, 520}, {530, 290}}) {
    TypedMatrix a;
    a.rows = static_cast<std::size_t>(m), a.cols = static_cast<std::size_t>(n), a.storage = Storage::float64;
    a.f64.resize(a.rows * a.cols);
    for (double& x : a.f64) x = g(rng);
    NumericalRank fast = numerical_rank(a);
    REQUIRE(fast.method == "gram-rump");
    // Second method: Eigen's SVD on the same doubles, with numpy's threshold.
    Eigen::MatrixXd e(m, n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) e(i, j) = a.f64[static_cast<std::size_t>(i * n + j)];
    Eigen::BDCSVD<Eigen::MatrixXd> svd(e);
    const Eigen::VectorXd& s = svd.singularValues();
    double tol = numerical_rank_default_tol(s(0), a.rows, a.cols, std::numeric_limits<double>::epsilon());
    CHECK(fast.rank == static_cast<std::size_t>((s.array() > tol).count()));
    CHECK(fast.sigma_max <= s(0) * (1 + 1e-12));   // estimated from below
    CHECK(fast.sigma_max >= s(0) * (1 - 1e-6));     // and close (Lanczos)
    CHECK(s(s.size() - 1) > fast.tol);              // the reported (rank, tol) pair holds
    // An explicit tol above sigma_min: the shortcut cannot certify, the SVD answers.
    NumericalRank high = numerical_rank(a, s(s.size() - 1) * 1.01);
    CHECK(high.method == "svd");
    CHECK(high.rank == static_cast<std::size_t>(s.size() - 1));
  }
  // Exactly rank-deficient (one column a copy of another): the shortcut declines, the SVD says n - 1.
  TypedMatrix d;
  d.rows = 80, d.cols = 50, d.storage = Storage::float64;
  d.f64.resize(80 * 50);
  for (double& x : d.f64) x = g(rng);
  for (std::size_t i = 0; i < 80; ++i) d.f64[i * 50 + 49] = d.f64[i * 50 + 3];
  NumericalRank nd = numerical_rank(d);
  CHECK(nd.method == "svd");
  CHECK(nd.rank == 49);
}

// The shortcut from every storage: int64 (converted, tall or wide), float64 tall (transposed) and the
// rational route (Eigen's column-major copy, used as it lies when tall): the same rank as the SVD of the
// same values and a (rank, tol) pair that holds.
TEST_CASE("gram-rump shortcut from int64, float64 and rational storage, wide and tall", "[numerical_rank]") {
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<int> u(-1000, 1000);
  for (auto [m, n] : {std::pair<std::size_t, std::size_t>{70, 260}, {260, 70}}) {
    std::vector<std::int64_t> v(m * n);
    for (auto& x : v) x = u(rng);
    Eigen::MatrixXd e(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(n));
    QMatrix q(m, n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        e(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = static_cast<double>(v[i * n + j]);
        q(i, j) = Rational(static_cast<long>(v[i * n + j]));
      }
    Eigen::BDCSVD<Eigen::MatrixXd> svd(e);
    const Eigen::VectorXd& s = svd.singularValues();
    TypedMatrix as_int = typed_matrix_from_i64(m, n, v);
    for (const NumericalRank& nr : {numerical_rank(as_int), numerical_rank(q)}) {
      CHECK(nr.method == "gram-rump");
      CHECK(nr.rank == std::min(m, n));
      CHECK(s(s.size() - 1) > nr.tol);
      CHECK(nr.sigma_max <= s(0) * (1 + 1e-12));
      CHECK(nr.sigma_max >= s(0) * (1 - 1e-6));
    }
  }
}

// numerical_rank_full_proved (a column subset's Gram matrix, Rump's test; no SVD) against the SVD of the
// whole matrix: on well-conditioned Gaussian matrices (wide, tall, k / n from 1/4 to 1, float32 read at
// a misaligned address and float64) it proves full rank and the SVD agrees; on matrices whose numerical
// rank is short of full (an exactly dependent row, a row differing from another by rounding-level noise,
// a singular value just below numpy's threshold) it never claims a proof.
TEST_CASE("numerical_rank_full_proved: proves only what the SVD confirms", "[numerical_rank]") {
  std::mt19937_64 rng(20261127);
  std::normal_distribution<float> g(0, 1);
  auto svd_rank = [](const std::vector<double>& v, std::size_t rows, std::size_t cols, double eps) {
    const Eigen::VectorXd s = singular_values_of(v, rows, cols);
    const double tol = numerical_rank_default_tol(s(0), rows, cols, eps);
    return std::pair<std::size_t, Eigen::VectorXd>(static_cast<std::size_t>((s.array() > tol).count()), s);
  };
  const double eps32 = std::numeric_limits<float>::epsilon(), eps64 = std::numeric_limits<double>::epsilon();
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{20, 80}, {50, 60}, {90, 30}, {33, 33}, {1, 7}}) {
    std::vector<double> v(rows * cols);
    for (double& x : v) x = g(rng);  // float32 values
    // The same values as float32 bytes one byte past an aligned address (as in a mapped .npz).
    std::vector<unsigned char> bytes(rows * cols * 4 + 1);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(bytes.data() + 1 + 4 * i, &f, 4);
    }
    const auto* le = reinterpret_cast<const Float32Le*>(bytes.data() + 1);
    REQUIRE(numerical_rank_eps(4) == eps32);
    const std::size_t full = std::min(rows, cols);
    CHECK(svd_rank(v, rows, cols, eps32).first == full);
    CHECK(numerical_rank_full_proved(le, rows, cols, eps32));
    CHECK(numerical_rank_full_proved(v.data(), rows, cols, eps32));
    CHECK(numerical_rank_full_proved(v.data(), rows, cols, eps64, 0.0));  // tol 0: exact full rank
    // An explicit tol above sigma_min: the SVD counts fewer, and no proof may be claimed.
    const Eigen::VectorXd s = svd_rank(v, rows, cols, eps32).second;
    CHECK_FALSE(numerical_rank_full_proved(v.data(), rows, cols, eps32, s(s.size() - 1) * 1.001));
    CHECK(numerical_rank_full_proved(v.data(), rows, cols, eps32, s(s.size() - 1) * 0.01));  // the subset's are lower
    if (full < 2) continue;
    // The last line of the short side a copy of the first, plus noise below numpy's threshold.
    std::vector<double> w = v;
    for (std::size_t j = 0; j < std::max(rows, cols); ++j) {
      double& last = rows <= cols ? w[(rows - 1) * cols + j] : w[j * cols + cols - 1];
      const double first = rows <= cols ? w[j] : w[j * cols];
      last = first + (j % 3 == 0 ? 0x1p-40 : 0.0);
    }
    CHECK(svd_rank(w, rows, cols, eps32).first < full);
    CHECK_FALSE(numerical_rank_full_proved(w.data(), rows, cols, eps32));
    // (Exactly of full rank, but by 2^-40: below what a Gram matrix in double can resolve; no proof.)
    for (std::size_t j = 0; j < std::max(rows, cols); ++j)  // exactly dependent
      (rows <= cols ? w[(rows - 1) * cols + j] : w[j * cols + cols - 1]) = rows <= cols ? w[j] : w[j * cols];
    CHECK_FALSE(numerical_rank_full_proved(w.data(), rows, cols, eps64, 0.0));
  }
}

// int64 storage of small entries takes the exact 16-bit Gram route (gram_int16.hpp; no Gram rounding):
// against the SVD of the same values, and against the double route (the same values stored as float64).
// Adversarial: an integer matrix of full exact rank whose numerical rank is not full (1 on the diagonal,
// -1 everywhere above it: sigma_min ~ 2^-n) must not be certified; it reaches the SVD and gets its count.
// Entries too wide for the 16-bit route fall back to the double route.
TEST_CASE("int64 exact Gram route agrees with the SVD and the double route, and declines the ill-conditioned",
          "[numerical_rank]") {
  const double eps = std::numeric_limits<double>::epsilon();
  std::mt19937_64 rng(271);
  for (auto [m, n, bound] : {std::tuple<std::size_t, std::size_t, std::int64_t>{150, 150, 1000}, {97, 300, 2896},
                             {300, 97, 7}, {80, 80, 1000000}}) {
    INFO(m << " x " << n << " entries up to " << bound);
    std::uniform_int_distribution<std::int64_t> u(-bound, bound);
    std::vector<std::int64_t> v(m * n);
    for (auto& x : v) x = u(rng);
    std::vector<double> d(v.begin(), v.end());
    const Eigen::VectorXd s = singular_values_of(d, m, n);
    const NumericalRank ni = numerical_rank(typed_matrix_from_i64(m, n, v));
    const NumericalRank nd = numerical_rank(typed_matrix_from_f64(m, n, d));
    CHECK(ni.method == "gram-rump");
    CHECK(ni.rank == std::min(m, n));
    CHECK(s(s.size() - 1) > ni.tol);                 // the reported pair holds
    CHECK(ni.sigma_max <= s(0) * (1 + 1e-12));       // Lanczos from below, close
    CHECK(ni.sigma_max >= s(0) * (1 - 1e-6));
    CHECK(nd.rank == ni.rank);
    CHECK(std::abs(nd.tol - ni.tol) <= 1e-9 * nd.tol);
  }
  for (std::size_t n : {60, 130}) {
    std::vector<std::int64_t> v(n * n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i; j < n; ++j) v[i * n + j] = i == j ? 1 : -1;
    std::vector<double> d(v.begin(), v.end());
    const Eigen::VectorXd s = singular_values_of(d, n, n);
    const std::size_t svd_rank =
        static_cast<std::size_t>((s.array() > numerical_rank_default_tol(s(0), n, n, eps)).count());
    REQUIRE(svd_rank < n);  // numerically deficient, exactly of full rank (determinant 1)
    const NumericalRank ni = numerical_rank(typed_matrix_from_i64(n, n, v));
    CHECK(ni.method == "svd");
    CHECK(ni.rank == svd_rank);
  }
  // An explicit tol just above / below sigma_min of a well-conditioned integer matrix.
  std::uniform_int_distribution<std::int64_t> u(-1000, 1000);
  std::vector<std::int64_t> v(100 * 100);
  for (auto& x : v) x = u(rng);
  std::vector<double> d(v.begin(), v.end());
  const Eigen::VectorXd s = singular_values_of(d, 100, 100);
  const NumericalRank high = numerical_rank(typed_matrix_from_i64(100, 100, v), s(s.size() - 1) * 1.001);
  CHECK(high.method == "svd");
  CHECK(high.rank == 99);
  const NumericalRank low = numerical_rank(typed_matrix_from_i64(100, 100, v), s(s.size() - 1) * 0.999);
  CHECK(low.method == "gram-rump");
  CHECK(low.rank == 100);
}

// numpy's eps is the stored dtype's (numpy.linalg.matrix_rank: S.max() * max(M, N) * finfo(S.dtype).eps),
// never inferred from the values: [[1, 0], [0, 2^-30]] holds only float32 values, yet stored as float64
// its numerical rank is 2 (tol 2 * 2^-52), stored as float32 it is 1 (tol 2 * 2^-23). The SVD of a
// diagonal matrix is its diagonal, so numpy's answers are known exactly here.
TEST_CASE("numerical_rank: eps of the stored dtype", "[numerical_rank]") {
  const double tiny = 0x1p-30;
  for (unsigned bytes : {8u, 4u, 2u}) {
    TypedMatrix a = typed_matrix_from_f64(2, 2, {1, 0, 0, tiny});
    a.stored_float_bytes = bytes;
    const NumericalRank nr = numerical_rank(a);
    const double eps = bytes == 8 ? 0x1p-52 : bytes == 4 ? 0x1p-23 : 0x1p-10;
    INFO("stored float bytes " << bytes);
    CHECK(nr.eps == eps);
    CHECK(nr.tol == 2 * eps);  // sigma_max 1, max(m, n) 2
    CHECK(nr.rank == (bytes == 8 ? 2u : 1u));
    // Rows of it keep the dtype.
    CHECK(numerical_rank(typed_matrix_rows(a, 1, 1)).eps == eps);
  }
  // int64 data and rationals: numpy computes in float64.
  CHECK(numerical_rank(typed_matrix_from_i64(2, 2, {1, 0, 0, 1})).eps == 0x1p-52);
  QMatrix q(2, 2, Rational(0));
  q(0, 0) = 1;
  q(1, 1) = Rational(1, 1 << 30);
  CHECK(numerical_rank(q).rank == 2);
  CHECK(numerical_rank(typed_matrix_from_qmat(q)).rank == 2);
  CHECK(numerical_rank_eps(8) == std::numeric_limits<double>::epsilon());
  CHECK(numerical_rank_eps(4) == static_cast<double>(std::numeric_limits<float>::epsilon()));
}
