#include <catch2/catch.hpp>

#include "memcert/theory/ks25/construct.hpp"

using namespace memcert;
using namespace memcert::ks25;

TEST_CASE("ks smoke: small generated data memorized exactly", "[ks25]") {
  SequenceDataset ds = ks_generate(30, 4, 3, 10, 3, 7, false);
  KsPrepared P = ks_prepare(ds, 3, "gen");
  REQUIRE(P.consistent);
  KsOptions o;
  KsResult r = ks_construct(P, o);
  CHECK(r.memorized);
  CHECK(r.eq55_holds);
  CHECK(r.total.width <= 14);
}
