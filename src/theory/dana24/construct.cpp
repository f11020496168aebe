// dana24: the construction's driver with retries, the counts it reports, and its outputs (certificate,
// summary, weights).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/util/error.hpp"

namespace memcert::dana24 {

std::size_t dana24_feature_rank_ceiling(std::size_t H, std::size_t dh, std::size_t d, std::size_t n_last) {
  return H * std::min(dh, d) + std::min(d, n_last);
}

std::size_t dana24_parameters_paper(std::size_t N, std::size_t S, std::size_t d, std::size_t dh, std::size_t H) {
  return d * (S + 2 * N + 4 * dh * H);
}
std::size_t dana24_parameters_remark2(std::size_t N, std::size_t S, std::size_t d, std::size_t dh, std::size_t H) {
  return d * (S + 2 * N + 2 * (dh + 1) * H);
}

Dana24Result dana24_construct(const AssocData& a, const Dana24Options& o) {
  const std::string where = "construct dana24";
  if (o.d < 1) throw input_error(where, "--d", "expected d >= 1");
  if (o.H > 0 && (o.dh < 1 || o.dh > o.d))
    throw input_error(where, "--dh", "expected 1 <= d_h <= d (paper footnote 1), got d_h = " + std::to_string(o.dh) +
                                         ", d = " + std::to_string(o.d));
  const std::size_t cap = o.H * o.dh + o.d;
  if (a.T() > cap)
    throw input_error(where, "DATASET", "expected at most H d_h + d = " + std::to_string(cap) + " sequences, got " +
                                            std::to_string(a.T()));
  Dana24Result r;
  r.n_last = assoc_distinct_last_tokens(a);
  // The shape is reported even when no attempt gets as far as the weights.
  r.model.N = a.N, r.model.S = a.S, r.model.d = o.d, r.model.dh = o.H ? o.dh : 0, r.model.H = o.H;
  std::mt19937_64 rng(o.seed);
  // 4.2(g): rank F <= H d_h + min(d, n_last). Below T no draw can give full rank: do not retry.
  const bool blocked = dana24_feature_rank_ceiling(o.H, o.dh, o.d, r.n_last) < a.T();
  const int attempts = blocked ? 1 : std::max(1, o.max_attempts);
  for (int at = 0; at < attempts; ++at) {
    r.attempts = static_cast<std::size_t>(at) + 1;
    BaseModel b;
    std::optional<FeatureEnclosure> f;
    {
      StageTimes::Scope s(&r.times, "attention");
      dana24_base_embeddings(a.N, a.S, o.d, rng, b);
      static const int kBoost[] = {0, 2, 1, 3, -1, 4, 2, 1};
      r.head_boost = kBoost[at % 8];
      dana24_rank_one_heads(o.H, o.d, o.dh, rng, b, r.head_boost);
      f = dana24_attention_features(a, b);
    }
    if (o.certify_rank) {
      StageTimes::Scope s(&r.times, "rank");
      r.rank_cert = dana24_certify_feature_rank(*f);
      r.rank_certified = r.rank_cert.has_value();
      if (r.rank_cert) {
        const double mu = rational_to_double_down(r.rank_cert->mu);
        const double rf = rational_to_double_up(r.rank_cert->radius_frobenius_sq);
        r.sigma_min_lower = std::max(0.0, std::sqrt(mu) - std::sqrt(rf));
      }
      if (!r.rank_certified) continue;
    }
    std::optional<Readout> rd;
    Targets tg;
    {
      StageTimes::Scope s(&r.times, "solve");
      tg = dana24_targets(a, o.d, o.targets, rng);
      r.targets_kind = tg.kind;
      rd = dana24_solve_readout(*f, tg, rng);
      if (!rd) continue;
      r.det_M = rd->det_M;
      r.model = dana24_map_back(b, *rd, tg, o.H ? o.dh : 0);
    }
    std::optional<ExactTargets> ex;
    {
      StageTimes::Scope s(&r.times, "exact_targets");
      ex = dana24_exact_targets(*f, *rd, tg.WU, a);
      r.M = rd->M;
      r.features_centre = f->centre;
      r.targets_min_margin = ex->min_margin;
    }
    {
      StageTimes::Scope s(&r.times, "argmax");
      r.argmax = dana24_certify_argmax(r.model, a);
      r.encoder_deviation = dana24_encoder_deviation(r.model, a, *ex);
    }
    r.memorized = r.argmax.certified == a.T();
    if (r.memorized) break;
  }
  return r;
}

namespace {

using nlohmann::json;

std::size_t qbits(const Rational& q) {
  std::size_t n = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t dd = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(n, dd);
}

// Every weight of the model, in the certificate's order.
template <class F>
void for_each_weight(const Model& m, F f) {
  for (double x : m.e.data()) f(x);
  for (double x : m.pos.data()) f(x);
  for (double x : m.WU.data()) f(x);
  for (const auto* group : {&m.WQ, &m.WK, &m.WV, &m.WO})
    for (const DMatrix& w : *group)
      for (double x : w.data()) f(x);
}

json dmat_json(const DMatrix& a) {
  json rows = json::array();
  for (std::size_t i = 0; i < a.rows(); ++i) {
    json row = json::array();
    for (std::size_t j = 0; j < a.cols(); ++j) row.push_back(rational_to_string(rational_from_double(a(i, j))));
    rows.push_back(std::move(row));
  }
  return rows;
}
json heads_json(const std::vector<DMatrix>& ws) {
  json out = json::array();
  for (const DMatrix& w : ws) out.push_back(dmat_json(w));
  return out;
}

// The claimed margin: the certified bound rounded down to a multiple of 2^-20 (short, and below what a
// more precise re-evaluation finds).
Rational claimed_margin(double m) {
  if (!(m > 0)) return Rational(0);
  if (std::isinf(m)) return Rational(1);
  Rational q = rational_from_double(std::floor(std::ldexp(m, 20)));
  return q / Rational(1 << 20);
}

// The claimed deviation bound: the engine's double-interval bound, doubled and rounded up to a multiple
// of 2^-40 (the checker's MPFR enclosure is tighter than the double one).
Rational claimed_deviation(double dev) {
  if (!std::isfinite(dev)) return Rational(-1);
  Rational q = rational_from_double(std::ceil(std::ldexp(2 * dev, 40)) + 1);
  return q / (Rational(1 << 20) * Rational(1 << 20));
}

// Step 6c in the certificate: M, the feature centre F~ and the two claims about E* = [M, W_O] F~.
json dana24_readout_json(const Dana24Result& r) {
  return json{{"M", dmat_json(r.M)},
              {"features_centre", dmat_json(r.features_centre)},
              {"targets_min_margin", rational_to_string(r.targets_min_margin)},
              {"encoder_deviation", rational_to_string(claimed_deviation(r.encoder_deviation))}};
}

}  // namespace

json dana24_certificate_json(const AssocData& a, const Dana24Result& r, const std::string& claim) {
  const Model& m = r.model;
  json w{{"e", dmat_json(m.e)},         {"pos", dmat_json(m.pos)}, {"WU", dmat_json(m.WU)},
         {"WQ", heads_json(m.WQ)},      {"WK", heads_json(m.WK)},  {"WV", heads_json(m.WV)},
         {"WO", heads_json(m.WO)}};
  json c{{"kind", "dana24"},
              {"claim", claim},
              {"N", a.N},
              {"S", a.S},
              {"d", m.d},
              {"dh", m.dh},
              {"H", m.H},
              {"T", a.T()},
              {"sequences", a.sequences},
              {"next", a.next},
              {"weights", std::move(w)},
              {"memorized_count", r.argmax.certified},
              {"min_margin", rational_to_string(claimed_margin(r.argmax.min_margin))},
              {"parameters", dana24_parameters_paper(a.N, a.S, m.d, m.dh, m.H)},
              {"parameters_remark2", dana24_parameters_remark2(a.N, a.S, m.d, m.dh, m.H)}};
  // Step 6c's statement is written only when it holds: a positive exact margin of E* and a finite
  // deviation bound (the end-to-end arg-max of step 8 does not depend on it).
  if (r.M.rows() == m.d && r.features_centre.rows() == a.T() && sgn(r.targets_min_margin) > 0 &&
      std::isfinite(r.encoder_deviation))
    c["readout"] = dana24_readout_json(r);
  return c;
}

json dana24_summary_json(const AssocData& a, const Dana24Result& r, const std::string& claim) {
  const Model& m = r.model;
  std::size_t nonzero = 0, max_bits = 0, total_bits = 0;
  for_each_weight(m, [&](double x) {
    if (x != 0) ++nonzero;
    const std::size_t b = qbits(rational_from_double(x));
    max_bits = std::max(max_bits, b);
    total_bits += b;
  });
  const double NS = std::pow(static_cast<double>(a.N), static_cast<double>(a.S));
  json j{{"claim", claim},
         {"N", a.N},
         {"S", a.S},
         {"d", m.d},
         {"dh", m.dh},
         {"H", m.H},
         {"T", a.T()},
         {"T0", m.H * m.dh + m.d},
         {"n_last", r.n_last},
         {"rank_ceiling", dana24_feature_rank_ceiling(m.H, m.dh, m.d, r.n_last)},
         {"memorized", r.memorized},
         {"memorized_count", r.argmax.certified},
         {"min_margin", r.memorized ? json(rational_to_string(claimed_margin(r.argmax.min_margin))) : json(nullptr)},
         {"parameters", dana24_parameters_paper(a.N, a.S, m.d, m.dh, m.H)},
         {"parameters_remark2", dana24_parameters_remark2(a.N, a.S, m.d, m.dh, m.H)},
         {"nonzero_parameters", nonzero},
         {"bit_complexity", {{"max_bits", max_bits}, {"total_bits", total_bits}}},
         {"targets", r.targets_kind},
         {"attempts", r.attempts},
         {"argmax_mpfr_escalations", r.argmax.escalated},
         {"head_scale_log2", r.head_boost},
         {"det_M_bits", qbits(r.det_M)},
         {"targets_min_margin", rational_to_double_down(r.targets_min_margin)},
         {"encoder_deviation", r.encoder_deviation},
         {"comparison",
          {{"mahdavi24_H_dh_minus_1_plus_1", m.H * (m.dh >= 1 ? m.dh - 1 : 0) + 1},
           {"dana24_H_dh_plus_d", m.H * m.dh + m.d},
           {"N_pow_S", NS}}}};
  if (r.rank_cert)
    j["rank_certificate"] = {{"rank_lower", r.rank_cert->rows.size()},
                             {"method", r.rank_cert->method},
                             {"mu", rational_to_string(r.rank_cert->mu)},
                             {"radius_frobenius_sq", rational_to_string(r.rank_cert->radius_frobenius_sq)},
                             {"sigma_min_lower", r.sigma_min_lower}};
  else
    j["rank_certificate"] = nullptr;
  json t = json::object();
  for (const auto& [name, s] : r.times.entries()) t[name] = s;
  j["timings"] = t;
  return j;
}

void dana24_weights_write_npz(const std::string& path, const Model& m) {
  auto stack = [](const std::vector<DMatrix>& ws, std::size_t r, std::size_t c) {
    std::pair<std::vector<std::size_t>, std::vector<double>> out{{ws.size(), r, c}, {}};
    for (const DMatrix& w : ws) out.second.insert(out.second.end(), w.data().begin(), w.data().end());
    return out;
  };
  npz_write_float64(path, {{"e", {{m.e.rows(), m.e.cols()}, m.e.data()}},
                           {"pos", {{m.pos.rows(), m.pos.cols()}, m.pos.data()}},
                           {"W_U", {{m.WU.rows(), m.WU.cols()}, m.WU.data()}},
                           {"W_Q", stack(m.WQ, m.dh, m.d)},
                           {"W_K", stack(m.WK, m.dh, m.d)},
                           {"W_V", stack(m.WV, m.dh, m.d)},
                           {"W_O", stack(m.WO, m.d, m.dh)}});
}

}  // namespace memcert::dana24
