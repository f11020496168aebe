// Robustness: every truncation and many random byte changes of valid .npy / .npz files either still
// parse or throw InputError -- never another exception, a crash, or a huge allocation.
#include <random>

#include <nlohmann/json.hpp>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;

namespace {
// 0 when `f` succeeds, 1 when it throws InputError; any other exception fails the test.
int outcome(const std::function<void()>& f) {
  try {
    f();
    return 0;
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    return 1;
  }
}
}  // namespace

TEST_CASE("truncated .npy and .npz files are InputErrors", "[corruption]") {
  std::vector<double> xs{0.1, 2, -3, 4.5, 5, 6};
  std::string npy = fixtures::npy("<f8", {2, 3}, fixtures::raw_all(xs));
  for (std::size_t len = 0; len < npy.size(); ++len)
    REQUIRE(outcome([&] { npy_parse(npy.substr(0, len), "t.npy"); }) == 1);
  std::string zip = fixtures::zip({{"a.npy", npy}, {"b.npy", npy}}, true);
  for (std::size_t len = 0; len < zip.size(); ++len)
    REQUIRE(outcome([&] { npz_parse(zip.substr(0, len), "t.npz"); }) == 1);
}

TEST_CASE("random byte changes never escape as other exceptions", "[corruption]") {
  std::vector<std::int64_t> xs{1, 2, 3, 4, 5, 6, 7, 8};
  std::string npy = fixtures::npy("<i8", {2, 4}, fixtures::raw_all(xs));
  std::mt19937_64 rng(20261121);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = npy;
    std::size_t at = rng() % 128;  // header bytes
    bad[at] = static_cast<char>(rng() & 0xff);
    rejected += outcome([&] { npy_parse(bad, "r.npy"); });
  }
  CHECK(rejected > 0);
  for (bool deflated : {false, true}) {
    std::string zip = fixtures::zip({{"a.npy", npy}, {"b.npy", npy}}, deflated);
    rejected = 0;
    for (int trial = 0; trial < 1500; ++trial) {
      std::string bad = zip;
      for (int k = 0; k < 2; ++k) bad[rng() % bad.size()] = static_cast<char>(rng() & 0xff);
      rejected += outcome([&] { npz_parse(bad, "r.npz"); });
    }
    CHECK(rejected > 0);
  }
}

TEST_CASE("file content echoed in messages is escaped onto one line", "[corruption]") {
  std::string m = fixtures::input_error_of([] { npy_parse(fixtures::npy("<f\n", {1}, ""), "x.npy"); });
  CHECK(m.find("got '<f\\n'") != std::string::npos);
  nlohmann::json j = nlohmann::json::array({"1\n2"});
  m = fixtures::input_error_of([&] { json_to_rational(j[0], "j.json", "data[0][0]"); });
  CHECK(m == "j.json: data[0][0]: expected an exact number, got a string of 3 bytes that is not one");
  m = fixtures::input_error_of([] { matrix_read(fixtures::write_file("c.txt", std::string("1 \x01\x7f 2\n", 7))); });
  CHECK(m == "c.txt: line 1, column 2: expected an exact number, got a token of 2 bytes that is not one");
}

// A text file given where JSON is expected: nlohmann's "last read: '...'" (the file's bytes) is not
// passed on; the message names the file and the position only.
TEST_CASE("JSON parse errors do not echo the file", "[corruption]") {
  for (const std::string text : {"SECRET_API_KEY=sk-live-0123456789\n", "{\"a\": SECRET_API_KEY}", "[1, 2, SECRET]",
                                 "{\"SECRET_API_KEY\" 1}",
                                 "\"SECRET_API_KEY=sk-live-0123456789\n", "truSECRET_API_KEY"}) {
    const std::string m = fixtures::input_error_of([&] { json_parse_text(text, "s.json"); });
    INFO(m);
    CHECK(m.find("SECRET") == std::string::npos);
    CHECK(m.find("sk-live") == std::string::npos);
    CHECK(m.find("last read") == std::string::npos);
    CHECK(m.find("s.json: line ") == 0);
    CHECK(m.find("expected valid JSON (syntax error") != std::string::npos);
  }
  // The kind of token expected is kept.
  const std::string m = fixtures::input_error_of([] { json_parse_text("{\"a\" 1}", "k.json"); });
  CHECK(m.find("; expected ':'") != std::string::npos);
}
