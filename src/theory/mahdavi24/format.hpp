#pragma once
// Small formatting helpers shared by the mahdavi24 sources: exact numbers as JSON strings (certificates)
// and short decimal renderings for the narration (never used for decisions).
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "memcert/linalg/matrix.hpp"

namespace memcert::mahdavi24::detail {

inline nlohmann::json qvec_json(const QVector& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const Rational& q : v) a.push_back(rational_to_string(q));
  return a;
}
inline nlohmann::json qmat_json(const QMatrix& m) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < m.rows(); ++i) a.push_back(qvec_json(QVector(m.row(i), m.row(i) + m.cols())));
  return a;
}
inline std::string fmt(double x) {
  std::ostringstream s;
  s.precision(4);
  s << x;
  return s.str();
}
inline std::string fmtq(const Rational& q) { return fmt(rational_to_double(q)); }

}  // namespace memcert::mahdavi24::detail
