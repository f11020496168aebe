#pragma once
// The members of a zip archive whose members are stored (not compressed), as torch.save writes them:
// the central directory (zip64 records included) is walked with every count, offset and size checked
// against the file before use; a member's data must lie inside the file; at most 2^20 members.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model_bytes.hpp"

namespace memcert::detail {

struct ZipMember {
  std::string name;
  std::uint64_t data_at = 0;  // offset of the member's bytes in the file
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
  bool stored = true;  // compression method 0
};

class ZipStored {
 public:
  // The directory of `bytes`; InputError naming the byte when it is not a well-formed zip archive.
  // `what` names the expected kind of file in messages ("a torch.save archive").
  ZipStored(const ModelBytes& bytes, const std::string& what);
  const std::vector<ZipMember>& members() const { return members_; }
  // The member named `name`, or nullptr.
  const ZipMember* find(const std::string& name) const;
  // Checks that `m` is stored and that its CRC-32 is right (read in chunks; once per member).
  void verify(const ZipMember& m) const;
  // Bytes [at, at + n) of member `m` (range-checked; verify(m) first).
  void read(const ZipMember& m, std::uint64_t at, std::size_t n, void* dst) const;

 private:
  const ModelBytes& bytes_;
  std::vector<ZipMember> members_;
  std::map<std::string, std::size_t> index_;
  mutable std::vector<bool> verified_;
};

}  // namespace memcert::detail
