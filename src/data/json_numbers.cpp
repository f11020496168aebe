// Exact numbers and matrices in JSON: strings hold exact decimals ("-7/12", "1e-3"); JSON numbers are
// taken as the integer (int64/uint64) or the double they parse to, exactly. Every malformed value throws
// InputError "file: position: expected ..., got ...".
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "memcert/data/matrix_io.hpp"
#include "memcert/data/decimals.hpp"
#include "printable.hpp"

namespace memcert {

namespace {

// "line L, column C" of the first JSON number token (outside strings) that overflows a double, or "".
std::string first_overflowing_number(const std::string& text) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t start = i;
      while (i + 1 < text.size() && std::string_view("0123456789+-.eE").find(text[i + 1]) != std::string_view::npos) ++i;
      const std::string token = text.substr(start, i - start + 1);
      errno = 0;
      const double v = std::strtod(token.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(v))
        return "line " + std::to_string(line) + ", column " + std::to_string(start - line_start + 1);
    }
  }
  return "";
}

std::string json_describe(const nlohmann::json& v) {
  if (v.is_string()) return detail::token_of(v.get_ref<const std::string&>(), "string");
  if (v.is_array()) return "a list of " + std::to_string(v.size());
  return std::string("a ") + v.type_name();
}

}  // namespace

Rational json_to_rational(const nlohmann::json& v, const std::string& file, const std::string& where) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    std::optional<Rational> q;
    try {
      q = decimal_parse(s);  // --decimals exact|double (decimals.hpp)
    } catch (const std::overflow_error&) {
      throw input_error(file, where, "expected a number within double range (--decimals double), got " +
                                         detail::token_of(s, "string") + " beyond it");
    }
    if (q) return *q;
    throw input_error(file, where, "expected an exact number, got " + detail::token_of(s, "string") + " that is not one");
  }
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    std::int64_t x = v.get<std::int64_t>();
    Integer z;
    std::uint64_t mag = x < 0 ? ~static_cast<std::uint64_t>(x) + 1 : static_cast<std::uint64_t>(x);
    mpz_import(z.get_mpz_t(), 1, 1, sizeof mag, 0, 0, &mag);
    return Rational(x < 0 ? Integer(-z) : z);
  }
  if (v.is_number_unsigned()) {
    std::uint64_t x = v.get<std::uint64_t>();
    Integer z;
    mpz_import(z.get_mpz_t(), 1, 1, sizeof x, 0, 0, &x);
    return Rational(z);
  }
  if (v.is_number_float()) {
    try {
      return rational_from_double(v.get<double>());
    } catch (const std::domain_error&) {
      throw input_error(file, where, "expected a finite number, got " + v.dump());
    }
  }
  throw input_error(file, where, "expected a number or an exact-number string, got " + json_describe(v));
}

nlohmann::json rational_to_json(const Rational& q) { return rational_to_string(q); }

nlohmann::json qvec_to_json(const QVector& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const Rational& q : v) a.push_back(rational_to_string(q));
  return a;
}

