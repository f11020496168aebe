// The checker's own JSON reader: accepts RFC 8259 JSON, keeps numbers as text, rejects everything else.
#include "catch.hpp"

#include <gmpxx.h>

#include "../../src/checker/kernel/json.hpp"

using namespace memcert_checker::json;

TEST_CASE("json: values, escapes, numbers kept as text", "[checker][json]") {
  Value v;
  std::string err;
  REQUIRE(parse(R"( {"a": [1, -2.50e+3, "x\"\\\/\n\u00e9\ud83d\ude00"], "b": true, "c": false, "d": null, "e": {}} )", v, err));
  REQUIRE(v.type == Type::Object);
  const Value* a = v.find("a");
  REQUIRE(a);
  REQUIRE(a->items.size() == 3);
  CHECK(a->items[0].text == "1");
  CHECK(a->items[1].text == "-2.50e+3");  // not converted to a double
  CHECK(a->items[2].text == "x\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(v.find("b")->boolean);
  CHECK(!v.find("c")->boolean);
  CHECK(v.find("d")->type == Type::Null);
  CHECK(v.find("e")->type == Type::Object);
  CHECK(v.find("zz") == nullptr);
}

TEST_CASE("json: malformed input is rejected with a message, never a throw", "[checker][json]") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", ".5", "-", "1e", "tru",
                          "\"abc", "\"\\x\"", "\"\\ud800\"", "\"a\nb\"", "[1] 2", "{\"a\":1,\"a\":2}", "NaN",
                          "Infinity", "{1:2}", "\"\\u12g4\"",
                          // not UTF-8: a lone byte, a stray continuation, an overlong '/', a surrogate, > U+10FFFF
                          "\"\xff\"", "\"\x80\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
                          "\"\xe2\x82\""}) {
    Value v;
    std::string err;
    INFO(bad);
    CHECK_FALSE(parse(bad, v, err));
    CHECK_FALSE(err.empty());
  }
}

