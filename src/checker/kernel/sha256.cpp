// SHA-256 (FIPS 180-4) and the digest of attention data referenced by a certificate (checker.hpp).
#include "kernel/sha256.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "memcert/checker/checker.hpp"

namespace memcert_checker {
namespace {
constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
inline std::uint32_t rotr(std::uint32_t x, int k) { return (x >> k) | (x << (32 - k)); }
}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}, buf_{} {}

void Sha256::block(const unsigned char* p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 | std::uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d; h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
// The SHA extensions (CPUID leaf 7, EBX bit 29) with SSSE3 / SSE4.1 (leaf 1, ECX bits 9 and 19).
bool have_sha_ni() {
  unsigned a, b, c, d;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
  if (a < 7) return false;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  const bool sse = (c >> 9 & 1) && (c >> 19 & 1);
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
  return sse && (b >> 29 & 1);
}
const bool kShaNi = have_sha_ni();

// FIPS 180-4's compression of `count` 64-byte blocks with the SHA-NI instructions (the same function as
// Sha256::block; state order a..h). Four rounds per group: W_i = msg2(msg1(W_{i-4}, W_{i-3}) +
// alignr(W_{i-1}, W_{i-2}), W_{i-1}) is the message schedule, rnds2 two rounds at a time.
__attribute__((target("sha,sse4.1,ssse3"))) void blocks_sha_ni(std::uint32_t* h, const unsigned char* p, std::size_t count) {
  const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[0]));
  __m128i s1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[4]));
  tmp = _mm_shuffle_epi32(tmp, 0xB1);        // CDAB
  s1 = _mm_shuffle_epi32(s1, 0x1B);          // EFGH
  __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);  // ABEF
  s1 = _mm_blend_epi16(s1, tmp, 0xF0);       // CDGH
  for (; count > 0; --count, p += 64) {
    const __m128i save0 = s0, save1 = s1;
    __m128i w[4];
    for (int i = 0; i < 16; ++i) {
      __m128i& wi = w[i & 3];
      if (i < 4) {
        wi = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), mask);
      } else {
        const __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]),
                                        _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
        wi = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
      }
      __m128i m = _mm_add_epi32(wi, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kK[4 * i])));
      s1 = _mm_sha256rnds2_epu32(s1, s0, m);
      m = _mm_shuffle_epi32(m, 0x0E);
      s0 = _mm_sha256rnds2_epu32(s0, s1, m);
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
  }
  tmp = _mm_shuffle_epi32(s0, 0x1B);         // FEBA
  s1 = _mm_shuffle_epi32(s1, 0xB1);          // DCHG
  s0 = _mm_blend_epi16(tmp, s1, 0xF0);       // DCBA
  s1 = _mm_alignr_epi8(s1, tmp, 8);          // ABEF -> HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[0]), s0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[4]), s1);
}
}  // namespace
#endif

void Sha256::blocks(const unsigned char* p, std::size_t count) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (kShaNi && !checker_portable()) { blocks_sha_ni(h_, p, count); return; }
#endif
  for (; count > 0; --count, p += 64) block(p);
}

void Sha256::update(const void* data, std::size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  total_ += bytes;
  if (fill_ > 0) {  // complete the buffered block first
    const std::size_t take = std::min<std::size_t>(64 - fill_, bytes);
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take; p += take; bytes -= take;
    if (fill_ == 64) { blocks(buf_, 1); fill_ = 0; }
  }
  if (bytes >= 64) {  // whole blocks straight from the input
    blocks(p, bytes / 64);
    p += bytes / 64 * 64;
    bytes %= 64;
  }
  while (bytes > 0) {
    const std::size_t take = std::min<std::size_t>(64 - fill_, bytes);
    std::memcpy(buf_ + fill_, p, take);
    fill_ += take; p += take; bytes -= take;
    if (fill_ == 64) { blocks(buf_, 1); fill_ = 0; }
  }
}

std::string Sha256::hex() {
  const std::uint64_t bits = total_ * 8;
  const unsigned char one = 0x80, zero = 0;
  update(&one, 1);
  while (fill_ != 56) update(&zero, 1);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  update(len, 8);
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (std::uint32_t v : h_)
    for (int k = 28; k >= 0; k -= 4) s += kHex[(v >> k) & 15];
  return s;
}

AttentionDigest::AttentionDigest(std::size_t T, std::size_t n, std::size_t d, int version) : sha_(std::make_unique<Sha256>()) {
  const std::string head = std::string(version == 1 ? "memcert-attention-v1 " : "memcert-attention-v2 ") + std::to_string(T) +
                           " " + std::to_string(n) + " " + std::to_string(d);
  sha_->update(head.data(), head.size());
}

