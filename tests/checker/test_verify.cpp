// The public entry point: dispatch, unknown kinds, and robustness (truncated, mutated and hostile
// input is rejected with a reason and never crashes or throws).
#include "catch.hpp"

#include <cstdio>
#include <fstream>
#include <random>
#include <utility>

#include "cert_text.hpp"
#include "support/cpu_time.hpp"
#include "kernel/json.hpp"

using namespace cert_text;

namespace {
const std::string kValid =
    R"({"kind":"rank","claim":"rank","matrix":{"rows":3,"cols":3,"data":[["1","2","3"],["2","4","6"],["1","0","1"]]},)"
    R"("rank_lower":2,"rank_upper":2,"lower":{"method":"minor-mod-p","prime":"7","rows":[0,2],"cols":[0,1]},)"
    R"("upper":{"method":"kernel","kernel":[["-1","-1","1"]],"free_rows":[2]}})";
const std::string kKruskal =
    R"({"kind":"kruskal","claim":"kruskal-rank","vectors":{"rows":4,"cols":3,"data":[["1","0","0"],["0","1","0"],)"
    R"(["0","0","1"],["1","1","0"]]},"kruskal_lower":2,"lower":{"method":"exhaustive-mod-p","prime":"101"},)"
    R"("kruskal_upper":2,"upper":{"method":"dependent-subset","subset":[0,1,3],"coefficients":["1","1","-1"]}})";
const std::string kEnclosure =
    R"({"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":{"rows":2,"cols":3,"data":[["2","0","0"],)"
    R"(["0","3","0"]]},"radius":{"rows":2,"cols":3,"data":[["0.7","0.7","0.7"],["0.7","0.7","0.7"]]},)"
    R"("rows":[0,1],"mu":"3","rank_lower":2})";
}

TEST_CASE("verify: dispatch and envelope errors", "[checker][verify]") {
  REQUIRE(check(kValid).valid);
  auto v = check(R"({"kind":"frobnicate","claim":"x"})");
  CHECK_FALSE(v.valid);
  CHECK(v.kind == "frobnicate");
  CHECK(v.reason.find("unknown certificate kind") != std::string::npos);
  CHECK(check(R"({"claim":"rank"})").reason.find("kind") != std::string::npos);
  CHECK(check(R"({"kind":"rank"})").reason.find("claim") != std::string::npos);
  CHECK(check(R"({"kind":7,"claim":"rank"})").reason.find("kind") != std::string::npos);
  CHECK_FALSE(check("[1,2,3]").valid);
  CHECK_FALSE(check("").valid);
  CHECK_FALSE(check("not json").valid);
  CHECK_FALSE(check(std::string("{\"kind\":\"rank\"\0}", 16)).valid);
}

