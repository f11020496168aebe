// memcert generate theorem1|shared|general --T T --n n --d d [--C C] [--seed S] --out FILE [--json]
// Attention data sets like mahdavi24's (uniform random; rational entries, written exactly):
//   theorem1: independent contexts (each certified rank n when n <= d) and queries, entries m/64 in [-1, 1];
//   shared:   one context shared by every example (Proposition 2's setting), entries m/64;
//   general:  independent contexts and queries with finer entries m/4096 (general position in practice).
// Labels: real m/64 in [-1, 1] (T x 1), or class labels in [0, C) with --C.
// --kruskal K: queries of Kruskal rank exactly K (every K-subset independent, certified; one (K+1)-subset
// dependent by construction), e.g. K = n for data at Assumption 1's boundary.
// --family joint-scales (theorem1 only; --T 4 --n 2 --d >= 3, for H = 3 heads) / common-scale (--T 3 --n 2,
// for H = 2): the data of docs/SATURATION.md on which per-head saturation scales do not compose / a common
// scale below the proof's breaks the rank (mahdavi24/joint_scales.hpp).
#include "command.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/theory/mahdavi24/joint_scales.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_generate_attention {

struct Args {
  std::string kind, out, family;
  std::size_t T = 0, n = 0, d = 0, C = 0, kruskal = 0;
  std::uint64_t seed = 1;
  bool json = false;
};

int run(const Args& a) {
  require_memory(64.0 * double(a.T) * double(a.n + 1) * double(a.d), "--T * --n * --d");

  auto start = std::chrono::steady_clock::now();
  std::optional<std::size_t> C;
  if (a.C) C = a.C;
  std::optional<std::size_t> K;
  if (a.kruskal) K = a.kruskal;
  AttentionDataset ds;
  // One progress line per stage that runs 2 s or more (large --T * --n * --d).
  progress("generate " + a.kind + ": draw and check the data", 0, 1);
  if (!a.family.empty()) {
    if (a.family != "joint-scales" && a.family != "common-scale")
      throw InputError("--family: expected joint-scales or common-scale, got " + a.family);
    const std::size_t H = a.family == "joint-scales" ? 3 : 2;
    if (a.T != H + 1 || a.n != 2 || a.C || a.kruskal)
      throw InputError("--family " + a.family + ": expected --T " + std::to_string(H + 1) + " --n 2 (real labels, no --kruskal)");
    ds = mahdavi24::generate_joint_scales_dataset(a.d, a.seed, H);
  } else {
    ds = mahdavi24::generate_attention_dataset(a.kind, a.T, a.n, a.d, C, a.seed, K);
  }
  progress("generate " + a.kind + ": draw and check the data", 1, 1);
  progress("generate " + a.kind + ": write " + a.out, 0, 1);
  attention_dataset_write(a.out, ds);  // .npz or JSON by the suffix
  progress("generate " + a.kind + ": write " + a.out, 1, 1);
  nlohmann::json j{{"kind", a.kind}, {"T", a.T}, {"n", a.n}, {"d", a.d}, {"seed", a.seed}, {"out", a.out}};
  if (a.C) j["C"] = a.C;
  if (a.kruskal) j["kruskal"] = a.kruskal;
  if (!a.family.empty()) j["family"] = a.family;
  emit(a.json, j,
       "wrote " + std::to_string(a.T) + " " + a.kind + " examples (n=" + std::to_string(a.n) + ", d=" + std::to_string(a.d) +
           (a.C ? ", C=" + std::to_string(a.C) : std::string(", real labels")) + ") to " + a.out,
       start);
  return kExitHolds;
}

// `name`: the command's name when it is not the kind's (generate mahdavi24 writes kind theorem1, whose name
// stays an alias).
void add(CLI::App& root, const std::function<void(CLI::App*, CommandRun)>& bind, const std::string& kind,
         const std::string& help, const std::string& name = "") {
  auto args = std::make_shared<Args>();
  args->kind = kind;
  CLI::App* sub = root.get_subcommand("generate")->add_subcommand(name.empty() ? kind : name, help);
  if (!name.empty()) sub->alias(kind);
  add_int_option(sub, "--T", args->T, 1, 1 << 24, "Number of examples")->required();
  add_int_option(sub, "--n", args->n, 1, 1 << 16, "Context size")->required();
  add_int_option(sub, "--d", args->d, 1, 1 << 16, "Embedding dimension")->required();
  add_int_option(sub, "--C", args->C, 1, 1 << 20, "Number of classes (class labels; default real labels)");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed");
  add_int_option(sub, "--kruskal", args->kruskal, 1, 1 << 24, "Queries of Kruskal rank exactly K (1 <= K <= min(T-1, d))");
  if (kind == "theorem1")
    sub->add_option("--family", args->family, "Structured family: joint-scales (--T 4 --n 2 --d >= 3) or common-scale (--T 3 --n 2 --d >= 3); docs/SATURATION.md");
  sub->add_option("--out", args->out, "Output data set (.json, or .npz for numpy.load)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}

const CommandRegistrar reg{{41, [](CLI::App& root, auto bind) {
  add(root, bind, "theorem1", "mahdavi24 data: independent contexts (rank n) and queries, rational entries", "mahdavi24");
  add(root, bind, "shared", "mahdavi24 data with one shared context (Proposition 2)");
  add(root, bind, "general", "mahdavi24 data in general position (finer rational entries)");
}}};

}  // namespace
}  // namespace memcert::cli
