#pragma once
// Echoing file content into one-line error messages: control and non-ASCII bytes become escapes
// (\n, \t, \xNN) and long text is cut, so a message never spans lines or floods the terminal.
#include <cstdio>
#include <string>
#include <string_view>

namespace memcert::detail {

inline std::string printable_excerpt(std::string_view s, std::size_t max_chars = 40) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_chars) return out + "...";
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// What a message says of an input token instead of quoting it (messages never echo file contents: a
// text file given by mistake may hold secrets): its length, e.g. "a token of 12 bytes".
inline std::string token_of(std::string_view s, const char* what = "token") {
  return std::string("a ") + what + " of " + std::to_string(s.size()) + (s.size() == 1 ? " byte" : " bytes");
}

}  // namespace memcert::detail
