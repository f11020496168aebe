// Recursive-descent JSON reader (RFC 8259). Deliberately strict: anything unusual is an error, since
// a certificate the checker misreads is worse than one it rejects.
#include "kernel/json.hpp"

#include <gmpxx.h>

#include <cstdio>
#include <new>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace memcert_checker::json {

// The leaves (numbers, or strings decoded) of a packed array and of every array inside it, in document
// order. An array of height h holds arrays of height h - 1, or leaves for h = 1; the arrays of each height
// are numbered in document order (the root has the largest height, number 0).
struct PackedArray {
  struct Children {
    std::uint64_t begin, end;  // its elements: the arrays (or leaves) [begin, end) of the height below
  };
  Type leaf = Type::Null;                         // Number or String (Null: no leaf yet)
  std::string text;                               // the leaves' texts, one after another
  std::vector<std::uint64_t> ends;                // leaf k: text[k ? ends[k - 1] : 0, ends[k])
  std::vector<std::vector<Children>> arrays;      // [h - 1][i]: array i of height h

  std::uint64_t first_child(std::uint32_t h, std::size_t i) const { return arrays[h - 1][i].begin; }
  std::string_view leaf_text(std::size_t k) const {
    const std::uint64_t a = k ? ends[k - 1] : 0;
    return std::string_view(text).substr(a, ends[k] - a);
  }
};

namespace detail {
struct Access {
  static std::vector<Value>& items(Value& v) { return v.items_; }
  static const std::vector<Value>& items(const Value& v) { return v.items_; }
  static void set_packed(Value& v, std::shared_ptr<const PackedArray> p, std::uint32_t height, std::size_t node) {
    v.type = Type::Array;
    v.items_.clear();
    v.packed_ = std::move(p);
    v.height_ = height;
    v.node_ = node;
  }
};
}  // namespace detail
using detail::Access;

std::size_t Value::size() const {
  if (type != Type::Array) return 0;
  if (!packed_) return items_.size();
  const PackedArray::Children& c = packed_->arrays[height_ - 1][node_];
  return static_cast<std::size_t>(c.end - c.begin);
}

Item Value::at(std::size_t k) const {
  Item it;
  if (k >= size()) return it;  // out of range: null (callers check size() first)
  if (!packed_) {
    it.ref_ = &items_[k];
    return it;
  }
  const std::size_t c = static_cast<std::size_t>(packed_->first_child(height_, node_)) + k;
  if (height_ == 1) {
    it.own_.type = packed_->leaf;
    it.own_.text = packed_->leaf_text(c);
  } else {
    Access::set_packed(it.own_, packed_, height_ - 1, c);
  }
  return it;
}

bool Value::leaf(std::size_t k, Type& t, std::string_view& view) const {
  if (k >= size()) return false;
  if (!packed_) {
    const Value& e = items_[k];
    if (e.type != Type::Number && e.type != Type::String) return false;
    t = e.type;
    view = e.text;
    return true;
  }
  if (height_ != 1) return false;
  t = packed_->leaf;
  view = packed_->leaf_text(static_cast<std::size_t>(packed_->first_child(height_, node_)) + k);
  return true;
}

void Value::append(Value item) {
  if (packed_) {  // unpacked first, so the elements stay in order
    std::vector<Value> all;
    for (std::size_t k = 0; k < size(); ++k) all.push_back(*at(k));
    packed_.reset();
    height_ = 0;
    node_ = 0;
    items_ = std::move(all);
  }
  type = Type::Array;
  items_.push_back(std::move(item));
}