TEST_CASE("json: well-formed UTF-8 is kept byte for byte", "[checker][json]") {
  Value v;
  std::string err;
  REQUIRE(parse("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", v, err));  // e-acute, euro sign, an emoji
  CHECK(v.text == "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST_CASE("json: depth limit", "[checker][json]") {
  Value v;
  std::string err;
  std::string ok(kMaxDepth, '['), deep(kMaxDepth + 1, '[');
  ok += std::string(kMaxDepth, ']');
  deep += std::string(kMaxDepth + 1, ']');
  CHECK(parse(ok, v, err));
  CHECK_FALSE(parse(deep, v, err));
  std::string huge(1000000, '[');  // must not overflow the stack
  CHECK_FALSE(parse(huge, v, err));
}

namespace {
// The tree of `text` parsed without capturing, with root.matrix.data taken from `cap` when it was captured
// (entries back as the strings they were): must equal the plain parse for every input.
std::string json_capture_dump(const Value& v) {
  switch (v.type) {
    case Type::Null: return "null";
    case Type::Bool: return v.boolean ? "true" : "false";
    case Type::Number: return "#" + v.text;
    case Type::String: return "\"" + v.text + "\"";
    case Type::Array: {
      std::string s = "[";
      for (const auto& x : v.items) s += json_capture_dump(x) + ",";
      return s + "]";
    }
    default: {
      std::string s = "{";
      for (const auto& m : v.members) s += m.first + ":" + json_capture_dump(m.second) + ",";
      return s + "}";
    }
  }
}
}  // namespace

// parse's capture of root.matrix.data: taken exactly when the data is a rectangular list of lists of plain
// integer strings, with the values the tree holds; anything else (numbers, escapes, leading zeros, 19
// digits, '+', ragged or empty rows, another path) stays in the tree, identical to a parse without capture.
TEST_CASE("json: integer matrices captured at matrix.data equal the tree", "[checker][json]") {
  struct Case {
    const char* text;
    bool captured;
  } cases[] = {
      {R"({"kind":"rank","matrix":{"rows":2,"cols":3,"data":[["1","-20","0"],["-0","999999999999999999","-7"]]}})", true},
      {R"({"matrix":{"data":[ [ "5" ] ,["6"] ] }})", true},
      {R"({"matrix":{"data":[[1,2],[3,4]]}})", false},                  // numbers, not strings
      {R"({"matrix":{"data":[["1","2"],["3"]]}})", false},              // ragged
      {R"({"matrix":{"data":[["1","\u0032"]]}})", false},               // an escape
      {R"({"matrix":{"data":[["01"]]}})", false},                       // leading zero
      {R"({"matrix":{"data":[["1000000000000000000"]]}})", false},      // 19 digits
      {R"({"matrix":{"data":[["+1"]]}})", false},                       // plus sign
      {R"({"matrix":{"data":[["1/2","-3","-5/1024"],["0","7/18014398509481984","1"]]}})", true},  // dyadic
      {R"({"matrix":{"data":[["2/4"]]}})", false},                      // not in lowest terms
      {R"({"matrix":{"data":[["1/3"]]}})", false},                      // not a power of two
      {R"({"matrix":{"data":[["1/1"]]}})", false},                      // 2^0 written out
      {R"({"matrix":{"data":[["0/2"]]}})", false},                      // zero over 2
      {R"({"matrix":{"data":[["1/02"]]}})", false},                     // a leading zero
      {R"({"matrix":{"data":[[]]}})", false},                           // an empty row
      {R"({"matrix":{"data":[]}})", false},                             // no rows
      {R"({"matrix":{"data":[["1"],"x"]}})", false},                    // a row that is not a list
      {R"({"m":{"matrix":{"data":[["1"]]}}})", false},                  // not at the root
      {R"({"matrix":[{"data":[["1"]]}]})", false},                      // matrix not an object
      {R"({"matrix":{"x":{"data":[["1"]]}}})", false},                  // data one level deeper
  };
  for (const auto& c : cases) {
    INFO(c.text);
    Value plain, cap_tree;
    std::string e1, e2;
    REQUIRE(parse(c.text, plain, e1));
    IntMatrix cap;
    REQUIRE(parse(c.text, cap_tree, e2, &cap));
    CHECK(cap.present == c.captured);
    if (cap.present) {
      Value* d = nullptr;
      for (auto& m : cap_tree.members)
        if (m.first == "matrix")
          for (auto& mm : m.second.members)
            if (mm.first == "data") d = &mm.second;
      REQUIRE(d != nullptr);
      CHECK(d->items.empty());
      const Value& pd = *plain.find("matrix")->find("data");
      REQUIRE(pd.items.size() == cap.rows);
      for (std::size_t i = 0; i < cap.rows; ++i) {
        REQUIRE(pd.items[i].items.size() == cap.cols);
        for (std::size_t j = 0; j < cap.cols; ++j) {
          const std::size_t e = i * cap.cols + j;
          mpq_class want(pd.items[i].items[j].text);
          mpq_class got(cap.v[e]);
          if (!cap.k.empty()) mpq_div_2exp(got.get_mpq_t(), got.get_mpq_t(), static_cast<unsigned long>(cap.k[e]));
          CHECK(want == got);
        }
      }
    } else {
      CHECK(json_capture_dump(plain) == json_capture_dump(cap_tree));
    }
  }
  // Malformed input fails the same way with or without capture, and leaves nothing captured.
  for (const char* bad : {R"({"matrix":{"data":[["1","2"]]})", R"({"matrix":{"data":[["1"]],"data":[["2"]]}})",
                          R"({"matrix":{"data":[["1"]]}} x)", R"({"matrix":{"data":[["1",]]}})"}) {
    INFO(bad);
    Value v;
    std::string e1, e2;
    IntMatrix cap;
    CHECK_FALSE(parse(bad, v, e1));
    CHECK_FALSE(parse(bad, v, e2, &cap));
    CHECK_FALSE(cap.present);
  }
}
