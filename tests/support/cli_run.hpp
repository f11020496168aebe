#pragma once
// Test helpers for suites that drive the memcert binary (ctest sets MEMCERT_BIN): read a file whole, run
// one command line with its output discarded, and a scratch directory of this process's own.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

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

// The scratch directories of this process, removed when it exits unless kept (keep_scratch).
struct ScratchDirs {
  std::map<std::string, bool> keep;
  ~ScratchDirs() {
    for (const auto& [dir, kept] : keep) {
      std::error_code ec;
      if (!kept) std::filesystem::remove_all(dir, ec);
    }
  }
};
inline ScratchDirs& scratch_dirs() {
  static ScratchDirs dirs;
  return dirs;
}

// A fresh directory for this process's scratch files, in the system's temporary directory (never the
// working directory, never shared: ctest runs suites in parallel, and the same suite may run twice at once).
// Removed at exit.
inline std::string scratch_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("memcert_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  scratch_dirs().keep[d.string()] = false;
  return d.string();
}

// Keeps a scratch directory after exit (it holds a file kept for reproducing a failure).
inline void keep_scratch(const std::string& dir) { scratch_dirs().keep[dir] = true; }

}  // namespace memcert_test
