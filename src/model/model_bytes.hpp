#pragma once
// A model file's bytes, read by position: a regular file through pread (a large file is never copied
// whole into memory), or bytes already in memory (tests, fuzzing, a pipe). Every read is range-checked.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace memcert::detail {

class ModelBytes {
 public:
  // The file at `path`: a regular file is read in place, anything else (a pipe) read whole, bounded.
  static ModelBytes open(const std::string& path);
  // `bytes` (kept by reference: must outlive this object), named `name` in messages.
  ModelBytes(const std::string& bytes, std::string name);
  ModelBytes(ModelBytes&&) noexcept;
  ModelBytes& operator=(ModelBytes&&) noexcept;
  ~ModelBytes();

  std::uint64_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Bytes [at, at + n) into dst; InputError "<name>: byte <at>: ..." when they run past the end.
  void read(std::uint64_t at, std::size_t n, void* dst, const char* what) const;
  // The same as a string.
  std::string read_string(std::uint64_t at, std::size_t n, const char* what) const;
  // An unsigned little-endian integer of `width` (<= 8) bytes at `at`.
  std::uint64_t le(std::uint64_t at, std::size_t width, const char* what) const;

 private:
  ModelBytes() = default;
  const std::string* bytes_ = nullptr;
  std::unique_ptr<std::string> owned_;  // a non-regular file read whole
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string name_;
};

}  // namespace memcert::detail
