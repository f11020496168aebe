// The numerical-rank report shared by the rank-type commands: the --tol option and the warning shown
// when the certified exact rank of the stored numbers differs from their numerical rank.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "command.hpp"
#include "memcert/linalg/fmat/numerical_rank.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {

std::optional<double> numerical_tol_option(const std::string& tol) {
  if (tol.empty() || tol == "default") return std::nullopt;
  char* end = nullptr;
  double x = std::strtod(tol.c_str(), &end);
  if (end == tol.c_str() || *end != '\0' || !std::isfinite(x) || x < 0)
    throw InputError("--tol: expected a finite number >= 0 or \"default\", got " + tol);
  return x;
}

std::string double_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

std::string exact_text(const std::string& exact) {
  if (exact.find('/') == std::string::npos) return exact;
  const std::optional<Rational> q = rational_parse(exact);
  if (!q) return exact;
  // Through mpf (its exponent range is GMP's), so 1/10^400 is "~1e-400", never 0 or inf.
  mpf_class f(0, 64);
  f = *q;
  char buf[64];
  gmp_snprintf(buf, sizeof buf, "%.3Fg", f.get_mpf_t());
  return exact + " (~" + buf + ")";
}

std::string numerical_rank_warning(std::size_t exact, const NumericalRank& nr, const std::string& what) {
  std::string s = "exact " + what + " " + std::to_string(exact) + " of the stored values; numerical rank " +
                  std::to_string(nr.rank) + " at tol " + double_text(nr.tol) + ": ";
  if (nr.rank < exact)
    return s + "the exact answer counts directions as small as rounding noise (float data are taken exactly); "
               "if the values carry rounding error, the numerical rank is the meaningful one";
  return s + "singular values at or below tol hide independent directions that the exact computation resolves";
}

}  // namespace memcert::cli
