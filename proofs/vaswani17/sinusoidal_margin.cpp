// How robust is the full rank of the sinusoidal encodings? Not at all: the float64 matrix P (n <= d) has
// sigma_min(P) <= delta with delta ~ 1e-15, certified by an exact rational vector u with
// ||u^T P||_2 <= delta ||u||_2 (Rayleigh quotient: sigma_min(P)^2 <= ||u^T P||^2 / ||u||^2). Then
// B = P - u (u^T P) / ||u||^2 satisfies u^T B = 0, so a rank-deficient matrix lies within 2-norm distance
// delta of P: the full rank certified by vaswani17/sinusoidal-full-rank exists only at the level of float64
// rounding, and no enclosure of the exact (real) encoding wider than delta can certify its rank.
// Boundary claim: it refutes "the encodings keep full rank under every perturbation of 2-norm 1e-12".
#include <Eigen/Dense>

#include "memcert/linalg/fmat/eigen_svd.hpp"

#include "../common.hpp"
#include "memcert/proofs/positional_encoding.hpp"
#include "pe_instances.hpp"

namespace memcert::proofs {
namespace vaswani17_sinusoidal_margin {
using namespace detail;
using vaswani17::PEInstance;

// The perturbation size the naive robustness statement allows: delta^2 <= 1e-24 (delta <= 1e-12).
const Rational kDelta2Max(Integer(1), Integer("1000000000000000000000000"));

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const PEInstance&>(inst.data);
  std::vector<double> f = sinusoidal_encoding(in.n, in.d);
  Eigen::MatrixXd P(in.n, in.d);
  for (std::size_t i = 0; i < in.n; ++i)
    for (std::size_t j = 0; j < in.d; ++j) P(i, j) = f[i * in.d + j];
  // Candidate u: the left singular vector of the smallest singular value (a double estimate; the bound
  // below is then computed exactly for this u, whatever its accuracy).
  Eigen::BDCSVD<Eigen::MatrixXd> svd(P, Eigen::ComputeThinU);
  Eigen::VectorXd ud = svd.matrixU().col(in.n - 1);
  QVector u(in.n);
  for (std::size_t i = 0; i < in.n; ++i) u[i] = rational_from_double(ud(i));
  QMatrix Pq = sinusoidal_encoding_exact(in.n, in.d);
  Rational num = 0, den = 0;
  for (std::size_t j = 0; j < in.d; ++j) {
    Rational s = 0;
    for (std::size_t i = 0; i < in.n; ++i) s += u[i] * Pq(i, j);
    num += s * s;
  }
  for (const auto& x : u) den += x * x;
  Rational delta2 = num / den;  // exact: sigma_min(P)^2 <= delta2
  Rational d2 = rational_round_to_bits(delta2, 20);
  if (d2 < delta2) d2 *= Rational(Integer(1048577), Integer(1048576));  // short and >= delta2
  InstanceResult r;
  double delta_up = std::sqrt(rational_to_double_up(d2));
  r.figures = {{"n", in.n}, {"d", in.d}, {"sigma_min_upper", delta_up},
               {"sigma_max_estimate", svd.singularValues()(0)}};
  if (d2 > kDelta2Max) {
    r.outcome = Outcome::confirmed;
    r.summary = "sigma_min upper bound " + std::to_string(delta_up) + " is above 1e-12";
    return r;
  }
  nlohmann::json c = claim_cert("vaswani17/sinusoidal-rank-margin");
  c["matrix"] = qmat_to_json(Pq);
  c["u"] = qvec_to_json(u);
  c["delta2"] = jq(d2);
  c["verdict"] = "counterexample";
  r.certificate = c;
  r.outcome = Outcome::counterexample;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", delta_up);
  r.summary = std::to_string(in.n) + " x " + std::to_string(in.d) + " float64 encoding: sigma_min <= " + buf +
              " (exact rational u, ||u^T P|| <= delta ||u||): a rank-deficient matrix within 2-norm " + buf;
  r.witness = {{"delta_upper", delta_up}, {"delta2", rational_to_string(d2)}};
  return r;
}

ClaimRegistrar reg{Claim{
    "vaswani17/sinusoidal-rank-margin",
    "The full rank of the float64 sinusoidal encodings is not robust: a rank-deficient matrix lies within "
    "2-norm distance <= 1e-12 of each (instances 0-2 small, 3 is 197 x 768, 4 is 512 x 768).",
    "an exact rational vector u (from a double SVD) with ||u^T P||^2 <= delta^2 ||u||^2 computed exactly, "
    "delta^2 <= 1e-24; the checker recomputes both sums",
    Expect::counterexample, "sinusoidal encodings keep full rank under every perturbation of 2-norm 1e-12", 3,
    vaswani17::pe_generate, check}};

}  // namespace
}  // namespace memcert::proofs