nlohmann::json qmat_to_json(const QMatrix& a) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < a.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < a.cols(); ++j) row.push_back(rational_to_string(a(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

QMatrix json_to_qmat(const nlohmann::json& v, const std::string& file, const std::string& where) {
  if (!v.is_array()) throw input_error(file, where, "expected a list of rows, got " + json_describe(v));
  std::size_t m = v.size(), n = 0;
  for (std::size_t i = 0; i < m; ++i) {
    std::string at = where + "[" + std::to_string(i) + "]";
    if (!v[i].is_array()) throw input_error(file, at, "expected a list of numbers, got " + json_describe(v[i]));
    if (i == 0) n = v[0].size();
    else if (v[i].size() != n)
      throw input_error(file, at, "expected " + std::to_string(n) + " numbers (as in " + where + "[0]), got " +
                                      std::to_string(v[i].size()));
  }
  QMatrix a(m, n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      a(i, j) = json_to_rational(v[i][j], file, where + "[" + std::to_string(i) + "][" + std::to_string(j) + "]");
  return a;
}

nlohmann::json qmat_to_json_matrix(const QMatrix& a) {
  return nlohmann::json{{"rows", a.rows()}, {"cols", a.cols()}, {"data", qmat_to_json(a)}};
}

QMatrix json_matrix_to_qmat(const nlohmann::json& v, const std::string& file, const std::string& where) {
  const std::string prefix = where.empty() ? "" : where + ".";
  if (v.is_array()) return json_to_qmat(v, file, where.empty() ? "data" : where);
  if (!v.is_object())
    throw input_error(file, where, "expected a matrix {\"rows\", \"cols\", \"data\"}, got " + json_describe(v));
  for (const char* key : {"rows", "cols", "data"})
    if (!v.contains(key))
      throw input_error(file, where, std::string("expected a matrix {\"rows\", \"cols\", \"data\"}, missing \"") + key + "\"");
  for (const char* key : {"rows", "cols"})
    if (!v[key].is_number_unsigned() && !(v[key].is_number_integer() && v[key].get<std::int64_t>() >= 0))
      throw input_error(file, prefix + key, "expected a non-negative integer, got " + json_describe(v[key]));
  std::size_t m = v["rows"].get<std::size_t>(), n = v["cols"].get<std::size_t>();
  QMatrix a = json_to_qmat(v["data"], file, prefix + "data");
  if (a.rows() != m)
    throw input_error(file, prefix + "data", "expected " + std::to_string(m) + " rows (\"rows\": " + std::to_string(m) +
                                                 "), got " + std::to_string(a.rows()));
  if (m > 0 && a.cols() != n)
    throw input_error(file, prefix + "data[0]", "expected " + std::to_string(n) + " numbers (\"cols\": " +
                                                    std::to_string(n) + "), got " + std::to_string(a.cols()));
  return m == 0 ? QMatrix(0, n) : a;
}

nlohmann::json json_read(const std::string& path) {
  std::string text = file_read_all(path);
  nlohmann::json j = json_parse_text(text, path);
  json_check_integer_literals(text, path);
  return j;
}

void json_check_integer_literals(const std::string& text, const std::string& name) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '"') {  // skip a string literal (escapes included)
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t start = i;
      bool integral = true;
      while (i + 1 < text.size() && std::string_view("0123456789+-.eE").find(text[i + 1]) != std::string_view::npos) {
        ++i;
        if (text[i] == '.' || text[i] == 'e' || text[i] == 'E') integral = false;
      }
      std::string token = text.substr(start, i - start + 1);
      // Only -?[0-9]+ is an integer literal; anything else here is not a number of the parsed JSON.
      const bool digits = token.find_first_not_of("0123456789", token[0] == '-' ? 1 : 0) == std::string::npos &&
                          token.size() > (token[0] == '-' ? 1u : 0u);
      if (integral && !digits) continue;
      if (!integral) {
        decimal_count_json_literal(token);  // e.g. 0.1: the summary's note (decimals.hpp)
        continue;
      }
      Integer z(token, 10);
      if (z < Integer("-9223372036854775808") || z > Integer("18446744073709551615"))
        throw input_error(name, "line " + std::to_string(line) + ", column " + std::to_string(start - line_start + 1),
                          "expected an integer within 64 bits (write larger ones as strings, e.g. \"123\"), got one of " +
                              std::to_string(token.size() - (token[0] == '-' ? 1 : 0)) + " digits");
    }
  }
}

namespace {
// nlohmann's parse error detail without its "; last read: '<the input's bytes>'" part (messages never
// echo file contents): "syntax error while parsing value - invalid literal; last read: 'SECRET=1'" becomes
// "syntax error while parsing value - invalid literal". A trailing "; expected <token kind>" is kept when
// it names one of nlohmann's token kinds.
std::string without_last_read(const std::string& detail) {
  const std::size_t at = detail.find("; last read: '");
  if (at == std::string::npos) return detail;
  std::string out = detail.substr(0, at);
  static const char* const kinds[] = {"<uninitialized>", "true literal", "false literal", "null literal",
                                      "string literal", "number literal", "'['", "'{'", "']'", "'}'", "':'", "','",
                                      "<parse error>", "end of input", "'[', '{', or a literal", "unknown token"};
  for (const char* k : kinds) {
    const std::string tail = std::string("; expected ") + k;
    if (detail.size() >= at + tail.size() && detail.compare(detail.size() - tail.size(), tail.size(), tail) == 0) {
      out += tail;
      break;
    }
  }
  return out;
}
}  // namespace

nlohmann::json json_parse_text(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw input_error(path, "", "expected JSON, got an empty file");
  // nlohmann's reader takes a NUL byte for the end of the input and would accept the text before it.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
    throw input_error(path, "byte " + std::to_string(nul), "expected JSON text, got a NUL byte");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // what() = "[json.exception.parse_error.N] parse error at line L, column C: detail"
    std::string w = e.what(), position = "byte " + std::to_string(e.byte), detail = w;
    std::size_t at = w.find(" at line ");
    if (at != std::string::npos) {
      std::size_t colon = w.find(": ", at);
      if (colon != std::string::npos) {
        position = w.substr(at + 4, colon - at - 4);
        detail = w.substr(colon + 2);
      }
    }
    throw input_error(path, position, "expected valid JSON (" + without_last_read(detail) + ")");
  } catch (const nlohmann::json::exception&) {
    // A number beyond double range (1e999, a million-digit integer): name its position, briefly.
    json_check_integer_literals(text, path);
    throw input_error(path, first_overflowing_number(text),
                      "expected a JSON number within double range (write exact numbers as strings, e.g. \"1e999\")");
  }
}

}  // namespace memcert
