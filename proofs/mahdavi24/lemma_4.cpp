// mahdavi24 Lemma 4 (saturation): if s = E W' e has a unique maximum at j*, then for any W,
// softmax(E (W + c W') e) -> e_{j*} as c -> infinity. Certified quantitatively: for each eps an explicit
// rational c(eps) with ||softmax - e_{j*}||_1 <= eps at c(eps), hence for all c >= c(eps) (every exponent
// decreases in c). Boundary: a tied maximum, where the weights of both tied indices stay bounded below
// for every c >= 0, so the softmax converges to no vertex.
#include <algorithm>
#include <cmath>

#include "../common.hpp"
#include "memcert/numeric/interval.hpp"

namespace memcert::proofs {
namespace mahdavi24_lemma_4 {
using namespace detail;

struct Lemma4Instance {
  QMatrix E, W, Wp;  // n x d, d x d, d x d
  QVector e;
};

Instance generate(std::uint64_t seed, std::size_t index, bool tie) {
  Rng rng(seed);
  std::size_t n = 2 + index % 4, d = n + 1 + index % 2;
  Lemma4Instance in;
  do in.E = rng.int_matrix(n, d, 5); while (qmat_rank(in.E) < n);
  in.W = rng.int_matrix(d, d, 3);
  do in.e = rng.int_vector(d, 4); while (std::all_of(in.e.begin(), in.e.end(), [](auto& x) { return x == 0; }));
  // W' = g w^T with w = e (so w^T e > 0) and E g = target: a unique or a tied maximum, as chosen.
  QMatrix target(n, 1);
  for (std::size_t j = 0; j < n; ++j) target(j, 0) = rng.integer(-5, 5);
  std::size_t j1 = rng.index(n), j2 = (j1 + 1) % n;
  Rational mx = 6;
  target(j1, 0) = mx;
  if (tie) target(j2, 0) = mx;
  QMatrix g = *qmat_solve_any(in.E, target);
  in.Wp = QMatrix(d, d);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) in.Wp(i, j) = g(i, 0) * in.e[j];
  Instance inst;
  inst.params = {{"n", n}, {"d", d}, {"tie", tie}};
  inst.data = std::move(in);
  return inst;
}

// `claims search` families (index % 5): 0 a near tie (second largest s = max - 1/4096: tiny gap delta);
// 1 a large spread (W entries up to 64); 2 tiny n = 2; 3 many tokens n = 8 whose other scores are all equal;
// 4 an integer lattice (E, W, e entries in {-1, 0, 1}).
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"near-tie", "large-spread", "tiny", "many-equal-runners-up", "lattice"};
  const std::size_t fam = index % 5;
  Rng rng(seed);
  const std::size_t n = fam == 2 ? 2 : fam == 3 ? 8 : 3, d = n + 1;
  const long er = fam == 4 ? 1 : 5;
  Lemma4Instance in;
  do in.E = rng.int_matrix(n, d, er); while (qmat_rank(in.E) < n);
  in.W = rng.int_matrix(d, d, fam == 1 ? 64 : fam == 4 ? 1 : 3);
  do in.e = rng.int_vector(d, fam == 4 ? 1 : 4); while (std::all_of(in.e.begin(), in.e.end(), [](auto& x) { return x == 0; }));
  QMatrix target(n, 1);
  for (std::size_t j = 0; j < n; ++j) target(j, 0) = fam == 3 ? 5 : rng.integer(-5, 5);
  const std::size_t j1 = rng.index(n), j2 = (j1 + 1) % n;
  target(j1, 0) = 6;
  if (fam == 0) target(j2, 0) = Rational(6) - Rational(1, 4096);
  QMatrix g = *qmat_solve_any(in.E, target);
  in.Wp = QMatrix(d, d);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) in.Wp(i, j) = g(i, 0) * in.e[j];
  Instance inst;
  inst.params = {{"family", names[fam]}, {"n", n}, {"d", d}};
  inst.data = std::move(in);
  return inst;
}

// Logit vectors b = E W e and s = E W' e.
void logits(const Lemma4Instance& in, QVector& b, QVector& s) {
  b = mat_vec(in.E, mat_vec(in.W, in.e));
  s = mat_vec(in.E, mat_vec(in.Wp, in.e));
}

nlohmann::json base_cert(const std::string& id, const Lemma4Instance& in) {
  nlohmann::json c = claim_cert(id);
  c["E"] = qmat_to_json(in.E); c["W"] = qmat_to_json(in.W); c["W_prime"] = qmat_to_json(in.Wp); c["e"] = qvec_to_json(in.e);
  return c;
}

