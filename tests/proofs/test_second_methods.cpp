// The facts the claims rest on, re-derived by a second, independent route.
#include "catch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/modp.hpp"
#include "memcert/proofs/positional_encoding.hpp"

using namespace memcert;

namespace {
QMatrix random_matrix(std::mt19937_64& g, std::size_t r, std::size_t c, long range) {
  std::uniform_int_distribution<long> u(-range, range);
  QMatrix m(r, c);
  for (auto& x : m.data()) x = u(g);
  return m;
}
}  // namespace

TEST_CASE("Proposition 2: Z = A (I (x) E) and rank Z = rank A <= H(n-1)+1 for a shared full-rank context", "[proofs]") {
  std::mt19937_64 g(11);
  for (int trial = 0; trial < 6; ++trial) {
    std::size_t H = 2 + trial % 3, n = 2 + trial % 2, d = n + 2, T = H * n + 1;
    QMatrix E;
    do E = random_matrix(g, n, d, 4); while (qmat_rank(E) < n);
    QMatrix A(T, H * n), Z(T, H * d, Rational(0));
    std::uniform_int_distribution<long> w(1, 9);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < H; ++h) {
        Rational s = 0;
        for (std::size_t k = 0; k < n; ++k) { A(t, h * n + k) = w(g); s += A(t, h * n + k); }
        for (std::size_t k = 0; k < n; ++k) A(t, h * n + k) /= s;
        // Row t of head h's block of Z: the convex combination alpha^T E, computed directly.
        for (std::size_t k = 0; k < n; ++k)
          for (std::size_t j = 0; j < d; ++j) Z(t, h * d + j) += A(t, h * n + k) * E(k, j);
      }
    QMatrix IE(H * n, H * d, Rational(0));  // I_H (x) E
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < d; ++j) IE(h * n + k, h * d + j) = E(k, j);
    CHECK(mat_mul(A, IE) == Z);
    std::size_t rz = qmat_rank(Z);
    CHECK(rz == qmat_rank(A));
    CHECK(rz <= H * (n - 1) + 1);
    // The nullity of A is at least H - 1 (the proof's kernel), computed as a kernel basis.
    CHECK(qmat_kernel(A).cols() >= H - 1);
  }
}

TEST_CASE("Lemma 2: det(I + a 1 1^T) = 1 + n a decides independence of the y_i", "[proofs]") {
  std::mt19937_64 g(5);
  for (long n = 1; n <= 5; ++n)
    for (long num : {-3L, -1L, 0L, 1L, 7L}) {
      for (Rational a : {Rational(num, 1), Rational(Integer(-1), Integer(n)), Rational(Integer(num), Integer(n + 2))}) {
        a.canonicalize();
        QMatrix M = QMatrix::identity(n);
        for (auto& x : M.data()) x += a;
        CHECK(qmat_det(M) == 1 + n * a);
        QMatrix X;
        do X = random_matrix(g, n, n + 1, 5); while (qmat_rank(X) < static_cast<std::size_t>(n));
        CHECK((qmat_rank(mat_mul(M, X)) == static_cast<std::size_t>(n)) == (1 + n * a != 0));
      }
    }
}

TEST_CASE("sinusoidal encodings: the textbook formula, exact conversion, rank by two primes", "[proofs]") {
  std::size_t n = 24, d = 40;
  auto pe = proofs::sinusoidal_encoding(n, d);
  for (std::size_t pos = 0; pos < n; ++pos)
    for (std::size_t i = 0; 2 * i < d; ++i) {
      double angle = pos / std::pow(10000.0, 2.0 * i / d);
      CHECK(std::abs(pe[pos * d + 2 * i] - std::sin(angle)) < 1e-9);
      CHECK(std::abs(pe[pos * d + 2 * i + 1] - std::cos(angle)) < 1e-9);
    }
  QMatrix q = proofs::sinusoidal_encoding_exact(n, d);
  for (std::size_t i = 0; i < pe.size(); ++i) CHECK(rational_to_double(q.data()[i]) == pe[i]);
  std::size_t r = qmat_rank(q);
  CHECK(r == n);
  ZMatrix z = qmat_row_scaled_integer(q);
  CHECK(zmat_rank_profile_modp(z, modp::prime_31(7)).rank <= r);  // rank mod p never exceeds rank over Q
  CHECK(zmat_rank_profile_modp(z, modp::prime_31(7)).rank == n);
}

TEST_CASE("CLI: claims list/run and generate pe follow docs/CLI.md", "[proofs][cli]") {
  const char* bin = std::getenv("MEMCERT_BIN");
  if (!bin) { WARN("MEMCERT_BIN not set: CLI checks skipped"); return; }
  auto run = [&](const std::string& args, std::string& out) {
    std::string file = "test_proofs_cli_out.txt";
    int rc = std::system((std::string(bin) + " " + args + " > " + file + " 2>/dev/null").c_str());
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    std::remove(file.c_str());
    return WEXITSTATUS(rc);
  };
  std::string out;
  REQUIRE(run("claims list --json", out) == 0);
  auto list = nlohmann::json::parse(out);
  CHECK(list["claims"].size() >= 17);
  REQUIRE(run("claims run mahdavi24/lemma-2-boundary --instances 2 --seed 3 --json", out) == 0);
  auto j = nlohmann::json::parse(out);
  for (const char* k : {"claim", "instances", "confirmed", "counterexamples", "seconds"}) CHECK(j.contains(k));
  CHECK(j["counterexamples"].size() == 2);
  CHECK(j["counterexamples"][0]["witness"].contains("coefficients"));
  REQUIRE(run("claims run mahdavi24/proposition-2 --instances 2 --json", out) == 0);
  {
    std::string note = nlohmann::json::parse(out)["note"].get<std::string>();
    CHECK(note.find("NOT an upper bound on memorization capacity") != std::string::npos);
  }
  CHECK(run("claims run no/such-claim", out) == 2);
  REQUIRE(run("claims search mahdavi24/proposition-4 --budget 5 --seed 2 --json", out) == 0);
  {
    auto sj = nlohmann::json::parse(out);
    CHECK(sj["mode"] == "search");
    CHECK(sj["budget"] == 5);
    CHECK(sj["verdict"] == "no counterexample found");
    CHECK(sj["counterexamples"].empty());
  }
  CHECK(run("claims search mahdavi24/lemma-2 --budget 2", out) == 2);  // no search mode
  CHECK(run("claims search mahdavi24/lemma-3", out) == 2);             // --budget is required
  REQUIRE(run("generate pe --n 8 --d 12 --out test_proofs_pe.npy", out) == 0);
  QMatrix back = matrix_read("test_proofs_pe.npy");
  CHECK(back == proofs::sinusoidal_encoding_exact(8, 12));
  std::remove("test_proofs_pe.npy");
}
