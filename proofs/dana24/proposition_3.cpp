// dana24 Proposition 3: under Assumption 1 (point-mass conditionals) and d >= 2, sequence encoders reach
// d_KL -> 0. The paper's encoder uses the circle points (cos 2 pi i/N, sin 2 pi i/N); memcert uses rational
// points of the unit circle W_j = ((1-s_j^2)/(1+s_j^2), 2 s_j/(1+s_j^2)) so that delta = min (1 - W_j.W_k)
// is exact, and certifies d_KL(pi, f_lambda) <= (N - 1) exp(-lambda delta) for growing lambda.
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_proposition_3 {
using namespace dana24_detail;

struct Prop3Instance {
  dana24::AssocData data;
  QVector s;
  Rational lambda;
};

Instance generate(std::uint64_t seed, std::size_t index) {
  static const long lambdas[] = {4, 64, 1024};
  const std::size_t N = 7;
  Prop3Instance in{dana24::assoc_data_generate(N, 2, 12, seed, false), {}, Rational(lambdas[index % 3])};
  for (long j = 0; j < static_cast<long>(N); ++j) in.s.push_back(Rational(j - 3, 2));  // -3/2 .. 3/2, distinct
  Instance inst;
  inst.params = {{"N", N}, {"S", 2}, {"d", 2}, {"T", in.data.T()}, {"lambda", lambdas[index % 3]}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const Prop3Instance&>(inst.data);
  const std::size_t N = in.data.N;
  std::vector<Rational> wx(N), wy(N);
  for (std::size_t j = 0; j < N; ++j) {
    const Rational den = 1 + in.s[j] * in.s[j];
    wx[j] = (1 - in.s[j] * in.s[j]) / den, wy[j] = 2 * in.s[j] / den;
  }
  Rational delta = 2;
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t k = 0; k < N; ++k)
      if (j != k) delta = std::min(delta, Rational(1 - (wx[j] * wx[k] + wy[j] * wy[k])));
  const double lam = rational_to_double(in.lambda), dl = rational_to_double(delta);
  double kl = 0;  // estimate for the report; the checker certifies the inequality
  for (std::size_t t = 0; t < in.data.T(); ++t) {
    const std::size_t g = in.data.next[t];
    double x = 0;
    for (std::size_t j = 0; j < N; ++j)
      if (j != g) x += std::exp(-lam * rational_to_double(1 - (wx[j] * wx[g] + wy[j] * wy[g])));
    kl += std::log1p(x);
  }
  kl /= static_cast<double>(in.data.T());
  InstanceResult out;
  out.figures = {{"delta", rational_to_string(delta)}, {"kl_estimate", kl},
                 {"bound", static_cast<double>(N - 1) * std::exp(-lam * dl)}};
  nlohmann::json c = claim_base("dana24/proposition-3", "confirmed", in.data);
  c["s"] = qvec_to_json(in.s);
  c["lambda"] = rational_to_string(in.lambda);
  out.certificate = c;
  out.outcome = Outcome::confirmed;
  out.summary = "lambda = " + rational_to_string(in.lambda) + ": d_KL ~ " + std::to_string(kl) +
                " <= (N-1) exp(-lambda delta), delta = " + rational_to_string(delta);
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/proposition-3",
    "Under Assumption 1 and d >= 2, d_KL(pi, L(N,S,d)) = 0: the circle encoder f_lambda has d_KL <= "
    "(N - 1) exp(-lambda delta) -> 0.",
    "rational circle points, exact delta; d_KL enclosed with MPFR by the checker (kind \"dana24-claim\")",
    Expect::holds, "", 3, generate, check}};

}  // namespace
}  // namespace memcert::proofs
