// libFuzzer: the whole checker (every kind, dispatched on the input's "kind") on arbitrary text, with a
// small budget so that an expensive certificate is answered "undecided" rather than checked. The
// verdict must be one of valid / rejected / malformed / undecided, with a reason unless valid; an
// exception escaping, a crash or the checker's catch-all "unexpected error" reason is a finding. The seed corpus (tests/fuzz/corpus/
// checker) holds an honest certificate of every kind.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "memcert/checker/checker.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memcert_checker::Budget budget;
  budget.max_seconds = 0.5;
  budget.max_bytes = 64.0 * 1024 * 1024;
  const auto v = memcert_checker::verify_certificate_text(std::string(reinterpret_cast<const char*>(data), size), budget);
  if (!v.valid && v.reason.empty()) std::abort();
  // The checker's own catch-all reason starts so; a reason that merely quotes the input (a malformed
  // number echoed back) may contain the words anywhere else.
  if (v.reason.rfind("undecided: unexpected error in the checker", 0) == 0) std::abort();
  return 0;
}
