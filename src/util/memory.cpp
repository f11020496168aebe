#include "memcert/util/memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace memcert {

void release_free_memory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace memcert
