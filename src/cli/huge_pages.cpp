// The memcert executable's allocation policy: large blocks are backed by transparent huge pages.
//
// Why: the commands' large buffers (an input matrix, its residues mod p, a Gram matrix) are each written
// once right after allocation, and on virtual machines the first touch of a fresh 4 KiB page costs a few
// microseconds — 0.1 s per 32 MB, as much as the certified rank of a 2000 x 2000 matrix. With 2 MiB pages
// the same first touch costs about a tenth of that. Most Linux systems run transparent huge pages in
// "madvise" mode, so the executable asks for them on its large blocks (MADV_HUGEPAGE on the 2 MiB-aligned
// interior of each block of at least 4 MiB). Nothing else changes: the memory still comes from malloc and
// is released by the default operator delete (free); madvise failing is harmless.
//
// Freed memory is kept for reuse rather than returned to the system (M_TRIM_THRESHOLD), and blocks up to
// glibc's largest mmap threshold (32 MiB: a 2000 x 2000 matrix of doubles) come from the heap, so a
// command's successive buffers of the same size (residues, then a Gram matrix) reuse the pages already
// touched instead of faulting in new ones.
//
// Only the executable replaces operator new: the libraries (and the Python module) leave their host's
// allocator alone. Sanitizer builds keep the sanitizer's own operator new.
#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define MEMCERT_NO_HUGE_PAGES 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMCERT_NO_HUGE_PAGES 1
#endif

#if !defined(MEMCERT_NO_HUGE_PAGES) && defined(MADV_HUGEPAGE)

namespace {

constexpr std::size_t kHugePage = std::size_t(1) << 21;
constexpr std::size_t kAdviseMin = std::size_t(4) << 20;

void* allocate_advised(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  if (n >= kAdviseMin) {
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const std::uintptr_t last = (begin + n) & ~(kHugePage - 1);
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  return p;
}

const bool kMallocPolicy = [] {
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();

}  // namespace

// The nothrow forms and the array forms' defaults in libstdc++ call these, and the default operator delete
// (free) matches malloc.
void* operator new(std::size_t n) { return allocate_advised(n); }
void* operator new[](std::size_t n) { return allocate_advised(n); }

#endif
