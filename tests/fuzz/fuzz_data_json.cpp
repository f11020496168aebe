// libFuzzer: the engine's JSON data reader (json_parse_text, the 64-bit integer literal check and the
// matrix object reader) on arbitrary text. Bad input must be an InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json j = memcert::json_parse_text(text, "fuzz.json");
    memcert::json_check_integer_literals(text, "fuzz.json");
    (void)memcert::json_matrix_to_qmat(j, "fuzz.json", "");
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
