#pragma once
// The one Catch2 include of every test file: Catch2 v3 when tests/CMakeLists.txt found it (it defines
// MEMCERT_CATCH2_V3), else Catch2 v2's single header. The suites use only macros common to both.
#ifdef MEMCERT_CATCH2_V3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
