#pragma once
// Builds certificate JSON text for the checker tests (deliberately by hand, not with the engine's
// writers, so the tests pin the agreed format independently).
#include <gmpxx.h>

#include <string>
#include <vector>

#include "memcert/checker/checker.hpp"

namespace cert_text {

using SMat = std::vector<std::vector<std::string>>;

inline std::string q(const std::string& s) { return "\"" + s + "\""; }

inline std::string strings(const std::vector<std::string>& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) o += ',';
    o += q(v[i]);
  }
  return o + "]";
}

inline std::string ints(const std::vector<std::size_t>& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) o += ',';
    o += std::to_string(v[i]);
  }
  return o + "]";
}

inline std::string matrix(const SMat& a, std::size_t cols_if_empty = 0) {
  std::size_t cols = a.empty() ? cols_if_empty : a[0].size();
  std::string o = "{\"rows\":" + std::to_string(a.size()) + ",\"cols\":" + std::to_string(cols) + ",\"data\":[";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i) o += ',';
    o += strings(a[i]);
  }
  return o + "]}";
}

inline SMat to_strings(const std::vector<std::vector<mpq_class>>& a) {
  SMat s(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (const auto& x : a[i]) s[i].push_back(x.get_str());
  return s;
}

// Checks and returns the verdict; `accepted(text)` is the common case in assertions.
inline memcert_checker::Verdict check(const std::string& text) { return memcert_checker::verify_certificate_text(text); }

// Replaces the first occurrence of `from` by `to` (the test must make sure `from` occurs).
inline std::string replace_first(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

}  // namespace cert_text
