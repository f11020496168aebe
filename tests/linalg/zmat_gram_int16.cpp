// The exact 16-bit Gram product (gram_int16.hpp) against a plain 128-bit integer Gram matrix, entry by
// entry, on every kernel this CPU runs: shapes around the 64-column panels and 6-row tiles, odd inner
// lengths, the transposed (tall) packing, several flushes of the 32-bit lanes, the largest admitted
// entries; and its refusals (an entry of 2^15 or INT64_MIN, entries too wide for a useful flush length).
#include "catch.hpp"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "memcert/linalg/zmat/gram_int16.hpp"

using namespace memcert;

namespace {

__extension__ typedef __int128 i128;

// C C^T exactly, C = a (rows x cols) or its transpose.
std::vector<i128> gram_reference(const std::vector<std::int64_t>& a, std::size_t rows, std::size_t cols, bool transposed) {
  const std::size_t k = transposed ? cols : rows, n = transposed ? rows : cols;
  auto c = [&](std::size_t i, std::size_t l) { return transposed ? a[l * cols + i] : a[i * cols + l]; };
  std::vector<i128> g(k * k, 0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      i128 s = 0;
      for (std::size_t l = 0; l < n; ++l) s += static_cast<i128>(c(i, l)) * c(j, l);
      g[i * k + j] = s;
    }
  return g;
}

std::vector<const char*> kernels() {
  std::vector<const char*> out;
  if (std::string(gram_int16_kernel_name()) != "none") out.push_back(gram_int16_kernel_name());
  if (std::string(gram_int16_kernel_name()) == "avx512vnni") out.push_back("avx2");
  return out;
}

}  // namespace

TEST_CASE("exact int16 Gram equals the 128-bit integer Gram on every kernel", "[gram_int16]") {
  if (kernels().empty()) {
    WARN("no AVX2 on this CPU: the exact route is not taken here");
    return;
  }
  std::mt19937_64 rng(20261127);
  struct Case {
    std::size_t rows, cols;
    std::int64_t bound;
    bool tall_too = true;  // also as the transpose (not for the 4500-row transpose: a 160 MB Gram)
  };
  // (bound, inner length) pairs below: 2896 with 600 columns needs three flushes of 128 pairs; 3 with
  // 4500 columns passes kChunkMax (2048 pairs); 32767 fits only an inner length of 2 (one pair).
  const std::vector<Case> cases = {{1, 1, 1000},     {5, 3, 1000},     {6, 7, 1000},    {64, 64, 1000},
                                   {65, 131, 1000},  {131, 65, 1000},  {130, 601, 2896}, {601, 130, 2896},
                                   {70, 4500, 3, false}, {2, 2, 32767},    {200, 3, 5},     {128, 128, 0},
                                   {5, 0, 7}};
  for (const char* kname : kernels())
    for (const Case& cs : cases) {
      std::uniform_int_distribution<std::int64_t> u(-cs.bound, cs.bound);
      std::vector<std::int64_t> a(cs.rows * cs.cols);
      for (auto& x : a) x = u(rng);
      if (cs.bound > 0 && !a.empty()) a[0] = -cs.bound, a.back() = cs.bound;  // the extremes are admitted
      for (bool transposed : {false, true}) {
        if (transposed && !cs.tall_too) continue;
        INFO(kname << " " << cs.rows << " x " << cs.cols << " bound " << cs.bound << (transposed ? " transposed" : ""));
        const std::size_t k = transposed ? cs.cols : cs.rows;
        std::vector<double> g(k * k, -1.0);
        auto fro2 = gram_lower_exact_i16_kernel(kname, a.data(), cs.rows, cs.cols, transposed, g.data(), 2);
        REQUIRE(fro2);
        std::vector<i128> ref = gram_reference(a, cs.rows, cs.cols, transposed);
        i128 ss = 0;
        for (std::int64_t x : a) ss += static_cast<i128>(x) * x;
        CHECK(*fro2 == static_cast<double>(ss));
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < k; ++i)
          for (std::size_t j = 0; j <= i; ++j)
            if (static_cast<i128>(g[i * k + j]) != ref[i * k + j] || g[i * k + j] != static_cast<double>(ref[i * k + j])) ++wrong;
        CHECK(wrong == 0);
      }
    }
}

TEST_CASE("exact int16 Gram refuses what it cannot do exactly and usefully", "[gram_int16]") {
  if (kernels().empty()) {
    WARN("no AVX2 on this CPU");
    return;
  }
  std::vector<double> g(100 * 100);
  for (std::int64_t bad : {std::int64_t(32768), std::int64_t(-32768), std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max()}) {
    std::vector<std::int64_t> a(100 * 100, 1);
    a[57 * 100 + 91] = bad;  // one entry, far from the first panel
    INFO(static_cast<long long>(bad));
    CHECK_FALSE(gram_lower_exact_i16(a.data(), 100, 100, false, g.data()));
    CHECK_FALSE(gram_lower_exact_i16(a.data(), 100, 100, true, g.data()));
    // A 2 x 2 matrix: one pair per lane, so no flush-length limit could hide a missed range check.
    std::vector<std::int64_t> small{1, 2, bad, 3};
    CHECK_FALSE(gram_lower_exact_i16(small.data(), 2, 2, false, g.data()));
    CHECK_FALSE(gram_lower_exact_i16(small.data(), 2, 2, true, g.data()));
  }
  // 2897^2 * 2 * 128 > 2^31 - 1: fewer than 128 pairs per flush at 300 pairs -> declined.
  std::vector<std::int64_t> wide(100 * 600, 1);
  wide[5] = 2897;
  CHECK_FALSE(gram_lower_exact_i16(wide.data(), 100, 600, false, g.data()));
  wide[5] = 2896;
  CHECK(gram_lower_exact_i16(wide.data(), 100, 600, false, g.data()));
}
