// The blocked elimination for the build's baseline instruction set, as modp_dense.cpp's "default" clone
// (x86-64: SSE2, no FMA), callable as modp_dense_copies::x86_64().
#define MODP_DENSE_TARGETS
#include "kernel/modp_dense_blocked.hpp"
#include "modp_dense_copies.hpp"

MODP_DENSE_COPY(x86_64, "x86-64", true)
