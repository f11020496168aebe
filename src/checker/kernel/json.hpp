#pragma once
// A small JSON reader for the checker (the checker must not depend on any JSON library).
// Numbers are kept as their source text: the checker decides itself how to read them (integers for
// indices, exact rationals elsewhere), so no value ever passes through a double.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memcert_checker::json {

enum class Type { Null, Bool, Number, String, Array, Object };

struct Member;  // {key, value}: defined below, so Value holds a vector of an incomplete type (C++17)

struct Value {
  Type type = Type::Null;
  bool boolean = false;
  bool holds_objects = false;  // set by parse(): an object, or an array with an object at some depth
  std::string text;                                   // Number: source text; String: decoded UTF-8
  std::vector<Value> items;                           // Array
  std::vector<Member> members;                        // Object, in source order

  // The member named `key`, or nullptr (also when this is not an object). Duplicate keys are
  // rejected by the parser, so the answer is unambiguous. Marks the member as read (FieldTracker).
  const Value* find(const std::string& key) const;
};

struct Member {
  std::string first;          // the key
  Value second;               // its value
  mutable bool read = false;  // a find() returned this member (set atomically: checks read on several threads)
};

// The fields of a certificate a check read, at every depth: every find() that returns a member marks it
// (on whichever thread it runs), so what the check never looked at can be listed as not checked
// (verify.cpp). The tracker clears the marks of `root`'s tree when made; unread() walks the tree after
// the check. A member that was read is walked into (an object's members, an array's elements); one that
// was not is reported whole, its own members unwalked. Arrays without objects (the numeric matrices) are
// never walked: holds_objects says which arrays can hide a key.
class FieldTracker {
 public:
  explicit FieldTracker(const Value& root);
  FieldTracker(const FieldTracker&) = delete;
  FieldTracker& operator=(const FieldTracker&) = delete;
  // The path of every member of the tree no find() returned, in document order: `key` at the top level,
  // `outer.key` inside an object, `list[i].key` inside an array's element i. A path unread at every
  // index where it occurs (two or more) is given once with the indices written [*] (`trace[*].eps_direct`);
  // a key longer than kMaxReportedKey bytes is cut there (at a UTF-8 boundary) and ends in "...".
  std::vector<std::string> unread() const;
  static constexpr std::size_t kMaxReportedKey = 80;

 private:
  const Value& root_;
};

// A matrix of dyadic rationals read straight from the text by parse(..., capture): entry (i, j) is
// v[i * cols + j] / 2^k[i * cols + j] (k empty: every entry an integer).
struct IntMatrix {
  bool present = false;
  std::size_t rows = 0, cols = 0;
  std::vector<long> v;          // numerators, row-major
  std::vector<std::int16_t> k;  // exponents of the denominators (0 <= k <= kMaxDyadicExponent), or empty
};

// Largest k of a denominator 2^k parse(..., capture) reads (the smallest double is 2^-1074).
inline constexpr int kMaxDyadicExponent = 1100;

// Parses `text` (exactly one JSON value, surrounding whitespace allowed). Never throws; on failure
// returns false and `error` says where and what.
// With `capture`: the value of root["matrix"]["data"], when it is a non-empty list of equally long,
// non-empty lists of JSON strings that each hold a plain integer literal (-?(0|[1-9][0-9]*), at most 18
// digits, no escapes) or such a literal over a power of two in lowest terms ("n/2^k" written out in
// decimal, n odd, 1 <= k <= kMaxDyadicExponent: how memcert writes the exact value of a double), goes into
// *capture (present = true) and stays an EMPTY array in the tree: a tree of one Value per entry is what
// made large matrices slow to read. Any other shape is parsed into
// the tree as usual and *capture stays absent. A caller that captures must either read the matrix from
// *capture or parse again without capturing.
bool parse(const std::string& text, Value& out, std::string& error, IntMatrix* capture = nullptr);

// As parse, stopping with `over_budget` set (and false) as soon as the tree would take more than
// `max_tree_bytes` (an estimate per value and string kept, see json.cpp): a large text is refused in
// proportion to what it would build, not to its length.
bool parse_within(const std::string& text, Value& out, std::string& error, IntMatrix* capture, double max_tree_bytes,
                  bool& over_budget);

// Nesting depth accepted by parse(): certificates are shallow, and the limit keeps recursion bounded.
inline constexpr int kMaxDepth = 64;

}  // namespace memcert_checker::json
