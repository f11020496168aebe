// The checker's own JSON reader: accepts RFC 8259 JSON, keeps numbers as text, rejects everything else.
#include "catch.hpp"

#include "../../src/checker/json.hpp"

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
