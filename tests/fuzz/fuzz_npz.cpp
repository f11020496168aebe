// libFuzzer: the .npz reader on arbitrary bytes. Bad input must be an InputError (exit 2 in the CLI);
// any other exception, a crash or an allocation beyond what the bytes justify is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)memcert::npz_parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npz");
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
