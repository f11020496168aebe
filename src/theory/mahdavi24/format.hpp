#pragma once
// Small formatting helpers shared by the mahdavi24 sources: short decimal renderings for the narration
// (never used for decisions) and short dyadic roundings of exact numbers. Exact numbers go to JSON through qvec_to_json / qmat_to_json (matrix_io.hpp).
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert::mahdavi24::detail {

inline std::string fmt(double x) {
  std::ostringstream s;
  s.precision(4);
  s << x;
  return s.str();
}
inline std::string fmtq(const Rational& q) { return fmt(rational_to_double(q)); }

// x rounded up (or down) to a dyadic with `bits` significant bits (x > 0; 0 otherwise): short exact
// numbers for the scales memcert reports.
Rational round_dyadic(const Rational& x, int bits, bool up);

}  // namespace memcert::mahdavi24::detail
