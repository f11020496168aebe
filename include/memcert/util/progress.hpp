#pragma once
// Progress of long computations: library code reports (stage, done, total) here, and whoever drives the
// library (the CLI: a bar with ETA on a terminal, a line per stage otherwise) installs the sink once.
// Without a sink reporting costs one atomic load.
#include <cstddef>
#include <functional>
#include <string>

namespace memcert {

using ProgressSink = std::function<void(const std::string& stage, std::size_t done, std::size_t total)>;

// Installs the process-wide sink (empty: none). Not to be called while computations report.
void progress_set_sink(ProgressSink sink);

// `done` of `total` units of `stage` are finished. Safe to call from any thread (the sink is called
// under a lock, so it need not be thread-safe itself).
void progress_report(const std::string& stage, std::size_t done, std::size_t total);

// progress_report for loops with many cheap steps: reports only about every 1/200 of `total` (and the
// last step), so the lock is not taken per step.
inline void progress_tick(const char* stage, std::size_t done, std::size_t total) {
  std::size_t every = total / 200 + 1;
  if (done % every == 0 || done == total) progress_report(stage, done, total);
}

}  // namespace memcert