void AttentionDigest::add_text(const std::string& text) { sha_->update(text.data(), text.size()); }
AttentionDigest::~AttentionDigest() = default;

namespace {
// Values as IEEE-754 binary64 bit patterns in little-endian byte order, whatever the host's, so a digest
// is portable; -0 and +0 are the same value.
void add_binary64(Sha256& sha, const double* v, std::size_t count) {
  unsigned char buf[8 * 512];
  while (count > 0) {
    const std::size_t k = std::min<std::size_t>(count, 512);
    for (std::size_t i = 0; i < k; ++i) {
      std::uint64_t u;
      std::memcpy(&u, &v[i], 8);
      if (v[i] == 0) u = 0;
      for (int b = 0; b < 8; ++b) buf[8 * i + b] = static_cast<unsigned char>(u >> (8 * b));
    }
    sha.update(buf, 8 * k);
    v += k; count -= k;
  }
}
}  // namespace

void AttentionDigest::add(const double* v, std::size_t count) { add_binary64(*sha_, v, count); }

void AttentionDigest::add(const float* v, std::size_t count) {
  double wide[512];
  while (count > 0) {  // the same values widened (exactly), a block at a time
    const std::size_t k = std::min<std::size_t>(count, 512);
    for (std::size_t i = 0; i < k; ++i) wide[i] = v[i];
    add(wide, k);
    v += k; count -= k;
  }
}

std::string AttentionDigest::finish() { return "sha256:" + sha_->hex(); }

namespace {
std::string digest_of(const AttentionArrays& a, std::size_t T, int version) {
  AttentionDigest g(T, a.n, a.d, version);
  if (a.contexts_f32.empty()) g.add(a.contexts.data(), T * a.n * a.d);
  else g.add(a.contexts_f32.data(), T * a.n * a.d);
  g.add(a.queries.data(), T * a.d);
  if (version >= 2) g.add_text(attention_labels_digest_text(a, T));
  return g.finish();
}
}  // namespace

std::string attention_labels_digest_text(const AttentionArrays& a, std::size_t T) {
  std::string s;
  switch (a.label_kind) {
    case AttentionArrays::Labels::none: return "labels none";
    case AttentionArrays::Labels::classes:
      s = "labels classes";
      for (std::size_t t = 0; t < T; ++t) {
        s += ' ';
        s += std::to_string(a.classes.at(t));
      }
      return s;
    case AttentionArrays::Labels::real:
      s = "labels real ";
      s += std::to_string(a.d_out);
      for (std::size_t i = 0; i < T * a.d_out; ++i) {
        s += ' ';
        s += a.labels.at(i);
      }
      return s;
  }
  return s;
}

std::string attention_arrays_digest(const AttentionArrays& a, std::size_t T) { return digest_of(a, T, 2); }
std::string attention_arrays_digest_v1(const AttentionArrays& a, std::size_t T) { return digest_of(a, T, 1); }

std::string tensors_digest(const std::vector<NamedArray>& arrays) {
  std::vector<const NamedArray*> order;
  for (const NamedArray& a : arrays) {
    if (a.name.find('\n') != std::string::npos) return "";
    std::size_t numel = 1;
    for (std::size_t k : a.shape) numel *= k;
    if (numel != a.size()) return "";
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!std::isfinite(a.value(i))) return "";
    order.push_back(&a);
  }
  std::sort(order.begin(), order.end(), [](const NamedArray* x, const NamedArray* y) { return x->name < y->name; });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->name == order[i]->name) return "";
  Sha256 sha;
  const std::string head = "memcert-tensors-v1 " + std::to_string(order.size()) + "\n";
  sha.update(head.data(), head.size());
  double wide[512];
  for (const NamedArray* a : order) {
    std::string h = a->name;
    h += '\n';
    h += std::to_string(a->shape.size());
    for (std::size_t k : a->shape) {
      h += ' ';
      h += std::to_string(k);
    }
    h += '\n';
    sha.update(h.data(), h.size());
    if (a->values_f32.empty()) {
      add_binary64(sha, a->values.data(), a->values.size());
      continue;
    }
    for (std::size_t i = 0; i < a->size();) {  // float32 widened exactly, a block at a time
      const std::size_t k = std::min<std::size_t>(a->size() - i, 512);
      for (std::size_t j = 0; j < k; ++j) wide[j] = a->values_f32[i + j];
      add_binary64(sha, wide, k);
      i += k;
    }
  }
  return "sha256:" + sha.hex();
}

}  // namespace memcert_checker