TEST_CASE("verify: the papers' kind names mahdavi24 and ks25 are theorem1 and ks; near misses stay unknown",
          "[checker][verify]") {
  CHECK(memcert_checker::kind_name("mahdavi24") == "theorem1");
  CHECK(memcert_checker::kind_name("ks25") == "ks");
  for (const char* same : {"theorem1", "ks", "dana24", "rank", "mahdavi", "ks2", ""}) CHECK(memcert_checker::kind_name(same) == same);
  // The alias reaches the kind's own check (which rejects this empty body for its own reason), the
  // verdict naming the kind as written.
  for (const auto& [alias, name] : {std::pair{"mahdavi24", "theorem1"}, {"ks25", "ks"}}) {
    const auto a = check(std::string(R"({"kind":")") + alias + R"(","claim":"x"})");
    const auto n = check(std::string(R"({"kind":")") + name + R"(","claim":"x"})");
    CHECK_FALSE(a.valid);
    CHECK(a.kind == alias);
    CHECK(a.reason == n.reason);
    CHECK(a.reason.find("unknown certificate kind") == std::string::npos);
  }
  for (const char* unknown : {"mahdavi", "ks2", "Mahdavi24", "KS25", "mahdavi24 ", "theorem-1", "ks25/theorem-4.1"}) {
    const auto v = check(std::string(R"({"kind":")") + unknown + R"(","claim":"mahdavi24/theorem-1"})");
    CHECK_FALSE(v.valid);
    CHECK(v.kind == unknown);
    CHECK(v.reason == std::string("kind: unknown certificate kind \"") + unknown + "\"");
  }
}

TEST_CASE("verify: every top-level field the check did not read is listed as not checked", "[checker][verify]") {
  auto unread = [](const memcert_checker::Verdict& v) {
    std::vector<std::string> out;
    for (const std::string& f : v.not_checked)
      if (f.find("(not read by the checker)") != std::string::npos) out.push_back(f.substr(0, f.find(' ')));
    return out;
  };
  // Every field of these certificates is read: nothing listed.
  for (const std::string& valid : {kValid, kKruskal, kEnclosure}) {
    const auto v = check(valid);
    REQUIRE(v.valid);
    CHECK(unread(v).empty());
  }
  // Fields the rank check never looks at, wherever they stand, are named; the ones it reads are not.
  std::string extra = kValid;
  extra.insert(1, R"("note":"made by hand","seconds":0.5,)");
  const auto v = check(extra);
  REQUIRE(v.valid);
  CHECK(unread(v) == std::vector<std::string>{"note", "seconds"});
  // A rejected certificate lists nothing as unread (the reason is what matters).
  std::string bad = extra;
  bad.replace(bad.find("\"rank_lower\":2"), 14, "\"rank_lower\":3");
  const auto r = check(bad);
  REQUIRE_FALSE(r.valid);
  CHECK(unread(r).empty());
}

TEST_CASE("verify: fields the check did not read are listed at every depth, by their path", "[checker][verify]") {
  auto unread = [](const memcert_checker::Verdict& v) {
    std::vector<std::string> out;
    for (const std::string& f : v.not_checked)
      if (f.find(" (not read by the checker)") != std::string::npos) out.push_back(f.substr(0, f.find(" (")));
    return out;
  };
  // Unknown keys inside the matrix and inside both witnesses: named with their path; verdict unchanged.
  std::string nested = kValid;
  nested.insert(nested.find("\"rows\":3"), R"("source":"by hand",)");
  nested.insert(nested.find("\"method\":\"minor-mod-p\""), R"("note":{"x":1},)");
  nested.insert(nested.find("\"method\":\"kernel\""), R"("seed":7,)");
  const auto v = check(nested);
  REQUIRE(v.valid);
  CHECK(v.applied == check(kValid).applied);
  CHECK(unread(v) == std::vector<std::string>{"matrix.source", "lower.note", "upper.seed"});
}

TEST_CASE("json: FieldTracker reports unread members by path, [*] only when unread at every index", "[checker][json]") {
  namespace json = memcert_checker::json;
  json::Value root;
  std::string error;
  REQUIRE(json::parse(R"({"a":[{"x":1,"y":2},{"x":3,"y":4},{"x":5,"y":6}],"b":{"c":[["1","2"]],"d":{"e":1,"f":2}},)"
                      R"("g":[[{"h":1}],[{"h":2}]],"z":0})",
                      root, error));
  json::FieldTracker tracker(root);
  const json::Value* a = root.find("a");
  for (std::size_t i = 0; i < a->size(); ++i) a->at(i)->find("x");
  a->at(2)->find("y");                                     // y unread at indices 0 and 1 (of 3 items)
  root.find("b")->find("d")->find("e");                      // b.c, b.d.f unread
  root.find("g");                                            // g[*][*].h unread at every index
  CHECK(tracker.unread() == std::vector<std::string>{"a[0].y", "a[1].y", "b.c", "b.d.f", "g[*][*].h", "z"});
  a->at(0)->find("y");
  a->at(1)->find("y");
  CHECK(tracker.unread() == std::vector<std::string>{"b.c", "b.d.f", "g[*][*].h", "z"});
  // A new tracker starts from nothing read; a long key is cut at a UTF-8 boundary.
  json::Value wide;
  const std::string key = std::string(79, 'k') + "\xc3\xa9" + std::string(10, 'k');
  REQUIRE(json::parse("{\"o\":{\"" + key + "\":1}}", wide, error));
  json::FieldTracker again(wide);
  wide.find("o");
  CHECK(again.unread() == std::vector<std::string>{"o." + std::string(79, 'k') + "..."});
}

TEST_CASE("verify: every truncation and many random mutations are handled", "[checker][verify]") {
  REQUIRE(check(kKruskal).valid);
  REQUIRE(check(kEnclosure).valid);
  for (const std::string& valid : {kValid, kKruskal, kEnclosure}) {
    for (std::size_t len = 0; len < valid.size(); ++len) {
      auto v = check(valid.substr(0, len));
      REQUIRE_FALSE(v.valid);  // a prefix of an object is never valid JSON
      REQUIRE_FALSE(v.reason.empty());
    }
    std::mt19937_64 rng(99);
    const std::string alphabet = "0123456789-+./eE\"[]{},:aznul \\";
    int still_valid = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      std::string s = valid;
      int edits = 1 + rng() % 3;
      for (int e = 0; e < edits; ++e) {
        std::size_t pos = rng() % s.size();
        switch (rng() % 3) {
          case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
          case 1: s.erase(pos, 1); break;
          default: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
      auto v = check(s);  // must return, never throw or crash
      if (v.valid) ++still_valid;
      else REQUIRE_FALSE(v.reason.empty());
    }
    // A few mutations are harmless (whitespace, "-1/1" for "-1", ...), most are not.
    CHECK(still_valid < 300);
  }
}

TEST_CASE("verify: hostile sizes are rejected quickly", "[checker][verify]") {
  const double t0 = memcert_test::cpu_seconds();  // CPU time: the guard must not fail on a loaded machine
  CHECK_FALSE(check(R"({"kind":"rank","claim":"rank","matrix":{"rows":0,"cols":4294967296,"data":[]},"rank_lower":0,"rank_upper":0,"lower":{"method":"trivial"},"upper":{"method":"kernel","kernel":[],"free_rows":[]}})").valid);
  CHECK_FALSE(check(R"({"kind":"rank","claim":"rank","matrix":{"rows":100000000000,"cols":1,"data":[]}})").valid);
  CHECK_FALSE(check(R"({"kind":"rank","claim":"rank","matrix":{"rows":1,"cols":1,"data":[["1e999999999"]]}})").valid);
  CHECK_FALSE(check(std::string(200000, '[')).valid);
  // Kruskal enumeration beyond the budget is refused up front, not attempted.
  std::string rows = "[";
  for (int i = 0; i < 60; ++i) {
    if (i) rows += ',';
    rows += "[";
    for (int j = 0; j < 30; ++j) rows += std::string(j ? "," : "") + "\"" + std::to_string((i * 31 + j * 17) % 11) + "\"";
    rows += "]";
  }
  rows += "]";
  auto v = check(R"({"kind":"kruskal","claim":"kruskal-rank","vectors":{"rows":60,"cols":30,"data":)" + rows +
                 R"(},"kruskal_lower":30,"lower":{"method":"exhaustive-mod-p","prime":"7"},"kruskal_upper":30,"upper":{"method":"trivial"}})");
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("budget") != std::string::npos);
  CHECK(memcert_test::cpu_seconds() - t0 < 5.0);  // a hang guard, not a benchmark
}

TEST_CASE("verify: files", "[checker][verify]") {
  std::string path = "test_checker_verify_tmp.json";
  {
    std::ofstream out(path);
    out << kValid;
  }
  CHECK(memcert_checker::verify_certificate_file(path).valid);
  std::remove(path.c_str());
  auto v = memcert_checker::verify_certificate_file(path);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find(path) == 0);
}
