// libFuzzer: the checker's own JSON reader (src/checker/kernel/json.cpp) on arbitrary bytes. It must never
// throw, crash or recurse without bound; a parse either succeeds or names an offset.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/checker/kernel/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memcert_checker::json::Value v;
  std::string error;
  const bool ok = memcert_checker::json::parse(std::string(reinterpret_cast<const char*>(data), size), v, error);
  if (!ok && error.empty()) std::abort();  // a failure always says where
  return 0;
}
