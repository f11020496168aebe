// memcert kruskal VECTORS [--key NAME] [--at-least K] [--sample SIZE --trials N [--seed S]] [--cert OUT] [--json]
// Certified Kruskal-rank bounds of the ROWS of a matrix. JSON (docs/CLI.md):
//   {"count","dim","kruskal_lower","kruskal_upper","kruskal_rank" (when equal),
//    "dependent_subset" (when found),"method","at_least"/"holds" (with --at-least),
//    "sample":{"size","trials","seed","independent","dependent","dependent_subset"?} (with --sample),"seconds"}
// Exit: 0, or with --at-least K: 0 iff certified >= K, 1 iff certified < K (with the dependent subset),
// 3 when the enumeration budget ran out before deciding.
// --sample runs the paper's Table 1 protocol (kruskal_sample_certified): random SIZE-subsets, each
// certified independent (mod p) or dependent (exact kernel vector); a dependent one also certifies
// kruskal < SIZE. The vectors stay in their typed storage for the sample (linalg/rank.hpp).
#include <algorithm>
#include <iostream>
#include <optional>

#include "command.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/util/progress.hpp"
#include "memcert/linalg/fmat/numerical_rank.hpp"

namespace memcert::cli {
namespace cmd_kruskal {

// Enumeration budget next to --sample: the sets sampled are usually too large for exhaustive search,
// so the exact bounds are only refined as far as this many subset-extension steps allow.
constexpr std::uint64_t kSampleSideBudget = 1'000'000;

struct KruskalArgs {
  std::string vectors, key, cert, tol;
  std::optional<std::size_t> at_least, sample;
  std::size_t trials = 0;
  std::uint64_t seed = 0;
  bool json = false;
};

nlohmann::json indices(const std::vector<std::size_t>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i : v) a.push_back(i);
  return a;
}

std::string list_text(const std::vector<std::size_t>& v) {
  std::string s = "{";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "}";
}

int run_kruskal(const KruskalArgs& args) {
  auto start = std::chrono::steady_clock::now();
  TypedMatrix tv = matrix_read_typed(args.vectors, args.key);
  if (args.sample && (*args.sample == 0 || *args.sample > tv.rows))
    throw input_error("--sample", "", "expected a subset size in [1, " + std::to_string(tv.rows) + "] (count), got " +
                                          std::to_string(*args.sample));
  KruskalOptions opt;
  opt.at_least = args.at_least;
  if (args.sample) opt.max_subsets = std::min(opt.max_subsets, kSampleSideBudget);
  KruskalResult r = kruskal_rank_certified(tv, opt);  // reports its enumeration's progress

  nlohmann::json sample_json;
  std::string human_sample;
  if (args.sample) {
    KruskalSample s = kruskal_sample_certified(tv, *args.sample, args.trials, args.seed);
    sample_json = {{"size", *args.sample}, {"trials", s.trials}, {"seed", args.seed},
                   {"independent", s.independent}, {"dependent", s.dependent}};
    if (!s.first_dependent_subset.empty()) {
      sample_json["dependent_subset"] = indices(s.first_dependent_subset);
      // A certified dependent SIZE-subset bounds the Kruskal rank by SIZE - 1.
      if (s.first_dependent_subset.size() - 1 < r.upper) {
        r.upper = s.first_dependent_subset.size() - 1;
        r.dependent_subset = s.first_dependent_subset;
        r.dependent_coefficients = s.first_dependent_coefficients;
      }
    }
    human_sample = "\n  sample: " + std::to_string(s.independent) + " of " + std::to_string(s.trials) + " random " +
                   std::to_string(*args.sample) + "-subsets independent, " + std::to_string(s.dependent) + " dependent";
  }
  if (!args.cert.empty()) file_write_atomic(args.cert, kruskal_certificate_to_json(typed_matrix_to_qmat(tv), r).dump() + "\n");

  nlohmann::json j{{"count", r.count}, {"dim", r.dim}, {"kruskal_lower", r.lower}, {"kruskal_upper", r.upper},
                   {"method", r.method}};
  if (r.exact()) j["kruskal_rank"] = r.lower;
  if (!r.dependent_subset.empty()) j["dependent_subset"] = indices(r.dependent_subset);
  if (args.sample) j["sample"] = sample_json;

  std::string human = std::to_string(r.count) + " vectors in dimension " + std::to_string(r.dim) + ": ";
  human += r.exact() ? "Kruskal rank " + std::to_string(r.lower) + " (certified)"
                     : "certified " + std::to_string(r.lower) + " <= Kruskal rank <= " + std::to_string(r.upper);
  human += " [" + r.method + "]";
  if (!r.dependent_subset.empty()) human += "\n  dependent subset " + list_text(r.dependent_subset);
  human += human_sample;
  // The numerical rank of the stored vectors bounds any numerically meaningful Kruskal rank: when it is
  // below the certified lower bound, the exact answer rests on rounding-level differences.
  NumericalRank nr = numerical_rank(tv, numerical_tol_option(args.tol));
  j["numerical_rank"] = nr.rank;
  j["numerical_tol"] = nr.tol;
  j["numerical_method"] = nr.method;  // "svd" (numpy's) or "gram-rump" (full rank shown without one)
  human += "\n  numerical rank of the vectors " + std::to_string(nr.rank) + " at tol " + double_text(nr.tol);
  if (nr.rank < r.lower) {
    j["warning"] = numerical_rank_warning(r.lower, nr, "Kruskal rank >=");
    human += "\nwarning: " + j["warning"].get<std::string>();
  }
  int code = kExitHolds;
  if (args.at_least) {
    std::size_t k = *args.at_least;
    std::optional<bool> holds;
    if (r.lower >= k) holds = true;
    else if (r.upper < k) holds = false;
    j["at_least"] = k;
    j["holds"] = holds ? nlohmann::json(*holds) : nlohmann::json(nullptr);
    human += "\n  Kruskal rank >= " + std::to_string(k) + ": " +
             (!holds ? "undecided (enumeration budget exhausted)" : *holds ? "holds" : "fails");
    code = !holds ? 3 : *holds ? kExitHolds : kExitNegative;
  }
  if (!args.cert.empty()) human += "\ncertificate written to " + args.cert;
  emit(args.json, j, human, start);
  return code;
}

const CommandRegistrar reg{{30, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<KruskalArgs>();
  CLI::App* sub = root.add_subcommand("kruskal", "Certified Kruskal rank of the rows of a matrix");
  sub->add_option("VECTORS", args->vectors, "Matrix file whose rows are the vectors (.npy, .npz, .txt, .json)")->required();
  sub->add_option("--key", args->key, "Member of a multi-array .npz to read");
  add_int_option(sub, "--at-least", args->at_least, 0, 1LL << 32, "Only decide whether the Kruskal rank is >= K (exit 0 / 1)");
  auto* sample = add_int_option(sub, "--sample", args->sample, 1, 1LL << 32, "Certify --trials random subsets of this size");
  auto* trials = add_int_option(sub, "--trials", args->trials, 1, 1LL << 32, "Number of random subsets for --sample")
                     ->check(CLI::PositiveNumber);
  auto* seed = add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed for --sample (default 0)");
  sample->needs(trials);
  trials->needs(sample);
  seed->needs(sample);
  sub->add_option("--tol", args->tol, "Threshold for the numerical rank (default numpy's: sigma_max * max(m, n) * eps)");
  sub->add_option("--cert", args->cert, "Write the Kruskal certificate (JSON) to this file");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_kruskal(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
