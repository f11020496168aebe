#pragma once
// The engine's thread count: one process-wide setting (the CLI's --threads) read by every parallel
// kernel, from the readers' checksum pass to the eliminations. Results never depend on it.

namespace memcert {

// n >= 1 fixes the number of threads; 0 restores the default (all hardware threads).
void fast_set_threads(int n);
int fast_threads();

}  // namespace memcert
