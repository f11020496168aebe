// Decimal literals under --decimals exact|double (include/memcert/data/decimals.hpp).
#include "memcert/data/decimals.hpp"

#include <atomic>
#include <cmath>
#include <mutex>
#include <stdexcept>

namespace memcert {

namespace {
std::atomic<DecimalMode> g_mode{DecimalMode::exact};
std::mutex g_stats_mutex;  // readers may run on several threads
DecimalStats g_stats;

bool is_decimal_literal(std::string_view s) {
  return s.find('/') == std::string_view::npos && s.find_first_of(".eE") != std::string_view::npos;
}
std::string excerpt(std::string_view s) { return std::string(s.substr(0, 40)); }
}  // namespace

void decimal_mode_set(DecimalMode m) { g_mode.store(m); }
DecimalMode decimal_mode() { return g_mode.load(); }

std::optional<Rational> decimal_parse(std::string_view s) {
  std::optional<Rational> q = rational_parse(s);
  if (!q || !is_decimal_literal(s)) return q;
  const double x = rational_to_double(*q);  // round to nearest (MPFR)
  if (std::isfinite(x) && rational_from_double(x) == *q) return q;  // a double holds it: both modes agree
  {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    if (g_stats.inexact_text++ == 0) g_stats.text_example = excerpt(s);
  }
  if (decimal_mode() == DecimalMode::exact) return q;
  if (!std::isfinite(x)) throw std::overflow_error("beyond double range");
  return rational_from_double(x);
}

void decimal_count_json_literal(std::string_view token) {
  std::optional<Rational> q = rational_parse(token);
  if (!q || !is_decimal_literal(token)) return;
  const double x = rational_to_double(*q);
  if (std::isfinite(x) && rational_from_double(x) == *q) return;
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  if (g_stats.inexact_json++ == 0) g_stats.json_example = excerpt(token);
}

const DecimalStats& decimal_stats() { return g_stats; }
void decimal_stats_reset() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  g_stats = DecimalStats{};
}

std::string decimal_note() {
  std::string note;
  const DecimalStats& s = g_stats;
  if (s.inexact_text > 0) {
    note = "the input held " + std::to_string(s.inexact_text) + " decimal" + (s.inexact_text > 1 ? "s" : "") +
           " that no double holds exactly, such as " + s.text_example +
           (decimal_mode() == DecimalMode::exact
                ? ", taken exactly (e.g. 0.1 = 1/10); use --decimals double for the nearest doubles (as numpy reads them)"
                : ", taken as the nearest doubles (--decimals double)");
  }
  if (s.inexact_json > 0) {
    if (!note.empty()) note += "; ";
    note += "the input held " + std::to_string(s.inexact_json) + " JSON number literal" + (s.inexact_json > 1 ? "s" : "") +
            " such as " + s.json_example +
            " that no double holds exactly, taken as the nearest doubles (JSON numbers are doubles; write \"0.1\" as a "
            "string for exactly 1/10)";
  }
  return note;
}

}  // namespace memcert
