// libFuzzer: the torch.save (.pt) reader on arbitrary bytes. Bad input must be an InputError (exit 2 in
// the CLI); any other exception, a crash, a hang or an allocation beyond the limits is a finding.
// An input starting with "PK" is the archive itself. Anything else is taken as data.pkl and wrapped in
// an archive with correct CRCs and four 256-byte storages "0".."3" (bytes 0 and 1, valid for every
// dtype), so that mutations reach the unpickler and the views instead of stopping at the CRC check.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

namespace {

std::string fuzz_pt_le(std::uint64_t v, int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}

std::string fuzz_pt_archive(const std::string& pkl) {
  std::vector<std::pair<std::string, std::string>> members = {{"f/data.pkl", pkl}};
  for (char k = '0'; k <= '3'; ++k) {
    std::string data(256, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 7 + static_cast<std::size_t>(k)) % 3 == 0);
    members.emplace_back(std::string("f/data/") + k, data);
  }
  std::string out, dir;
  for (const auto& [name, data] : members) {
    const auto crc = ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    const std::string common = fuzz_pt_le(20, 2) + fuzz_pt_le(0, 8) + fuzz_pt_le(crc, 4) + fuzz_pt_le(data.size(), 4) +
                               fuzz_pt_le(data.size(), 4) + fuzz_pt_le(name.size(), 2) + fuzz_pt_le(0, 2);
    dir += fuzz_pt_le(0x02014b50, 4) + fuzz_pt_le(20, 2) + common + fuzz_pt_le(0, 8) + fuzz_pt_le(0, 4) +
           fuzz_pt_le(out.size(), 4) + name;
    out += fuzz_pt_le(0x04034b50, 4) + common + name + data;
  }
  const std::size_t dir_at = out.size();
  return out + dir + fuzz_pt_le(0x06054b50, 4) + fuzz_pt_le(0, 4) + fuzz_pt_le(members.size(), 2) +
         fuzz_pt_le(members.size(), 2) + fuzz_pt_le(dir.size(), 4) + fuzz_pt_le(dir_at, 4) + fuzz_pt_le(0, 2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memcert::StateDictLimits limits;
  limits.max_elements = std::uint64_t{1} << 20;  // stride-0 views may declare any size: bound the output
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.compare(0, 2, "PK") != 0) bytes = fuzz_pt_archive(bytes);
  try {
    (void)memcert::state_dict_parse_pt(bytes, "fuzz.pt", limits);
  } catch (const memcert::InputError&) {
  } catch (...) {
    std::abort();
  }
  // Again with a screen as an architecture's: keys named extra* and tensors of more than 2^16 elements
  // refused from their headers. The screen runs once, before any tensor is materialized, and its refusal
  // is the reader's answer.
  int screened = 0;
  limits.screen = [&](const memcert::StateDict& headers) {
    ++screened;
    for (const auto& [key, t] : headers.entries()) {
      if (!t.f64.empty() || !t.i64.empty()) std::abort();  // headers carry no values
      std::uint64_t n = 1;
      for (std::size_t s : t.shape) n = s != 0 && n > (std::uint64_t{1} << 16) / s ? (std::uint64_t{1} << 17) : n * s;
      if (key.rfind("extra", 0) == 0 || n > (std::uint64_t{1} << 16)) throw memcert::InputError("fuzz.pt: screened");
    }
  };
  try {
    (void)memcert::state_dict_parse_pt(bytes, "fuzz.pt", limits);
    if (screened != 1) std::abort();
  } catch (const memcert::InputError&) {
    if (screened > 1) std::abort();
  } catch (...) {
    std::abort();
  }
  return 0;
}
