// The checker's own JSON reader: accepts RFC 8259 JSON, keeps numbers as text, rejects everything else.
#include "catch.hpp"

#include <gmpxx.h>

#include <functional>
#include <random>
#include <string_view>
#include <vector>

#include "../../src/checker/kernel/json.hpp"

using namespace memcert_checker::json;

TEST_CASE("json: values, escapes, numbers kept as text", "[checker][json]") {
  Value v;
  std::string err;
  REQUIRE(parse(R"( {"a": [1, -2.50e+3, "x\"\\\/\n\u00e9\ud83d\ude00"], "b": true, "c": false, "d": null, "e": {}} )", v, err));
  REQUIRE(v.type == Type::Object);
  const Value* a = v.find("a");
  REQUIRE(a);
  REQUIRE(a->size() == 3);
  CHECK(a->at(0)->text == "1");
  CHECK(a->at(1)->text == "-2.50e+3");  // not converted to a double
  CHECK(a->at(2)->text == "x\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
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
      for (std::size_t k = 0; k < v.size(); ++k) s += json_capture_dump(*v.at(k)) + ",";
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
      CHECK(d->empty());
      const Value& pd = *plain.find("matrix")->find("data");
      REQUIRE(pd.size() == cap.rows);
      for (std::size_t i = 0; i < cap.rows; ++i) {
        REQUIRE(pd.at(i)->size() == cap.cols);
        for (std::size_t j = 0; j < cap.cols; ++j) {
          const std::size_t e = i * cap.cols + j;
          mpq_class want(pd.at(i)->at(j)->text);
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

namespace {
// The value as read through the accessors (size, at, leaf), so a packed array and a tree read alike.
std::string accessor_dump(const Value& v) {
  switch (v.type) {
    case Type::Null: return "null";
    case Type::Bool: return v.boolean ? "true" : "false";
    case Type::Number: return "#" + v.text;
    case Type::String: return "\"" + v.text + "\"";
    case Type::Array: {
      std::string s = "[";
      for (std::size_t k = 0; k < v.size(); ++k) {
        const Item e = v.at(k);
        Type t = Type::Null;
        std::string_view text;
        const bool leaf = v.leaf(k, t, text);
        // leaf() says what at() says, without making the element
        CHECK(leaf == (e->type == Type::Number || e->type == Type::String));
        if (leaf) CHECK((t == e->type && text == e->text));
        s += accessor_dump(*e) + ",";
      }
      CHECK(v.at(v.size())->type == Type::Null);  // past the end: null, never a read out of bounds
      return s + "]";
    }
    default: {
      std::string s = "{";
      for (const auto& m : v.members) s += m.first + ":" + accessor_dump(m.second) + ",";
      return s + "}";
    }
  }
}

// Whether every array of numbers or strings below v (all leaves of one type at one depth) is packed.
bool numeric_arrays_packed(const Value& v) {
  if (v.type == Type::Object) {
    for (const auto& m : v.members)
      if (!numeric_arrays_packed(m.second)) return false;
    return true;
  }
  if (v.type != Type::Array || v.packed()) return true;
  // A tree array: it must hold an object, a boolean or null, or mix leaf types or depths.
  bool mixed = false;
  int depth = -1;
  Type leaf = Type::Null;
  std::function<bool(const Value&, int)> walk = [&](const Value& a, int d) {
    for (std::size_t k = 0; k < a.size(); ++k) {
      const Item e = a.at(k);
      if (e->type == Type::Array) {
        if (e->size() == 0) {
          if (depth != -1 && depth != d + 1) return false;
          depth = d + 1;
        } else if (!walk(*e, d + 1)) {
          return false;
        }
      } else if (e->type == Type::Number || e->type == Type::String) {
        if ((depth != -1 && depth != d) || (leaf != Type::Null && leaf != e->type)) return false;
        depth = d, leaf = e->type;
      } else {
        return false;
      }
    }
    if (a.size() == 0 && depth != -1 && depth != d) return false;
    return true;
  };
  mixed = !walk(v, 0);
  if (!mixed) return false;
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!numeric_arrays_packed(*v.at(k))) return false;
  return true;
}

// Random JSON text: nested arrays of numbers (signs, fractions, exponents, hundreds of digits) and strings
// (exact numbers, escapes, UTF-8), regular and ragged, empty, mixed, with objects, booleans and null.
struct Gen {
  std::mt19937_64 rng;
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  std::string ws() {
    static const char* w[] = {"", "", "", " ", "\n", " \t\r\n "};
    return w[pick(6)];
  }
  std::string number() {
    std::string s = pick(2) ? "-" : "";
    const std::size_t digits = pick(10) == 0 ? 1 + pick(400) : 1 + pick(6);
    if (pick(4) == 0) s += "0";
    else {
      s += char('1' + pick(9));
      for (std::size_t i = 1; i < digits; ++i) s += char('0' + pick(10));
    }
    if (pick(3) == 0) {
      s += ".";
      for (std::size_t i = 0, n = 1 + pick(8); i < n; ++i) s += char('0' + pick(10));
    }
    if (pick(3) == 0) {
      s += pick(2) ? "e" : "E";
      static const char* sign[] = {"", "+", "-"};
      s += sign[pick(3)];
      for (std::size_t i = 0, n = 1 + pick(4); i < n; ++i) s += char('0' + pick(10));
    }
    return s;
  }
  std::string string() {
    static const char* s[] = {"\"-7/12\"", "\"0\"", "\"1e-3\"", "\"4503599627370497/4503599627370496\"", "\"x\\u00e9\\n\"",
                              "\"\xc3\xa9\"", "\"\"", "\"a\\\"b\"", "\"\\ud83d\\ude00\""};
    return s[pick(9)];
  }
  std::string leaf(int kind) { return kind == 0 ? number() : string(); }
  // A matrix-like nest: `dims` levels, every leaf of one kind (ragged when asked).
  std::string nest(int dims, int kind, bool ragged) {
    if (dims == 0) return leaf(kind);
    std::string s = "[";
    s += ws();
    const std::size_t n = pick(5) == 0 ? 0 : 1 + pick(ragged ? 5 : 3);
    for (std::size_t i = 0; i < n; ++i) {
      if (i) s += ',', s += ws();
      s += nest(dims - 1, kind, ragged);
      s += ws();
    }
    s += ']';
    return s;
  }
  std::string any(int depth) {
    switch (depth > 6 ? pick(3) : pick(9)) {
      case 0: return number();
      case 1: return string();
      case 2: {
        static const char* lit[] = {"true", "false", "null"};
        return lit[pick(3)];
      }
      case 3: case 4: case 5: return nest(1 + static_cast<int>(pick(3)), static_cast<int>(pick(2)), pick(3) == 0);
      case 6: {  // mixed
        std::string s = "[";
        for (std::size_t i = 0, n = pick(5); i < n; ++i) {
          if (i) s += ',';
          s += any(depth + 1);
        }
        s += ']';
        return s;
      }
      default: {
        std::string s = "{";
        s += ws();
        for (std::size_t i = 0, n = pick(4); i < n; ++i) {
          if (i) s += ',';
          s += "\"k" + std::to_string(i) + "\"";
          s += ws();
          s += ':';
          s += ws();
          s += any(depth + 1);
        }
        s += '}';
        return s;
      }
    }
  }
};
}  // namespace

// A packed array reads exactly as the tree of the same text; every array of numbers or strings of one
// depth is packed; malformed and over-budget text fails at the same byte with the same message.
TEST_CASE("json: packed arrays read as the tree does (random nested arrays)", "[checker][json]") {
  Gen g{std::mt19937_64(20261128)};
  for (int round = 0; round < 3000; ++round) {
    const std::string text = g.any(0);
    INFO(text);
    Value packed, tree;
    std::string e1, e2;
    bool over1 = false, over2 = false;
    REQUIRE(parse_within(text, packed, e1, nullptr, 1e300, over1, true));
    REQUIRE(parse_within(text, tree, e2, nullptr, 1e300, over2, false));
    CHECK(accessor_dump(packed) == accessor_dump(tree));
    CHECK(accessor_dump(packed) == json_capture_dump(tree));
    CHECK(numeric_arrays_packed(packed));
    if (packed.type == Type::Object) {  // the same fields unread, walked the same way
      FieldTracker a(packed), b(tree);
      CHECK(a.unread() == b.unread());
    }
    // Cut short, a byte changed, or a budget too small: the same answer at the same place.
    std::string bad = text.substr(0, g.pick(text.size() + 1));
    if (g.pick(2) && !text.empty()) {
      bad = text;
      static const char junk[] = {'x', ']', '[', ',', '-', '.', 'e', '"', '\\', '\x01', '\xff', '}', '0', ' '};
      bad[g.pick(bad.size())] = junk[g.pick(sizeof junk)];
    }
    const double budget = g.pick(2) ? 1e300 : double(g.pick(8000));
    Value v1, v2;
    e1.clear(), e2.clear();
    const bool ok1 = parse_within(bad, v1, e1, nullptr, budget, over1, true);
    const bool ok2 = parse_within(bad, v2, e2, nullptr, budget, over2, false);
    INFO(bad);
    CHECK(ok1 == ok2);
    CHECK(e1 == e2);
    CHECK(over1 == over2);
    if (ok1 && ok2) CHECK(accessor_dump(v1) == accessor_dump(v2));
  }
}

TEST_CASE("json: numeric arrays are packed, other arrays are trees", "[checker][json]") {
  const auto read = [](const std::string& text) {
    Value v;
    std::string err;
    REQUIRE(parse(text, v, err));
    return v;
  };
  const Value m = read(R"([["1","-2/3"],["4e5","5"],[]])");  // ragged, with an empty row
  CHECK(m.packed());
  REQUIRE(m.size() == 3);
  CHECK(m.at(0)->packed());
  CHECK(m.at(1)->at(0)->text == "4e5");
  CHECK(m.at(2)->size() == 0);
  CHECK(read("[[[1,2],[3]],[[4]]]").packed());      // a tensor
  CHECK(read("[]").packed());
  CHECK(read("[[],[]]").packed());
  CHECK_FALSE(read(R"([1,"2"])").packed());          // a number beside a string
  CHECK_FALSE(read("[1,[2]]").packed());             // leaves at two depths
  CHECK_FALSE(read("[1,true]").packed());
  const Value mixed = read(R"([[1,2],[[3]],{"a":[4,5]}])");
  CHECK_FALSE(mixed.packed());
  CHECK(mixed.holds_objects);
  CHECK(mixed.at(0)->packed());  // the packed elements before the object come out whole
  CHECK(mixed.at(1)->packed());
  CHECK(mixed.at(1)->at(0)->at(0)->text == "3");
  CHECK(mixed.at(2)->find("a")->packed());
  // A string leaf is kept decoded.
  CHECK(read(R"(["a\u00e9\n"])").at(0)->text == "a\xc3\xa9\n");
}

// Hostile text inside a packed array: rejected at the first bad byte, with the tree parser's message.
TEST_CASE("json: hostile packed arrays", "[checker][json]") {
  const auto fails_at = [](const std::string& text, const std::string& error) {
    INFO(text);
    Value v;
    std::string e1, e2;
    bool over = false;
    CHECK_FALSE(parse(text, v, e1));
    CHECK(e1 == error);
    CHECK_FALSE(parse_within(text, v, e2, nullptr, 1e300, over, false));
    CHECK(e1 == e2);
  };
  fails_at("[[1,2],[3,-", "json: offset 11: expected a digit");           // a number cut short
  fails_at("[[1,2],[3,4.", "json: offset 12: expected a digit after '.'");
  fails_at("[[1,2],[3,4e+", "json: offset 13: expected a digit in the exponent");
  fails_at("[[1,2],[3,4", "json: offset 11: expected ',' or ']'");
  fails_at("[[1,2],[3 4]]", "json: offset 10: expected ',' or ']'");
  fails_at("[[1,2],[3,]]", "json: offset 10: expected a digit");
  fails_at("[[1,2],[-0x1]]", "json: offset 10: expected ',' or ']'");
  fails_at(R"([["1","2"],["3",)", "json: offset 16: unexpected end of input");
  fails_at(R"([["1","2"],["3\x"]])", "json: offset 16: bad escape");
  fails_at(R"([["1","2"],["3", 4], {"a":1,"a":2}])", "json: offset 31: duplicate key \"a\"");
  // Depth: a packed array may nest as deep as the limit (the leaf one deeper than the innermost array), no deeper.
  std::string ok = std::string(kMaxDepth - 1, '[') + "7" + std::string(kMaxDepth - 1, ']');
  Value v;
  std::string err;
  REQUIRE(parse(ok, v, err));
  CHECK(v.packed());
  const Value* x = &v;
  std::vector<Item> path;
  for (int d = 0; d < kMaxDepth - 1; ++d) {
    path.push_back(x->at(0));
    x = &*path.back();
  }
  CHECK(x->text == "7");
  fails_at(std::string(kMaxDepth, '[') + "7" + std::string(kMaxDepth, ']'), "json: offset 64: nesting deeper than 64");
  fails_at(std::string(1000000, '['), "json: offset 64: nesting deeper than 64");
  // A budget: refused at the same value as the tree, packed or not.
  std::string big = "[";
  for (int i = 0; i < 10000; ++i) big += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  big += "]";
  Value a, b;
  std::string ea, eb;
  bool oa = false, ob = false;
  CHECK_FALSE(parse_within(big, a, ea, nullptr, 1e6, oa, true));
  CHECK_FALSE(parse_within(big, b, eb, nullptr, 1e6, ob, false));
  CHECK(oa);
  CHECK(ea == eb);
}
