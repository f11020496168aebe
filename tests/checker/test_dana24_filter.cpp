// The dana24 check's double filter (softmax in MPFR, mixing and projections in double midpoint-radius
// arithmetic) against its MPFR route at 512 bits, an independent evaluation of the same encoder: on random
// models with cancelling weights, the filter's enclosure must contain the 512-bit one and be narrow enough
// to decide margins (else every sequence would go to MPFR and the filter would only cost time).
#include <gmpxx.h>

#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "../../src/checker/kinds/dana24/dana24_forward.hpp"
#include "../../src/checker/kernel/json.hpp"

using namespace memcert_checker;

namespace {
// A JSON list of `count` dyadic strings m / 2^k with |m| < 2^bits, in row-major nesting given by shape.
std::string tensor(std::mt19937_64& rng, const std::vector<std::size_t>& shape, std::size_t level, int bits, int k) {
  std::string out = "[";
  const std::string den = mpz_class(mpz_class(1) << k).get_str();
  for (std::size_t i = 0; i < shape[level]; ++i) {
    if (i) out += ',';
    if (level + 1 == shape.size()) {
      const long m = static_cast<long>(rng() % (std::uint64_t{1} << bits)) - (long{1} << (bits - 1));
      out.append("\"").append(std::to_string(m)).append("/").append(den).append("\"");
    } else {
      out += tensor(rng, shape, level + 1, bits, k);
    }
  }
  out += ']';
  return out;
}
}  // namespace

TEST_CASE("dana24 filter: the double route's encoder enclosure contains MPFR's at 512 bits", "[checker][dana24]") {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 12; ++trial) {
    Dana24Shape sh;
    sh.N = 7, sh.S = 2 + trial % 4, sh.d = 6 + trial % 3, sh.dh = 1 + trial % 3, sh.H = 1 + trial % 4;
    // W_Q, W_K up to 2^(20 - k) (scores from 1 to far past softmax saturation); W_V, W_O up to 2^10
    // (large output weights that magnify the mixing's radius, as an ill-conditioned solve gives).
    const int qk = trial % 3 == 0 ? 14 : 8;
    std::string w = "{";
    const struct { const char* name; std::vector<std::size_t> shape; int bits, k; } parts[] = {
        {"e", {sh.N, sh.d}, 30, 28},          {"pos", {sh.S, sh.d}, 30, 28},         {"WU", {sh.N, sh.d}, 10, 8},
        {"WQ", {sh.H, sh.dh, sh.d}, 40, 40 - qk}, {"WK", {sh.H, sh.dh, sh.d}, 40, 40 - qk},
        {"WV", {sh.H, sh.dh, sh.d}, 60, 50},  {"WO", {sh.H, sh.d, sh.dh}, 60, 50}};
    for (const auto& p : parts) {
      if (w.size() > 1) w += ',';
      w.append("\"").append(p.name).append("\":").append(tensor(rng, p.shape, 0, p.bits, p.k));
    }
    w += '}';
    json::Value v;
    std::string err;
    REQUIRE(json::parse(w, v, err));
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<std::size_t> seq(sh.S);
      for (auto& x : seq) x = rng() % sh.N;
      std::vector<mpq_class> flo, fhi, mlo, mhi;
      std::string why;
      REQUIRE(dana24_encoder_enclosures(v, sh, seq, true, 128, flo, fhi, why));
      REQUIRE(dana24_encoder_enclosures(v, sh, seq, false, 512, mlo, mhi, why));
      for (std::size_t i = 0; i < sh.d; ++i) {
        INFO("trial " << trial << " rep " << rep << " i " << i << " filter [" << flo[i].get_d() << ", " << fhi[i].get_d()
                      << "], mpfr [" << mlo[i].get_d() << ", " << mhi[i].get_d() << "]");
        CHECK(flo[i] <= mlo[i]);
        CHECK(mhi[i] <= fhi[i]);
        CHECK(fhi[i] - flo[i] < mpq_class(1, 1 << 20));  // narrow: useful as a filter
      }
    }
  }
}
