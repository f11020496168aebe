// The public C++ API's options as enums (util/choice.hpp) and the theory layer's quantities that the CLI
// reports (mahdavi24/quantities.hpp, dana24's capacity and hypercube bits), checked against the paper's
// formulas and the names the CLI and the JSON outputs use.
#include "catch.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "memcert/memcert.hpp"

using namespace memcert;

TEST_CASE("options: enums and their names are interchangeable", "[api][options]") {
  mahdavi24::Theorem1Options o;
  CHECK(o.scale == mahdavi24::Theorem1Scale::proof);
  CHECK(o.scale == "proof");
  o.scale = mahdavi24::Theorem1Scale::weyl;
  CHECK(o.scale == "weyl");
  CHECK(o.scale.str() == "weyl");
  o.scale = "network";  // the CLI's word
  CHECK(o.scale == mahdavi24::Theorem1Scale::network);
  CHECK(o.scale != "proof");
  CHECK(o.scale != mahdavi24::Theorem1Scale::value);
  o.scale = std::string("value");
  CHECK(o.scale.value() == mahdavi24::Theorem1Scale::value);
  switch (o.scale) {
    case mahdavi24::Theorem1Scale::value: break;
    default: FAIL("switch on the option");
  }
  CHECK_THROWS_AS(o.scale = "Weyl", std::invalid_argument);
  CHECK(o.scale == "value");  // unchanged by the refused word
  try {
    o.scale = "c_weyl";
    FAIL("an unknown name was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "expected proof, weyl, network or value, got \"c_weyl\"");
  }

  mahdavi24::HeadTrace tr;
  CHECK(tr.eps_criterion == "none");
  tr.eps_criterion = mahdavi24::EpsCriterion::b2;
  CHECK(tr.eps_criterion.str() == "b2");

  dana24::Dana24Options d;
  CHECK(d.targets == dana24::Dana24Targets::automatic);
  CHECK(d.targets.str() == "auto");
  d.targets = "moment";
  CHECK(d.targets == dana24::Dana24Targets::moment);
  CHECK_THROWS_AS(d.targets = "cube", std::invalid_argument);

  // The generator's kind: the enum and the CLI's word draw the same data; another word is refused.
  const AttentionDataset by_enum = mahdavi24::generate_attention_dataset(mahdavi24::AttentionDataKind::shared, 4, 2, 3,
                                                                         std::nullopt, 7);
  const AttentionDataset by_name = mahdavi24::generate_attention_dataset("shared", 4, 2, 3, std::nullopt, 7);
  CHECK(by_enum.contexts == by_name.contexts);
  CHECK(by_enum.queries == by_name.queries);
  CHECK(by_enum.contexts[0] == by_enum.contexts[3]);  // one shared context
  CHECK_THROWS_AS(mahdavi24::generate_attention_dataset("mahdavi", 4, 2, 3, std::nullopt, 7), std::invalid_argument);
}

TEST_CASE("theory quantities: T*, r, H d and dana24's capacity as the papers define them", "[api][theory]") {
  using namespace mahdavi24;
  static_assert(t_star(std::size_t{4}, std::size_t{5}) == 17);  // H (r - 1) + 1
  CHECK(theorem1_r(std::size_t{5}, std::size_t{3}) == 3);
  CHECK(t_star(std::size_t{100}, std::size_t{4}, std::size_t{5}, std::size_t{3}) == 9);  // min(T, H (min(n, dh) - 1) + 1)
  CHECK(t_star(std::size_t{6}, std::size_t{4}, std::size_t{5}, std::size_t{5}) == 6);
  CHECK(t_star(std::int64_t{3}, std::int64_t{0}) == -2);  // in the caller's type, as the sweep's formulas compute it
  CHECK(rank_z_bound(std::int64_t{4}, std::int64_t{8}) == 32);
  for (std::size_t H = 1; H <= 6; ++H)
    for (std::size_t r = 1; r <= 6; ++r) CHECK(t_star(H, r) == H * r - H + 1);
  static_assert(dana24::hypercube_bits(1) == 1 && dana24::hypercube_bits(2) == 1 && dana24::hypercube_bits(3) == 2);
  CHECK(dana24::hypercube_bits(1024) == 10);
  CHECK(dana24::hypercube_bits(1025) == 11);
  CHECK(dana24::capacity(3, 2, 4) == 10);
}
