#pragma once
// SHA-256 (FIPS 180-4), the checker's own: the digest that ties a certificate to a data file it names
// (docs/CERTIFICATES.md "Data by reference"). An identity of the data, never evidence for a verdict.
#include <cstdint>
#include <string>

namespace memcert_checker {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  std::string hex();  // finishes the digest: 64 lower-case hex digits (call once)

 private:
  void block(const unsigned char* p);
  void blocks(const unsigned char* p, std::size_t count);  // SHA-NI when the CPU has it (not in portable mode)
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t fill_ = 0;
  std::uint64_t total_ = 0;  // bytes
};

}  // namespace memcert_checker
