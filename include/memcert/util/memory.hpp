// Returning freed heap memory to the operating system between the stages of a long construction.
#pragma once

namespace memcert {

// Hands every whole free page of the allocator's heaps back to the system (glibc's malloc_trim; a no-op
// elsewhere). Why: a stage that frees many small objects (Theorem 1's kept logits) or blocks carved from
// the heap (the executable keeps blocks up to 32 MiB there, huge_pages.cpp) leaves those pages resident,
// and the next stage's fresh allocations would add to the peak instead of reusing them. Costs a walk
// over the free lists (milliseconds); call it after a large release, not in loops.
void release_free_memory();

}  // namespace memcert