namespace {
bool member_was_read(const Member& m) { return __atomic_load_n(&m.read, __ATOMIC_RELAXED); }

// An object, or an array the parser saw an object in: a value that can hold a key (a tree built by hand has
// holds_objects unset, so an object counts by its type).
bool may_hold_keys(const Value& v) { return v.type == Type::Object || v.holds_objects; }

void clear_read_marks(const Value& v) {
  if (!may_hold_keys(v)) return;  // nothing below was ever marked
  for (const Member& m : v.members) {
    __atomic_store_n(&m.read, false, __ATOMIC_RELAXED);
    clear_read_marks(m.second);
  }
  for (const Value& item : Access::items(v)) clear_read_marks(item);
}

std::string reported_key(const std::string& key) {
  if (key.size() <= FieldTracker::kMaxReportedKey) return key;
  std::size_t cut = FieldTracker::kMaxReportedKey;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return key.substr(0, cut) + "...";
}

// Appends {concrete path, path with every index written [*]} of each unread member below `v`, and counts
// in `members` every member walked (read or not) by its starred path.
void collect_unread(const Value& v, const std::string& path, const std::string& starred,
                    std::vector<std::pair<std::string, std::string>>& out,
                    std::unordered_map<std::string, std::size_t>& members) {
  if (!may_hold_keys(v)) return;
  for (const Member& m : v.members) {
    const std::string key = reported_key(m.first);
    const std::string p = path.empty() ? key : path + "." + key;
    const std::string q = starred.empty() ? key : starred + "." + key;
    ++members[q];
    if (!member_was_read(m)) out.emplace_back(p, q);
    else collect_unread(m.second, p, q, out, members);
  }
  const std::vector<Value>& items = Access::items(v);  // an array that holds objects is never packed
  for (std::size_t i = 0; i < items.size(); ++i)
    collect_unread(items[i], path + "[" + std::to_string(i) + "]", starred + "[*]", out, members);
}
}  // namespace

FieldTracker::FieldTracker(const Value& root) : root_(root) { clear_read_marks(root_); }

std::vector<std::string> FieldTracker::unread() const {
  std::vector<std::pair<std::string, std::string>> found;
  std::unordered_map<std::string, std::size_t> members;
  collect_unread(root_, "", "", found, members);
  std::unordered_map<std::string, std::size_t> unread;  // starred path -> its unread members
  for (const auto& f : found) ++unread[f.second];
  std::vector<std::string> out;
  std::unordered_set<std::string> said;
  for (const auto& [concrete, starred] : found) {
    // Unread at every index it occurs at (two or more): once, as [*]; otherwise each index on its own.
    const std::size_t n = unread[starred];
    if (n < 2 || n != members[starred]) out.push_back(concrete);
    else if (said.insert(starred).second) out.push_back(starred);
  }
  return out;
}

const Value* Value::find(const std::string& key) const {
  if (type != Type::Object) return nullptr;
  for (const auto& m : members)
    if (m.first == key) {
      if (!member_was_read(m)) __atomic_store_n(&m.read, true, __ATOMIC_RELAXED);
      return &m.second;
    }
  return nullptr;
}

namespace {

// k when `digits` is the decimal numeral of 2^k, 0 <= k <= kMaxDyadicExponent; -1 otherwise. The numerals
// are made once with GMP (exact) and looked up by their text.
int power_of_two_exponent(std::string_view digits) {
  static const std::vector<std::string> numerals = [] {
    std::vector<std::string> t;
    mpz_class x = 1;
    for (int k = 0; k <= kMaxDyadicExponent; ++k, x *= 2) t.push_back(x.get_str());
    return t;
  }();
  static const std::unordered_map<std::string_view, int> index = [] {
    std::unordered_map<std::string_view, int> m;
    for (int k = 0; k <= kMaxDyadicExponent; ++k) m.emplace(numerals[static_cast<std::size_t>(k)], k);
    return m;
  }();
  const auto it = index.find(digits);
  return it == index.end() ? -1 : it->second;
}

// What one value cost as a node of the tree before arrays were packed: the budget still charges every value
// so (an over-estimate for a packed array), so what parse_within admits is what it admitted then.
struct TreeNode {
  Type type;
  bool boolean, holds_objects;
  std::string text;
  std::vector<Value> items;
  std::vector<Member> members;
};

struct Parser {
  const std::string& s;
  std::size_t pos = 0;
  std::string error;
  IntMatrix* capture = nullptr;  // see parse()
  bool in_matrix = false;        // parsing the value of root["matrix"]
  double tree_bytes = 0, max_tree_bytes = 1e300;  // see parse_within()
  bool over_budget = false;
  std::size_t objects_parsed = 0;  // objects begun so far (array() compares it to set holds_objects)
  bool pack = true;                // pack the arrays that can be (see Value)
  std::string scratch = {};        // a string leaf of a packed array, decoded

  // Every value kept counts its node twice (a vector may hold up to twice its size) plus the heap bytes of
  // a long text; past the budget the parse stops.
  bool charge(std::size_t text_bytes) {
    tree_bytes += 2.0 * sizeof(TreeNode) + (text_bytes > 15 ? double(text_bytes) + 16 : 0.0);
    if (tree_bytes <= max_tree_bytes) return true;
    over_budget = true;
    char room[32];
    std::snprintf(room, sizeof room, "%.3g", max_tree_bytes / 1e6);
    return fail("over budget: the parsed tree would take more than " + std::string(room) + " MB");
  }

