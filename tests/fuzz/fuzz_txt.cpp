// libFuzzer: the .txt matrix reader (through matrix_read, as the CLI calls it) on arbitrary bytes. Bad
// input must be an InputError; anything else is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/memcert_fuzz_" + std::to_string(::getpid()) + ".txt";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    (void)memcert::matrix_read(path);
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
