#pragma once
// A small JSON reader for the checker (the checker must not depend on any JSON library).
// Numbers are kept as their source text: the checker decides itself how to read them (integers for
// indices, exact rationals elsewhere), so no value ever passes through a double.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace memcert_checker::json {

enum class Type { Null, Bool, Number, String, Array, Object };

struct Member;  // {key, value}: defined below, so Value holds a vector of an incomplete type (C++17)

struct Value {
  Type type = Type::Null;
  bool boolean = false;
  std::string text;                                   // Number: source text; String: decoded UTF-8
  std::vector<Value> items;                           // Array
  std::vector<Member> members;                        // Object, in source order

  // The member named `key`, or nullptr (also when this is not an object). Duplicate keys are
  // rejected by the parser, so the answer is unambiguous.
  const Value* find(const std::string& key) const;
};

struct Member {
  std::string first;  // the key
  Value second;       // its value
};

// Parses `text` (exactly one JSON value, surrounding whitespace allowed). Never throws; on failure
// returns false and `error` says where and what.
bool parse(const std::string& text, Value& out, std::string& error);

// Nesting depth accepted by parse(): certificates are shallow, and the limit keeps recursion bounded.
inline constexpr int kMaxDepth = 64;

}  // namespace memcert_checker::json