  bool fail(const std::string& what) {
    if (error.empty()) error = "json: offset " + std::to_string(pos) + ": " + what;
    return false;
  }
  void skip_ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  }
  bool literal(const char* word) {
    std::size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0) return fail(std::string("expected ") + word);
    pos += n;
    return true;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  // Validates the JSON number grammar and keeps the text.
  bool number(Value& v) {
    const std::size_t start = pos;
    if (!number_syntax()) return false;
    v.type = Type::Number;
    v.text = s.substr(start, pos - start);
    return charge(v.text.size());
  }
  // Moves pos past a number, validating its grammar.
  bool number_syntax() {
    if (pos < s.size() && s[pos] == '-') ++pos;
    if (pos >= s.size() || !digit(s[pos])) return fail("expected a digit");
    if (s[pos] == '0') ++pos;
    else while (pos < s.size() && digit(s[pos])) ++pos;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      if (pos >= s.size() || !digit(s[pos])) return fail("expected a digit after '.'");
      while (pos < s.size() && digit(s[pos])) ++pos;
    }
    if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
      ++pos;
      if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
      if (pos >= s.size() || !digit(s[pos])) return fail("expected a digit in the exponent");
      while (pos < s.size() && digit(s[pos])) ++pos;
    }
    return true;
  }

  bool hex4(unsigned& out) {
    if (pos + 4 > s.size()) return fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s[pos++];
      unsigned d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return fail("bad hex digit in \\u escape");
      out = out * 16 + d;
    }
    return true;
  }
  static void put_utf8(std::string& o, unsigned cp) {
    if (cp < 0x80) o += char(cp);
    else if (cp < 0x800) { o += char(0xC0 | (cp >> 6)); o += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
      o += char(0xE0 | (cp >> 12)); o += char(0x80 | ((cp >> 6) & 0x3F)); o += char(0x80 | (cp & 0x3F));
    } else {
      o += char(0xF0 | (cp >> 18)); o += char(0x80 | ((cp >> 12) & 0x3F));
      o += char(0x80 | ((cp >> 6) & 0x3F)); o += char(0x80 | (cp & 0x3F));
    }
  }

  // Length of the well-formed UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0: no stray continuation
  // byte, no overlong form, no surrogate, nothing above U+10FFFF (the table of RFC 3629 section 4).
  std::size_t utf8_length(std::size_t i) const {
    const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
    const unsigned c0 = b(0);
    const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
    if (c0 >= 0xC2 && c0 <= 0xDF) return cont(1) ? 2 : 0;
    if (c0 == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if ((c0 >= 0xE1 && c0 <= 0xEC) || c0 == 0xEE || c0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (c0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (c0 == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c0 >= 0xF1 && c0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
  }

  bool string(std::string& out) {
    if (pos >= s.size() || s[pos] != '"') return fail("expected '\"'");
    ++pos;
    out.clear();
    while (true) {
      if (pos >= s.size()) return fail("unterminated string");
      char c = s[pos++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (static_cast<unsigned char>(c) >= 0x80) {  // RFC 8259: text is UTF-8; anything else is malformed
        const std::size_t n = utf8_length(pos - 1);
        if (n == 0) { --pos; return fail("invalid UTF-8 in string"); }
        out.append(s, pos - 1, n);
        pos += n - 1;
        continue;
      }
      if (c != '\\') { out += c; continue; }
      if (pos >= s.size()) return fail("unterminated escape");
      char e = s[pos++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
            unsigned lo = 0;
            if (s.compare(pos, 2, "\\u") != 0) return fail("unpaired surrogate");
            pos += 2;
            if (!hex4(lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("unpaired surrogate");
          }
          put_utf8(out, cp);
          break;
        }
        default: return fail("bad escape");
      }
    }
  }

  // The fast read of a list of lists of plain integer strings into *capture (see parse()). Returns false
  // with pos unchanged (and *capture cleared) at the first thing that does not fit that shape, so the
  // caller parses the same text the ordinary way and reports any error from there.
  bool int_matrix(Value& v) {
    const std::size_t start = pos;
    IntMatrix& m = *capture;
    m = IntMatrix{};
    bool dyadic = false;  // some entry had a denominator: m.k holds every entry's exponent
    auto give_up = [&] {
      pos = start;
      m = IntMatrix{};
      return false;
    };
    skip_ws();
    if (pos >= s.size() || s[pos] != '[') return give_up();
    ++pos;
    while (true) {  // one row per pass
      skip_ws();
      if (pos >= s.size() || s[pos] != '[') return give_up();
      ++pos;
      std::size_t cols = 0;
      while (true) {  // one entry per pass
        skip_ws();
        if (pos >= s.size() || s[pos] != '"') return give_up();
        ++pos;
        const bool neg = pos < s.size() && s[pos] == '-';
        if (neg) ++pos;
        const std::size_t d0 = pos;
        long x = 0;
        while (pos < s.size() && digit(s[pos]) && pos - d0 < 19) x = x * 10 + (s[pos++] - '0');
        const std::size_t digits = pos - d0;
        if (digits == 0 || digits > 18 || (digits > 1 && s[d0] == '0') || pos >= s.size() ||
            (s[pos] != '"' && s[pos] != '/'))
          return give_up();
        int k = 0;
        if (s[pos] == '/') {  // a denominator: it must be a power of two 2^k, k >= 1, over an odd numerator
          const std::size_t q0 = ++pos;
          while (pos < s.size() && digit(s[pos])) ++pos;
          if (pos >= s.size() || s[pos] != '"') return give_up();
          k = power_of_two_exponent(std::string_view(s).substr(q0, pos - q0));
          if (k < 1 || x % 2 == 0) return give_up();
          if (!dyadic) m.k.assign(m.v.size(), 0), dyadic = true;
        }
        ++pos;
        m.v.push_back(neg ? -x : x);
        if (dyadic) m.k.push_back(static_cast<std::int16_t>(k));
        ++cols;
        skip_ws();
        if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
        if (pos < s.size() && s[pos] == ']') { ++pos; break; }
        return give_up();
      }
      if (m.rows == 0) m.cols = cols;
      else if (cols != m.cols) return give_up();
      ++m.rows;
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ']') { ++pos; break; }
      return give_up();
    }
    v.type = Type::Array;
    m.present = true;
    return true;
  }

  bool value(Value& v, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    skip_ws();
    if (pos >= s.size()) return fail("unexpected end of input");
    const char c = s[pos];
    if (!charge(0)) return false;
    return body(v, c, depth);
  }

  // The value starting with `c` at pos (value() has checked the depth and charged the node).
  bool body(Value& v, char c, int depth) {
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') { v.type = Type::String; return string(v.text) && charge(v.text.size()); }
    if (c == 't') { v.type = Type::Bool; v.boolean = true; return literal("true"); }
    if (c == 'f') { v.type = Type::Bool; v.boolean = false; return literal("false"); }
    if (c == 'n') { v.type = Type::Null; return literal("null"); }
    return number(v);
  }

  bool array(Value& v, int depth) {
    if (!pack) {
      v.type = Type::Array;
      ++pos;  // '['
      skip_ws();
      if (pos < s.size() && s[pos] == ']') { ++pos; return true; }
      return tree_elements(v, depth, objects_parsed);
    }
    auto store = std::make_shared<PackedArray>();
    const int height = packed_array(*store, v, depth, store->leaf);
    if (height < 0) return false;
    if (height > 0) {
      store->text.shrink_to_fit();
      store->ends.shrink_to_fit();
      for (auto& e : store->arrays) e.shrink_to_fit();
      Access::set_packed(v, std::move(store), static_cast<std::uint32_t>(height), 0);
    }
    return true;
  }

  // The elements of the tree array v from pos (at an element) to its ']'; `objects_before`: objects_parsed
  // when the array began. An object anywhere below is told by the count of objects parsed, not by a look at
  // every item.
  bool tree_elements(Value& v, int depth, std::size_t objects_before) {
    std::vector<Value>& items = Access::items(v);
    while (true) {
      items.emplace_back();
      if (!value(items.back(), depth + 1)) return false;
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ']') {
        ++pos;
        v.holds_objects = objects_parsed != objects_before;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  // Element i of b's arrays of height h (h = 0: leaf i), its leaves of type `leaf`, copied out into a value
  // of its own.
  static Value extract(const PackedArray& b, int h, std::size_t i, Type leaf) {
    Value v;
    if (h == 0) {
      v.type = leaf;
      v.text = b.leaf_text(i);
      return v;
    }
    auto p = std::make_shared<PackedArray>();
    p->leaf = leaf;
    p->arrays.resize(static_cast<std::size_t>(h));
    // The arrays of height g taken, from the one asked for down: consecutive, and so are their elements.
    std::uint64_t lo = i, hi = i + 1;
    for (int g = h; g >= 1; --g) {
      const std::vector<PackedArray::Children>& a = b.arrays[static_cast<std::size_t>(g - 1)];
      const std::uint64_t first = lo < hi ? a[lo].begin : 0, last = lo < hi ? a[hi - 1].end : 0;
      std::vector<PackedArray::Children>& out = p->arrays[static_cast<std::size_t>(g - 1)];
      for (std::uint64_t j = lo; j < hi; ++j) out.push_back({a[j].begin - first, a[j].end - first});
      lo = first;
      hi = last;
    }
    const std::uint64_t t0 = lo < hi && lo ? b.ends[lo - 1] : 0, t1 = lo < hi ? b.ends[hi - 1] : 0;
    p->text = b.text.substr(t0, t1 - t0);
    for (std::uint64_t k = lo; k < hi; ++k) p->ends.push_back(b.ends[k] - t0);
    Access::set_packed(v, std::move(p), static_cast<std::uint32_t>(h), 0);
    return v;
  }

  // The array at pos ('['), appended to `b` when it packs: its elements all leaves of one type, or all
  // arrays packed into b with one height and leaf type; returns its height (1: it holds leaves) and sets
  // `leaf_type` (Null: no leaf at all). Otherwise `tree` becomes the array as a tree (what was appended to b
  // of it is taken back out) and the answer is 0; -1 on an error. Every byte, error and charge is the tree
  // parser's, in the same order. (b.leaf is left to the caller: b may hold leaves of two types meanwhile.)
  int packed_array(PackedArray& b, Value& tree, int depth, Type& leaf_type) {
    leaf_type = Type::Null;
    ++pos;  // '['
    skip_ws();
    const std::size_t objects_before = objects_parsed;
    const std::size_t leaves0 = b.ends.size(), heights0 = b.arrays.size();
    std::size_t arrays0[kMaxDepth + 2];  // b's arrays of each height before this one
    for (std::size_t h = 0; h < heights0; ++h) arrays0[h] = b.arrays[h].size();
    int child_height = -1;  // its elements': 0 leaves, h >= 1 arrays of height h; -1 none yet
    std::size_t n = 0;      // its elements so far
    std::uint64_t first = leaves0;  // the index of its first element (a leaf or an array of height child_height)
    auto close = [&] {
      const int height = child_height <= 0 ? 1 : child_height + 1;
      if (b.arrays.size() < static_cast<std::size_t>(height)) b.arrays.resize(static_cast<std::size_t>(height));
      b.arrays[static_cast<std::size_t>(height - 1)].push_back({first, first + n});
      return height;
    };
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
      return close();
    }
    while (true) {
      if (depth + 1 > kMaxDepth) {
        fail("nesting deeper than " + std::to_string(kMaxDepth));
        return -1;
      }
      skip_ws();
      if (pos >= s.size()) {
        fail("unexpected end of input");
        return -1;
      }
      const char c = s[pos];
      if (!charge(0)) return -1;
      Value e;                       // the element, when it is a tree
      int height = 0;                // the element's, when it is an array packed into b
      Type leaf = Type::Null;        // the element's type, when it is a leaf
      Type inner = Type::Null;       // the type of the element's leaves, when it is a packed array
      std::string_view text;         // the leaf's text
      if (c == '[') {
        height = packed_array(b, e, depth + 1, inner);
        if (height < 0) return -1;
      } else if (c == '"') {
        if (!string(scratch) || !charge(scratch.size())) return -1;
        leaf = Type::String;
        text = scratch;
      } else if (c == '{' || c == 't' || c == 'f' || c == 'n') {
        if (!body(e, c, depth + 1)) return -1;
      } else {
        const std::size_t start = pos;
        if (!number_syntax() || !charge(pos - start)) return -1;
        leaf = Type::Number;
        text = std::string_view(s).substr(start, pos - start);
      }
      const Type got = leaf != Type::Null ? leaf : inner;
      const bool fits = (leaf_type == Type::Null || got == Type::Null || got == leaf_type) &&
                        (leaf != Type::Null ? child_height <= 0 : height > 0 && (child_height == -1 || child_height == height));
      if (fits) {
        if (leaf != Type::Null) {
          b.text.append(text);
          b.ends.push_back(b.text.size());
          child_height = 0;
          if (n == 0) first = b.ends.size() - 1;
        } else {
          child_height = height;
          if (n == 0) first = b.arrays[static_cast<std::size_t>(height - 1)].size() - 1;
        }
        if (got != Type::Null) leaf_type = got;
        ++n;
      } else {
        // A tree after all: the elements so far (and this one, when packed) come out of b, and b is as before.
        std::vector<Value>& items = Access::items(tree);
        tree.type = Type::Array;
        items.reserve(n + 1);
        for (std::size_t k = 0; k < n; ++k)
          items.push_back(extract(b, child_height, static_cast<std::size_t>(first + k), leaf_type));
        if (leaf != Type::Null) {
          Value x;
          x.type = leaf;
          x.text = text;
          items.push_back(std::move(x));
        } else if (height > 0) {
          items.push_back(extract(b, height, b.arrays[static_cast<std::size_t>(height - 1)].size() - 1, inner));
        } else {
          items.push_back(std::move(e));
        }
        b.ends.resize(leaves0);
        b.text.resize(leaves0 ? b.ends.back() : 0);
        for (std::size_t h = 0; h < b.arrays.size(); ++h) b.arrays[h].resize(h < heights0 ? arrays0[h] : 0);
        leaf_type = Type::Null;
        skip_ws();
        if (pos < s.size() && s[pos] == ',') {
          ++pos;
          return tree_elements(tree, depth, objects_before) ? 0 : -1;
        }
        if (pos < s.size() && s[pos] == ']') {
          ++pos;
          tree.holds_objects = objects_parsed != objects_before;
          return 0;
        }
        fail("expected ',' or ']'");
        return -1;
      }
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ']') {
        ++pos;
        return close();
      }
      fail("expected ',' or ']'");
      return -1;
    }
  }

  bool object(Value& v, int depth) {
    v.type = Type::Object;
    v.holds_objects = true;
    ++objects_parsed;
    ++pos;  // '{'
    skip_ws();
    if (pos < s.size() && s[pos] == '}') { ++pos; return true; }
    std::unordered_set<std::string> seen;  // a set, so many keys cannot make this quadratic
    while (true) {
      skip_ws();
      std::string key;
      if (!string(key)) return false;
      if (!seen.insert(key).second) return fail("duplicate key \"" + key + "\"");
      skip_ws();
      if (pos >= s.size() || s[pos] != ':') return fail("expected ':'");
      ++pos;
      const bool is_matrix = capture && depth == 1 && key == "matrix";
      const bool is_data = capture && in_matrix && depth == 2 && key == "data";
      v.members.push_back(Member{std::move(key), Value{}});
      if (is_data && int_matrix(v.members.back().second)) {
        // captured; the member stays an empty array
      } else {
        const bool saved = in_matrix;
        in_matrix = is_matrix;
        const bool ok = value(v.members.back().second, depth + 1);
        in_matrix = saved;
        if (!ok) return false;
      }
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == '}') { ++pos; return true; }
      return fail("expected ',' or '}'");
    }
  }
};

}  // namespace

bool parse(const std::string& text, Value& out, std::string& error, IntMatrix* capture) {
  bool over = false;
  return parse_within(text, out, error, capture, 1e300, over, true);
}

bool parse_within(const std::string& text, Value& out, std::string& error, IntMatrix* capture, double max_tree_bytes,
                  bool& over_budget, bool pack_arrays) {
  over_budget = false;
  try {
    if (capture) *capture = IntMatrix{};
    Parser p{text, 0, {}, capture};
    p.max_tree_bytes = max_tree_bytes;
    p.pack = pack_arrays;
    Value v;
    if (!p.value(v, 1)) {
      if (capture) *capture = IntMatrix{};
      over_budget = p.over_budget;
      error = p.error;
      return false;
    }
    p.skip_ws();
    if (p.pos != text.size()) {
      if (capture) *capture = IntMatrix{};
      p.fail("trailing characters after the JSON value");
      error = p.error;
      return false;
    }
    out = std::move(v);
    return true;
  } catch (const std::bad_alloc&) {
    if (capture) *capture = IntMatrix{};
    error = "json: out of memory";
    return false;
  }
}

}  // namespace memcert_checker::json
