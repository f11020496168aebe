// memcert compare DATASET --heads H --dh DH [--d D] [--seed S] [--json]
// One token association set (docs/papers/dana24.md section 1), three constructions: mahdavi24 Theorem 1, ks25
// Theorem 4.1 and dana24. The continuous-input constructions see a FIXED embedding: token n at position s
// is phi(n) + p(s), with seeded random coordinates m/64 in [-1, 1] (d coordinates; the same for both).
// Per construction: associations memorized AND re-verified by the independent checker (a construction
// that does not apply, or whose certificate is rejected, counts 0 and says why), parameters (total and
// non-zero), the largest weight bit size, and wall-clock seconds.
// JSON: {"N","S","T","d","H","dh","rows":[{"construction","memorized","parameters","nonzero_parameters",
//        "max_bits","seconds","verified","note"}],"seconds"}. Exit 0 (a comparison has no verdict), 2 bad input.
#include <algorithm>
#include <iomanip>
#include <random>
#include <sstream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_compare {

// The run's memory budget for the checks (none with --max-memory 0).
memcert_checker::Budget run_checker_budget() {
  memcert_checker::Budget b;
  b.max_bytes = checker_max_bytes();
  return b;
}

struct Args {
  std::string dataset;
  std::size_t H = 0, dh = 0;
  std::optional<std::size_t> d;
  std::uint64_t seed = 1;
  bool json = false;
};

struct Row {
  std::string name;
  std::size_t memorized = 0, parameters = 0, nonzero = 0, max_bits = 0;
  double seconds = 0;
  bool verified = false;
  std::string note;
};

std::size_t qbits(const Rational& q) {
  std::size_t n = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t dd = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(n, dd);
}
void count(const QMatrix& m, Row& r) {
  for (const auto& x : m.data()) {
    ++r.parameters;
    if (x != 0) ++r.nonzero;
    r.max_bits = std::max(r.max_bits, qbits(x));
  }
}

// The fixed embedding: sequence t as an S x d matrix with rows phi(t_s) + p(s).
std::vector<QMatrix> embed(const dana24::AssocData& a, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0xc0ffeeULL);
  std::uniform_int_distribution<long> m(-64, 64);
  QMatrix phi(a.N, d), p(a.S, d);
  for (auto& x : phi.data()) x = Rational(m(rng), 64);
  for (auto& x : p.data()) x = Rational(m(rng), 64);
  std::vector<QMatrix> out;
  for (const auto& s : a.sequences) {
    QMatrix X(a.S, d);
    for (std::size_t k = 0; k < a.S; ++k)
      for (std::size_t i = 0; i < d; ++i) X(k, i) = phi(s[k], i) + p(k, i);
    out.push_back(std::move(X));
  }
  return out;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Row run_mahdavi(const dana24::AssocData& a, const std::vector<QMatrix>& X, const Args& g, std::size_t d) {
  Row r;
  r.name = "mahdavi24 (Theorem 1)";
  auto t0 = std::chrono::steady_clock::now();
  try {
    AttentionDataset ds;
    ds.contexts = X;
    ds.queries = QMatrix(a.T(), d);
    QMatrix lab(a.T(), 1);
    for (std::size_t t = 0; t < a.T(); ++t) {
      for (std::size_t i = 0; i < d; ++i) ds.queries(t, i) = X[t](a.S - 1, i);
      lab(t, 0) = Rational(static_cast<long>(a.next[t]));
    }
    ds.labels = lab;
    ds.class_labels = true;
    mahdavi24::Theorem1Options o;
    o.H = g.H, o.dh = g.dh, o.seed = g.seed;
    mahdavi24::Theorem1Result res = mahdavi24::theorem1_construct(ds, o);
    for (const auto& h : res.weights.heads) count(h.WK, r), count(h.WQ, r), count(h.WV, r);
    count(res.weights.WO, r), count(res.weights.WD, r);
    r.verified = res.memorized && memcert_checker::verify_certificate_text(res.certificate.dump(), run_checker_budget()).valid;
    r.memorized = r.verified ? res.T_star : 0;
    r.note = "memorizes the first T* = H(r-1)+1 = " + std::to_string(res.T_star) + " examples";
  } catch (const mahdavi24::HypothesisFailure& f) {
    r.note = std::string("not applicable: ") + f.what();
  } catch (const InputError& e) {
    r.note = std::string("not applicable: ") + e.what();
  }
  r.seconds = since(t0);
  return r;
}

