#pragma once
// A small JSON reader for the checker (the checker must not depend on any JSON library).
// Numbers are kept as their source text: the checker decides itself how to read them (integers for
// indices, exact rationals elsewhere), so no value ever passes through a double.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memcert_checker::json {

enum class Type { Null, Bool, Number, String, Array, Object };

struct Member;       // {key, value}: defined below, so Value holds a vector of an incomplete type (C++17)
class Item;          // one element of an array (Value::at), defined below
struct PackedArray;  // the storage of a packed array (json.cpp)
namespace detail {
struct Access;  // the parser's and the field tracker's way to a tree array's elements (json.cpp)
}

// A parsed value. An array whose elements are all numbers, or all strings, or all such arrays of one depth
// (vectors, matrices, tensors) is PACKED by parse(): its leaves' texts sit in one buffer with their end
// offsets, shared by its sub-arrays, and an element is made only when asked for (at()), so a large matrix
// costs a few bytes per entry instead of a node each. Any other array (one holding an object, a boolean,
// null, or numbers beside strings) is a tree of elements. Both are read the same way: size(), at(k), leaf().
struct Value {
  Type type = Type::Null;
  bool boolean = false;
  bool holds_objects = false;  // set by parse(): an object, or an array with an object at some depth
  std::string text;             // Number: source text; String: decoded UTF-8
  std::vector<Member> members;  // Object, in source order

  // The member named `key`, or nullptr (also when this is not an object). Duplicate keys are
  // rejected by the parser, so the answer is unambiguous. Marks the member as read (FieldTracker).
  const Value* find(const std::string& key) const;

  // Array: the number of elements (0 for any other type).
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // Element k of an array: the tree's own node, or one made from the packed text (null for k >= size()).
  Item at(std::size_t k) const;
  // Element k < size() when it is a number or a string: its type and text, without making a Value (the
  // view lives as long as this array). False for any other element.
  bool leaf(std::size_t k, Type& type, std::string_view& text) const;
  // Whether the array is packed (the reading is the same either way; tests and the parser use it).
  bool packed() const { return packed_ != nullptr; }
  // Appends `item` to an array built by hand (this becomes an array if it was null); never packed.
  void append(Value item);

 private:
  friend struct detail::Access;
  std::vector<Value> items_;                   // a tree array's elements
  std::shared_ptr<const PackedArray> packed_;  // a packed array: its storage,
  std::uint32_t height_ = 0;                   // the depth of its nesting (1: its elements are leaves),
  std::size_t node_ = 0;                       // and its index among the storage's arrays of that height
};

struct Member {
  std::string first;          // the key
  Value second;               // its value
  mutable bool read = false;  // a find() returned this member (set atomically: checks read on several threads)
};

// One element of an array, as at() gives it: use it like a pointer to a Value (*item, item->text). It owns
// the element made from a packed array, so keep the Item (not a reference into it) while reading.
class Item {
 public:
  const Value& operator*() const noexcept { return ref_ ? *ref_ : own_; }
  const Value* operator->() const noexcept { return ref_ ? ref_ : &own_; }

 private:
  friend struct Value;
  const Value* ref_ = nullptr;  // an element of a tree array
  Value own_;                   // an element made from a packed array
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
// proportion to what it would build, not to its length. The estimate charges every value as a node of a
// tree, packed or not, so what is admitted does not depend on packing. `pack_arrays` false: every array is
// a tree (the reading the packed one is tested against).
bool parse_within(const std::string& text, Value& out, std::string& error, IntMatrix* capture, double max_tree_bytes,
                  bool& over_budget, bool pack_arrays = true);

// Nesting depth accepted by parse(): certificates are shallow, and the limit keeps recursion bounded.
inline constexpr int kMaxDepth = 64;

}  // namespace memcert_checker::json
