// Memory: returning freed heap memory to the operating system between the stages of a long
// construction, and the default memory budget of a command.
#pragma once

namespace memcert {

// Hands every whole free page of the allocator's heaps back to the system (glibc's malloc_trim; a no-op
// elsewhere). Why: a stage that frees many small objects (Theorem 1's kept logits) or blocks carved from
// the heap (the executable keeps blocks up to 32 MiB there, huge_pages.cpp) leaves those pages resident,
// and the next stage's fresh allocations would add to the peak instead of reusing them. Costs a walk
// over the free lists (milliseconds); call it after a large release, not in loops.
void release_free_memory();

// The default memory budget of a command (--max-memory, in MB = 2^20 bytes): 75% of the machine's
// physical memory (MemTotal in /proc/meminfo, else sysconf's page count), rounded down to whole MB;
// 4096 when neither is available. `verify` keeps its own fixed default (4096 MB).
double default_memory_budget_mb();

}  // namespace memcert