InstanceResult check_lemma(const Instance& inst) {
  const auto& in = std::any_cast<const Lemma4Instance&>(inst.data);
  QVector b, s;
  logits(in, b, s);
  std::size_t n = s.size(), js = 0;
  for (std::size_t j = 1; j < n; ++j)
    if (s[j] > s[js]) js = j;
  Rational gap = -1, spread = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (j == js) continue;
    if (gap < 0 || s[js] - s[j] < gap) gap = s[js] - s[j];
    if (b[j] - b[js] > spread) spread = b[j] - b[js];
  }
  InstanceResult r;
  if (gap <= 0) {
    r.outcome = Outcome::undecided;
    r.summary = "no unique maximum on this instance";
    return r;
  }
  // c(eps) = (A + ln(2(n-1)/eps)) / delta, rounded up generously to a rational (any larger c works too);
  // each value is then certified by an interval evaluation of the softmax, independent of the formula.
  nlohmann::json steps = nlohmann::json::array();
  const long eps_den[] = {10, 1000, 1000000, 1000000000000L};
  bool all_ok = true;
  for (long den : eps_den) {
    Rational eps(Integer(1), Integer(den));
    double cd = (rational_to_double_up(spread) + std::log(2.0 * (n - 1) * den)) / rational_to_double_down(gap);
    Rational c(Integer(static_cast<long>(std::ceil(cd * 1.01)) + 1));
    // 1 - alpha_{j*} <= S := sum_{j != j*} exp(b_j - b_j* + c (s_j - s_j*)); ||.||_1 = 2(1 - alpha_j*).
    Interval S(Rational(0));
    for (std::size_t j = 0; j < n; ++j)
      if (j != js) S += interval_exp(Interval(b[j] - b[js] + c * (s[j] - s[js])));
    Interval dist = Interval(Rational(2)) * S;
    bool ok = dist.upper() <= eps;
    all_ok = all_ok && ok;
    steps.push_back({{"eps", rational_to_string(eps)}, {"c", rational_to_string(c)},
                     {"l1_distance_upper", rational_to_double_up(dist.upper())}, {"certified", ok}});
  }
  r.figures = {{"j_star", js}, {"gap", rational_to_string(gap)}, {"spread", rational_to_string(spread)},
               {"steps", steps}};
  if (!all_ok) {
    r.outcome = Outcome::undecided;
    r.summary = "an interval evaluation did not reach eps (precision), nothing certified";
    return r;
  }
  nlohmann::json c = base_cert("mahdavi24/lemma-4", in);
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& st : steps) cs.push_back({{"eps", st["eps"]}, {"c", st["c"]}});
  c["steps"] = cs;
  c["j_star"] = js;
  c["verdict"] = "confirmed";
  r.certificate = c;
  r.outcome = Outcome::confirmed;
  r.summary = "unique max at j* = " + std::to_string(js) + ": ||softmax - e_j*||_1 <= eps for all c >= c(eps), "
              "eps = 1e-1 .. 1e-12 (MPFR, directed rounding)";
  return r;
}

InstanceResult check_tie(const Instance& inst) {
  const auto& in = std::any_cast<const Lemma4Instance&>(inst.data);
  QVector b, s;
  logits(in, b, s);
  std::size_t n = s.size();
  Rational mx = *std::max_element(s.begin(), s.end());
  std::vector<std::size_t> at_max;
  for (std::size_t j = 0; j < n; ++j)
    if (s[j] == mx) at_max.push_back(j);
  InstanceResult r;
  if (at_max.size() < 2) {
    r.outcome = Outcome::confirmed;
    r.summary = "unique maximum: the lemma applies";
    return r;
  }
  std::size_t j1 = at_max[0], j2 = at_max[1];
  // For c >= 0, alpha_j(c) = exp(b_j) / sum_i exp(b_i + c (s_i - max)) >= softmax(b)_j for j at the max.
  Interval den(Rational(0));
  for (std::size_t i = 0; i < n; ++i) den += interval_exp(Interval(b[i]));
  Interval a1 = interval_exp(Interval(b[j1])) / den, a2 = interval_exp(Interval(b[j2])) / den;
  Rational L = std::min(a1.lower(), a2.lower());
  Rational Lr = rational_round_to_bits(L, 20);  // short, and below L: (1 + 2^-20)(1 - 2^-19) < 1
  if (Lr > L) Lr *= Rational(Integer(524287), Integer(524288));
  L = Lr;
  r.figures = {{"tied", {j1, j2}}, {"weight_lower", rational_to_double_down(L)}};
  r.outcome = Outcome::counterexample;
  r.summary = "tied maximum at j = " + std::to_string(j1) + ", " + std::to_string(j2) +
              ": both weights stay >= " + std::to_string(rational_to_double_down(L)) +
              " for every c >= 0, so the softmax stays >= 2L away (L1) from every vertex";
  r.witness = {{"tied", {j1, j2}}, {"weight_lower", rational_to_string(L)}};
  nlohmann::json c = base_cert("mahdavi24/lemma-4-tied-maximum", in);
  c["tied"] = {j1, j2};
  c["weight_lower"] = jq(L);
  c["verdict"] = "counterexample";
  r.certificate = c;
  return r;
}

ClaimRegistrar reg{Claim{
    "mahdavi24/lemma-4",
    "If s = E W' e has a unique maximum at j*, then softmax(E (W + c W') e) -> e_{j*} as c -> infinity, for "
    "any W (the paper asks for distinct entries; a unique maximum suffices).",
    "for eps = 1e-1..1e-12 an explicit rational c(eps) = (A + ln(2(n-1)/eps))/delta (rounded up); the "
    "L1 distance at c(eps) is bounded by MPFR with directed rounding, and every exponent decreases in c",
    Expect::holds, "", 6, [](std::uint64_t s, std::size_t i) { return generate(s, i, false); }, check_lemma, search}};

ClaimRegistrar reg_tie{Claim{
    "mahdavi24/lemma-4-tied-maximum",
    "With a tied maximum of s the softmax does not saturate: both tied weights stay bounded below for every "
    "c >= 0, so no vertex is the limit.",
    "exact tie s_j1 = s_j2 = max s; a certified lower bound L on softmax(E W e) at both indices (MPFR, "
    "directed rounding), which bounds the weights for every c >= 0",
    Expect::counterexample, "mahdavi24/lemma-4 without a unique maximum", 4,
    [](std::uint64_t s, std::size_t i) { return generate(s, i, true); }, check_tie}};

}  // namespace
}  // namespace memcert::proofs
