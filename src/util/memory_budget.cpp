// The default memory budget of a command (memory.hpp).
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "memcert/util/memory.hpp"

namespace memcert {

double default_memory_budget_mb() {
  double bytes = 0;
  std::ifstream f("/proc/meminfo");
  for (std::string line; bytes == 0 && std::getline(f, line);) {
    std::istringstream in(line);
    std::string key, unit;
    double kb = 0;
    if (in >> key >> kb >> unit && key == "MemTotal:" && unit == "kB" && kb > 0) bytes = kb * 1024;
  }
  if (bytes == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) bytes = double(pages) * double(page);
  }
  if (!(bytes > 0)) return 4096;
  return std::floor(0.75 * bytes / 1048576.0);
}

}  // namespace memcert