Row run_ks(const dana24::AssocData& a, const std::vector<QMatrix>& X, const Args& g) {
  Row r;
  r.name = "ks25 (Theorem 4.1)";
  auto t0 = std::chrono::steady_clock::now();
  try {
    SequenceDataset ds;
    ds.sequences = X;
    for (auto y : a.next) ds.labels.push_back(static_cast<long>(y));
    ks25::KsPrepared P = ks25::ks_prepare(ds, static_cast<long>(a.N), "compare");
    if (!P.consistent) {
      r.note = "not applicable: inconsistent labels under this embedding";
    } else {
      ks25::KsOptions o;
      o.seed = g.seed;
      o.C = static_cast<long>(a.N);
      ks25::KsResult res = ks25::ks_construct(P, o);
      r.parameters = res.total.parameters, r.nonzero = res.total.nonzero_parameters;
      r.max_bits = res.total.bit_complexity;
      r.verified = res.memorized &&
                   memcert_checker::verify_certificate_text(ks25::ks_certificate_json(res).dump(), run_checker_budget()).valid;
      r.memorized = r.verified ? a.T() : 0;
      r.note = "depth " + std::to_string(res.total.depth) + ", width " + std::to_string(res.total.width);
    }
  } catch (const InputError& e) {
    r.note = std::string("not applicable: ") + e.what();
  }
  r.seconds = since(t0);
  return r;
}

Row run_dana(const dana24::AssocData& a, const Args& g, std::size_t d) {
  Row r;
  r.name = "dana24 (Corollary 1 / Theorem 1)";
  auto t0 = std::chrono::steady_clock::now();
  try {
    dana24::Dana24Options o;
    o.H = g.H, o.dh = g.dh, o.d = d, o.seed = g.seed;
    dana24::Dana24Result res = dana24::dana24_construct(a, o);
    nlohmann::json s = dana24::dana24_summary_json(a, res, "dana24/theorem-1-assoc");
    r.parameters = s["parameters"], r.nonzero = s["nonzero_parameters"];
    r.max_bits = s["bit_complexity"]["max_bits"];
    const std::string claim = d == 2 && g.dh <= 2 ? "dana24/corollary-1" : "dana24/theorem-1-assoc";
    r.verified = res.memorized &&
                 memcert_checker::verify_certificate_text(dana24::dana24_certificate_json(a, res, claim).dump(), run_checker_budget()).valid;
    r.memorized = r.verified ? a.T() : 0;
    r.note = res.memorized ? "embeddings are parameters (chosen by the construction)"
                           : "undecided: rank ceiling " + std::to_string(s["rank_ceiling"].get<std::size_t>());
  } catch (const InputError& e) {
    r.note = std::string("not applicable: ") + e.what();
  }
  r.seconds = since(t0);
  return r;
}

int run(const Args& g) {
  auto start = std::chrono::steady_clock::now();
  dana24::AssocData a = dana24::assoc_data_read(g.dataset);
  const std::size_t d = g.d ? *g.d : std::max<std::size_t>({2, g.dh, a.S, a.T() > g.H * g.dh ? a.T() - g.H * g.dh : 0});
  if (d == 0 || g.H == 0 || g.dh == 0) throw input_error("compare", "--heads/--dh", "expected H >= 1, d_h >= 1");
  const std::vector<QMatrix> X = embed(a, d, g.seed);
  std::vector<Row> rows{run_mahdavi(a, X, g, d), run_ks(a, X, g), run_dana(a, g, d)};
  nlohmann::json j{{"N", a.N}, {"S", a.S}, {"T", a.T()}, {"d", d}, {"H", g.H}, {"dh", g.dh}};
  std::ostringstream h;
  h << "compare: N=" << a.N << " S=" << a.S << " T=" << a.T() << ", d=" << d << " H=" << g.H << " d_h=" << g.dh << "\n";
  h << std::left << std::setw(34) << "construction" << std::setw(11) << "memorized" << std::setw(12) << "parameters"
    << std::setw(10) << "non-zero" << std::setw(6) << "bits" << std::setw(10) << "seconds" << "note\n";
  nlohmann::json jr = nlohmann::json::array();
  for (const Row& r : rows) {
    h << std::setw(34) << r.name << std::setw(11) << (std::to_string(r.memorized) + "/" + std::to_string(a.T()))
      << std::setw(12) << r.parameters << std::setw(10) << r.nonzero << std::setw(6) << r.max_bits << std::setw(10)
      << std::setprecision(3) << r.seconds << r.note << "\n";
    jr.push_back({{"construction", r.name}, {"memorized", r.memorized}, {"parameters", r.parameters},
                  {"nonzero_parameters", r.nonzero}, {"max_bits", r.max_bits}, {"seconds", r.seconds},
                  {"verified", r.verified}, {"note", r.note}});
  }
  j["rows"] = jr;
  std::string text = h.str();
  text.pop_back();
  emit(g.json, j, text, start);
  return kExitHolds;
}

const CommandRegistrar reg{{49, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("compare", "mahdavi24, ks25 and dana24 on one token association set");
  sub->add_option("DATASET", args->dataset, "Token association set (.json / .npz)")->required();
  add_int_option(sub, "--heads", args->H, 1, 4096, "Heads H (mahdavi24, dana24)")->required();
  add_int_option(sub, "--dh", args->dh, 1, 1 << 16, "Head dimension d_h")->required();
  add_int_option(sub, "--d", args->d, 1, 1 << 16, "Embedding dimension (default max(2, d_h, S, T - H d_h))");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed (fixed embedding and constructions)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
