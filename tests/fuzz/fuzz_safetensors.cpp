// libFuzzer: the .safetensors reader on arbitrary bytes. Bad input must be an InputError (exit 2 in
// the CLI); any other exception, a crash, a hang or an allocation beyond the limits is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memcert::StateDictLimits limits;
  limits.max_elements = std::uint64_t{1} << 20;
  try {
    (void)memcert::state_dict_parse_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors", limits);
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
