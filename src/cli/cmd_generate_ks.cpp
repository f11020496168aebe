// memcert generate ks --N N (or --T N) --n n --d d [--V V] [--C C] [--seed S] [--float64] [--seq2seq]
//                     [--layout sequences|tokens] --out FILE [--json]
// Sequence data set for ks25 (docs/CLI.md): N sequences of n tokens drawn from a vocabulary of V distinct
// vectors in R^d (rational halves in [-4, 4], or float64 uniform in [-1, 1] written exactly), labels in
// [0, C) made consistent (equal last token and multiset => equal label; --seq2seq: per-token labels).
// --layout tokens: the same data set as token_ids (N, n) + embedding (V, d) in a .npz (docs/FORMATS.md).
#include <algorithm>

#include "command.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_generate_ks {

struct Args {
  std::size_t N = 0, n = 0, d = 0, V = 0;
  long C = 2;
  std::uint64_t seed = 1;
  bool float64 = false, seq2seq = false, json = false;
  std::string out, layout = "sequences";
};

int run(const Args& a) {
  // The data: 16 bytes per token at most (its index and a per-token label). .npz is streamed to the file;
  // .json text is assembled in memory (a short string per coordinate).
  if (a.layout != "sequences" && a.layout != "tokens")
    throw input_error("generate ks", "--layout", "expected sequences or tokens, got \"" + a.layout + "\"");
  const bool npz = path_extension_lower(a.out) == ".npz";
  if (a.layout == "tokens" && !npz)
    throw input_error(a.out, "", "expected a file name ending in .npz for --layout tokens (token_ids and embedding arrays)");
  require_memory((npz ? 0.0 : 24.0 * double(a.d)) * double(a.N) * double(a.n) + 16.0 * double(a.N) * double(a.n),
                 "--N * --n * --d");

  auto start = std::chrono::steady_clock::now();
  if (a.N == 0 || a.n == 0 || a.d == 0 || a.C < 1)
    throw InputError("generate ks: expected --N, --n, --d >= 1 and --C >= 1");
  std::size_t V = a.V;
  if (V == 0) {  // default: min(N n, 512), at most the 17^d rational tokens available
    V = std::min<std::size_t>(a.N * a.n, 512);
    if (!a.float64) {
      double avail = 1;
      for (std::size_t j = 0; j < a.d && avail < 1e6; ++j) avail *= 17;
      V = std::min<std::size_t>(V, static_cast<std::size_t>(avail));
    }
  }
  progress("generate ks: draw the data", 0, 1);  // a line per stage that runs 2 s or more
  const TokenSequenceDataset ds = ks25::ks_generate_tokens(a.N, a.n, a.d, V, a.C, a.seed, a.float64, a.seq2seq);
  progress("generate ks: draw the data", 1, 1);
  progress("generate ks: write " + a.out, 0, 1);
  if (a.layout == "tokens") sequence_dataset_write_token_ids(a.out, ds);
  else sequence_dataset_write_tokens(a.out, ds);  // .npz or JSON by the suffix
  progress("generate ks: write " + a.out, 1, 1);
  nlohmann::json j{{"N", a.N},     {"n", a.n},           {"d", a.d},       {"V", V},  {"C", a.C},
                   {"seed", a.seed}, {"float64", a.float64}, {"seq2seq", a.seq2seq}, {"layout", a.layout}, {"out", a.out}};
  std::string h = "wrote " + std::to_string(a.N) + " sequences (n=" + std::to_string(a.n) + ", d=" +
                  std::to_string(a.d) + ", V=" + std::to_string(V) + ", C=" + std::to_string(a.C) + ") to " + a.out;
  emit(a.json, j, h, start);
  return kExitHolds;
}

const CommandRegistrar reg{{46, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.get_subcommand("generate")->add_subcommand("ks25", "Token sequences for ks25 (construct ks25)");
  sub->alias("ks");  // the command's earlier name (docs/CLI.md)
  add_int_option(sub, "--N,--T", args->N, 1, 1 << 24, "Number of sequences")->required();
  add_int_option(sub, "--n", args->n, 1, 1 << 16, "Tokens per sequence")->required();
  add_int_option(sub, "--d", args->d, 1, 1 << 16, "Token dimension")->required();
  add_int_option(sub, "--V", args->V, 1, 1 << 24, "Vocabulary size (distinct token vectors; default min(N n, 512))");
  add_int_option(sub, "--C", args->C, 1, 1 << 20, "Number of classes");
  add_int_option(sub, "--seed", args->seed, 0, 9223372036854775807LL, "Seed");
  sub->add_flag("--float64", args->float64, "float64 tokens (written exactly) instead of small rationals");
  sub->add_flag("--seq2seq", args->seq2seq, "Per-token labels (Corollary 4.1)");
  sub->add_option("--layout", args->layout,
                  "sequences (default): the tokens spelled out, (N, n, d); tokens: token_ids (N, n) and embedding "
                  "(V, d) in a .npz, the same data set in O(N n + V d) bytes");
  sub->add_option("--out", args->out, "Output data set (.json, or .npz for numpy.load)")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
