// The process-wide progress sink (progress.hpp).
#include "memcert/util/progress.hpp"

#include <atomic>
#include <mutex>

namespace memcert {

namespace {
ProgressSink g_sink;
std::atomic<bool> g_have_sink{false};
std::mutex g_mutex;
}  // namespace

void progress_set_sink(ProgressSink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sink = std::move(sink);
  g_have_sink.store(static_cast<bool>(g_sink));
}

void progress_report(const std::string& stage, std::size_t done, std::size_t total) {
  if (!g_have_sink.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) g_sink(stage, done, total);
}

}  // namespace memcert
