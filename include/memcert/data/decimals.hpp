#pragma once
// What a decimal literal in a text file means (docs/FORMATS.md "Numbers"): `--decimals exact` (default)
// reads "0.1" in a .txt file or a JSON string as exactly 1/10; `--decimals double` reads it as the nearest
// double, as numpy's loadtxt does (so np.savetxt then np.save-d data agree). Fractions "p/q" and integers
// are exact in both modes; JSON number literals are doubles in both (the file contract). The readers count
// the literals whose meaning depends on the mode, so a command can say so in its summary.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "memcert/numeric/rational.hpp"

namespace memcert {

enum class DecimalMode { exact, nearest_double };
// Process-wide (a command reads its files under one mode); default exact.
void decimal_mode_set(DecimalMode m);
DecimalMode decimal_mode();

// Parses an exact-number token as rational_parse does, then, under nearest_double, rounds a decimal
// literal (one with '.' or an exponent) to the nearest double. Counts in decimal_stats() every decimal
// literal no double holds exactly (non-dyadic ones such as 0.1, and ones like 1e23 or 1e999): only those
// mean different numbers under the two modes. nullopt when `s` is not a number; throws
// std::overflow_error when nearest_double meets a literal beyond double range.
std::optional<Rational> decimal_parse(std::string_view s);

// Counts JSON number literals (not strings) with a fraction or exponent whose decimal value no double
// holds exactly (e.g. 0.1): they are taken as the nearest double in either mode.
void decimal_count_json_literal(std::string_view token);

struct DecimalStats {
  std::size_t inexact_text = 0;     // .txt tokens and JSON strings such as "0.1" that no double holds
  std::size_t inexact_json = 0;     // JSON number literals such as 0.1 (taken as the nearest double)
  std::string text_example, json_example;
};
const DecimalStats& decimal_stats();
void decimal_stats_reset();

// The one-line note a summary prints when decimal_stats() is non-zero ("" otherwise), e.g. "the input held
// 12 decimals that no double holds exactly, such as 0.1, taken exactly (e.g. 0.1 = 1/10); use --decimals double ...".
std::string decimal_note();

}  // namespace memcert
