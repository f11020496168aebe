#pragma once
// Instances shared by the vaswani17 claims: instance i uses kSizes[i % 5], small sizes first (tests), then
// ViT-B (197 x 768) and BERT (512 x 768).
#include <cstdint>

#include "memcert/proofs/registry.hpp"

namespace memcert::proofs::vaswani17 {

inline constexpr std::size_t kSizes[][2] = {{16, 32}, {50, 64}, {64, 64}, {197, 768}, {512, 768}};

struct PEInstance {
  std::size_t n, d;
};

inline Instance pe_generate(std::uint64_t, std::size_t index) {
  const auto& s = kSizes[index % 5];
  Instance inst;
  inst.params = {{"n", s[0]}, {"d", s[1]}};
  inst.data = PEInstance{s[0], s[1]};
  return inst;
}

}  // namespace memcert::proofs::vaswani17
