// Test-side: the CPU time this process has used, for the hang and bomb guards ("refused in well under the
// time inflating 1 GiB takes"). CPU time, not wall time: ctest runs suites in parallel on a shared machine,
// where a waiting process's wall clock runs on while its CPU time does not, so a wall-clock limit fails
// under load without any change in the work done; a CPU-time limit still fails when the work is done.
#pragma once
#include <ctime>

namespace memcert_test {

// Seconds of CPU (every thread of the process, user + system) since the process started.
inline double cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace memcert_test
