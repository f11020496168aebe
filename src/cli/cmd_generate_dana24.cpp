// memcert generate dana24 --N N --S S (--T T | --all) [--seed S] --out FILE [--json]
// A token association set (docs/papers/dana24.md section 1): T distinct sequences drawn uniformly from [0, N)^S
// (all N^S with --all), next tokens uniform in [0, N). FILE is JSON, or .npz by extension.
#include "command.hpp"
#include "memcert/theory/dana24/assoc_data.hpp"

namespace memcert::cli {
namespace cmd_generate_dana24 {

struct Args {
  std::size_t N = 0, S = 0, T = 0;
  std::uint64_t seed = 1;
  bool all = false, json = false;
  std::string out;
};

int run(const Args& a) {
  auto start = std::chrono::steady_clock::now();
  dana24::AssocData d = dana24::assoc_data_generate(a.N, a.S, a.T, a.seed, a.all);
  dana24::assoc_data_write(a.out, d);
  nlohmann::json j{{"N", d.N}, {"S", d.S}, {"T", d.T()}, {"seed", a.seed}, {"all", a.all},
                   {"n_last", dana24::assoc_distinct_last_tokens(d)}, {"out", a.out}};
  emit(a.json, j,
       "wrote " + std::to_string(d.T()) + " distinct sequences (N=" + std::to_string(d.N) + ", S=" +
           std::to_string(d.S) + ") to " + a.out,
       start);
  return kExitHolds;
}

const CommandRegistrar reg{{47, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub =
      root.get_subcommand("generate")->add_subcommand("dana24", "Token association set for dana24 (construct dana24)");
  add_int_option(sub, "--N", args->N, 1, 1 << 24, "Vocabulary size")->required();
  add_int_option(sub, "--S", args->S, 1, 1 << 16, "Context length (tokens per sequence)")->required();
  add_int_option(sub, "--T", args->T, 1, 1 << 24, "Number of distinct sequences");
  sub->add_flag("--all", args->all, "All N^S sequences (lexicographic order)");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed");
  sub->add_option("--out", args->out, "Output data set (.json or .npz)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
