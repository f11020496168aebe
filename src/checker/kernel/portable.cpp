// The checker's portable mode (checker.hpp): one switch, read from the environment once.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "memcert/checker/checker.hpp"

namespace memcert_checker {
namespace {
bool from_environment() {
  const char* v = std::getenv("MEMCERT_CHECKER_PORTABLE");
  return v && std::strcmp(v, "1") == 0;
}
std::atomic<bool>& mode() {
  static std::atomic<bool> m{from_environment()};
  return m;
}
}  // namespace

bool checker_portable() { return mode().load(std::memory_order_relaxed); }
void set_checker_portable(bool on) { mode().store(on, std::memory_order_relaxed); }

}  // namespace memcert_checker
