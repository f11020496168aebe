// libFuzzer: the .safetensors reader on arbitrary bytes. Bad input must be an InputError (exit 2 in
// the CLI); any other exception, a crash, a hang or an allocation beyond the limits is a finding.
// An input starting with '{' is "header JSON, a NUL byte, data", given its 8-byte length here, so that
// mutations of the JSON do not all stop at a wrong header length.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memcert::StateDictLimits limits;
  limits.max_elements = std::uint64_t{1} << 20;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == '{') {
    const std::size_t nul = bytes.find('\0');
    const std::string header = bytes.substr(0, nul);
    std::string len;
    for (int k = 0; k < 8; ++k) len += static_cast<char>((header.size() >> (8 * k)) & 0xff);
    bytes = len + header + (nul == std::string::npos ? std::string() : bytes.substr(nul + 1));
  }
  try {
    (void)memcert::state_dict_parse_safetensors(bytes, "fuzz.safetensors", limits);
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
