// Typed, bounds-checked field access (see read.hpp). Messages name the field so a rejected
// certificate says exactly what was wrong.
#include "kernel/read.hpp"

#include <algorithm>

#include "kernel/context.hpp"

namespace memcert_checker {

namespace {
const char* type_name(json::Type t) {
  switch (t) {
    case json::Type::Null: return "null";
    case json::Type::Bool: return "a boolean";
    case json::Type::Number: return "a number";
    case json::Type::String: return "a string";
    case json::Type::Array: return "an array";
    case json::Type::Object: return "an object";
  }
  return "?";
}
std::string read_at(const std::string& where, std::size_t i) { return where + "[" + std::to_string(i) + "]"; }
// A field that cannot be read as its type (wrong JSON type, missing, bad number syntax): the certificate
// is malformed (bad input), not merely false. A length that disagrees with a size the certificate states
// is a false statement instead (exit 1, like any altered number). Returns false for chaining.
bool malformed() {
  check_context().malformed = true;
  return false;
}
}  // namespace

const Value* member(const Value& obj, const std::string& where, const std::string& key, json::Type t,
                    std::string& why) {
  std::string name = where.empty() ? key : where + "." + key;
  if (obj.type != json::Type::Object) { why = (where.empty() ? "certificate" : where) + ": expected an object"; malformed(); return nullptr; }
  const Value* v = obj.find(key);
  if (!v) { why = name + ": missing"; malformed(); return nullptr; }
  if (v->type != t) { why = name + ": expected " + type_name(t) + ", got " + type_name(v->type); malformed(); return nullptr; }
  return v;
}

bool read_size(const Value& v, const std::string& where, std::size_t max, std::size_t& out, std::string& why) {
  if (v.type != json::Type::Number) { why = where + ": expected an integer, got " + type_name(v.type); return malformed(); }
  const std::string& t = v.text;
  if (!t.empty() && t[0] == '-') { why = where + ": negative value " + t; return malformed(); }
  for (char c : t)
    if (c < '0' || c > '9') { why = where + ": expected an integer, got " + t; return malformed(); }
  // At most 18 digits fit comfortably in 64 bits; anything longer is out of range anyway.
  if (t.size() > 18) { why = where + ": value " + t + " out of range (max " + std::to_string(max) + ")"; return false; }
  unsigned long long n = std::stoull(t);
  if (n > max) { why = where + ": value " + t + " out of range (max " + std::to_string(max) + ")"; return false; }
  out = static_cast<std::size_t>(n);
  return true;
}

bool read_bool(const Value& v, const std::string& where, bool& out, std::string& why) {
  if (v.type != json::Type::Bool) { why = where + ": expected true or false, got " + type_name(v.type); return malformed(); }
  out = v.boolean;
  return true;
}

bool read_string(const Value& obj, const std::string& where, const std::string& key, std::string& out,
                 std::string& why) {
  const Value* v = member(obj, where, key, json::Type::String, why);
  if (!v) return false;
  out = v->text;
  return true;
}

bool read_rational(const Value& v, const std::string& where, mpq_class& out, std::string& why) {
  if (v.type != json::Type::String) {
    why = where + ": expected an exact number as a string, got " + type_name(v.type);
    return malformed();
  }
  std::string err;
  if (!parse_rational(v.text, out, err)) { why = where + ": " + err; return malformed(); }
  return true;
}

bool read_prime(const Value& v, const std::string& where, ModP& out, std::string& why) {
  if (v.type != json::Type::String) { why = where + ": expected a prime as a decimal string"; return malformed(); }
  unsigned long long p = 0;
  if (!parse_u64(v.text, p)) { why = where + ": \"" + v.text + "\" is not a 64-bit decimal integer"; return malformed(); }
  if (p > kMaxPrime) { why = where + ": prime " + v.text + " exceeds 2^63 - 1"; return false; }
  if (!is_prime_u64(p)) { why = where + ": " + v.text + " is not prime"; return false; }
  out = ModP{p};
  return true;
}

bool read_index_set(const Value& v, const std::string& where, std::size_t count, std::size_t bound,
                    std::vector<std::size_t>& out, std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array of indices"; return malformed(); }
  if (v.size() != count) {
    why = where + ": expected " + std::to_string(count) + " indices, got " + std::to_string(v.size());
    return false;  // a length that disagrees with a stated size: false, not ill-typed
  }
  out.clear();
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t k;
    if (bound == 0) { why = read_at(where, i) + ": no index is in range (size 0)"; return false; }
    if (!read_size(*v.at(i), read_at(where, i), bound - 1, k, why)) return false;
    out.push_back(k);
  }
  // Distinctness by sorting a copy (memory proportional to the list, not to `bound`).
  std::vector<std::size_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1]) { why = where + ": index " + std::to_string(sorted[i]) + " repeated"; return false; }
  return true;
}

bool read_rational_vector(const Value& v, const std::string& where, std::size_t count, QRow& out,
                          std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array of exact numbers"; return malformed(); }
  if (v.size() != count) {
    why = where + ": expected " + std::to_string(count) + " entries, got " + std::to_string(v.size());
    return false;  // a length that disagrees with a stated size: false, not ill-typed
  }
  out.assign(count, mpq_class(0));
  std::string err, text;
  json::Type t = json::Type::Null;
  std::string_view view;
  for (std::size_t i = 0; i < count; ++i) {  // the field's name is spelled out only for the reason
    if (v.leaf(i, t, view) && t == json::Type::String && parse_rational(text.assign(view), out[i], err)) continue;
    return read_rational(*v.at(i), read_at(where, i), out[i], why);
  }
  return true;
}

bool read_matrix(const Value& v, const std::string& where, QMat& out, std::size_t& rows, std::size_t& cols,
                 std::string& why) {
  if (v.type != json::Type::Object) { why = where + ": expected a matrix object {rows, cols, data}"; return malformed(); }
  const Value* r = member(v, where, "rows", json::Type::Number, why);
  if (!r || !read_size(*r, where + ".rows", kMaxDimension, rows, why)) return false;
  const Value* c = member(v, where, "cols", json::Type::Number, why);
  if (!c || !read_size(*c, where + ".cols", kMaxDimension, cols, why)) return false;
  const Value* d = member(v, where, "data", json::Type::Array, why);
  if (!d) return false;
  if (d->size() != rows) {
    why = where + ".data: has " + std::to_string(d->size()) + " rows, \"rows\" says " + std::to_string(rows);
    return false;  // a length that disagrees with a stated size: false, not ill-typed
  }
  out.assign(rows, QRow());
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(*d->at(i), read_at(where + ".data", i), cols, out[i], why)) return false;
  return true;
}

}  // namespace memcert_checker
