// Recursive-descent JSON reader (RFC 8259). Deliberately strict: anything unusual is an error, since
// a certificate the checker misreads is worse than one it rejects.
#include "json.hpp"

#include <new>
#include <unordered_set>

namespace memcert_checker::json {

const Value* Value::find(const std::string& key) const {
  if (type != Type::Object) return nullptr;
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

namespace {

struct Parser {
  const std::string& s;
  std::size_t pos = 0;
  std::string error;

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
    std::size_t start = pos;
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
    v.type = Type::Number;
    v.text = s.substr(start, pos - start);
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

  bool value(Value& v, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    skip_ws();
    if (pos >= s.size()) return fail("unexpected end of input");
    char c = s[pos];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') { v.type = Type::String; return string(v.text); }
    if (c == 't') { v.type = Type::Bool; v.boolean = true; return literal("true"); }
    if (c == 'f') { v.type = Type::Bool; v.boolean = false; return literal("false"); }
    if (c == 'n') { v.type = Type::Null; return literal("null"); }
    return number(v);
  }

  bool array(Value& v, int depth) {
    v.type = Type::Array;
    ++pos;  // '['
    skip_ws();
    if (pos < s.size() && s[pos] == ']') { ++pos; return true; }
    while (true) {
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ']') { ++pos; return true; }
      return fail("expected ',' or ']'");
    }
  }

  bool object(Value& v, int depth) {
    v.type = Type::Object;
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
      v.members.push_back(Member{std::move(key), Value{}});
      if (!value(v.members.back().second, depth + 1)) return false;
      skip_ws();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == '}') { ++pos; return true; }
      return fail("expected ',' or '}'");
    }
  }
};

}  // namespace

bool parse(const std::string& text, Value& out, std::string& error) {
  try {
    Parser p{text, 0, {}};
    Value v;
    if (!p.value(v, 1)) { error = p.error; return false; }
    p.skip_ws();
    if (p.pos != text.size()) { p.fail("trailing characters after the JSON value"); error = p.error; return false; }
    out = std::move(v);
    return true;
  } catch (const std::bad_alloc&) {
    error = "json: out of memory";
    return false;
  }
}

}  // namespace memcert_checker::json
