#pragma once
// Test helpers for suites that drive the memcert binary (ctest sets MEMCERT_BIN): read a file whole, and
// run one command line with its output discarded.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace memcert_test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True when `memcert ARGS` exits 0.
inline bool run(const std::string& args) {
  const int s = std::system((std::string(std::getenv("MEMCERT_BIN")) + " " + args + " >/dev/null 2>&1").c_str());
  return s == 0;
}

}  // namespace memcert_test
