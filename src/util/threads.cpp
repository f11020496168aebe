#include "memcert/util/threads.hpp"

#include <atomic>
#include <thread>

namespace memcert {

namespace {
std::atomic<int> g_threads{0};
}

void fast_set_threads(int n) { g_threads = n < 0 ? 0 : n; }
int fast_threads() {
  int t = g_threads.load();
  if (t > 0) return t;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace memcert
