// memcert generate pe --n N --d D --out FILE [--json]
// Writes the n x d float64 sinusoidal positional encodings (Vaswani et al.; the PyTorch formulation, see
// include/memcert/proofs/positional_encoding.hpp) as a 2-D .npy. `memcert rank FILE` certifies its rank.
// JSON: {"n","d","out","dtype":"float64","seconds"}
#include "command.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/proofs/positional_encoding.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_generate_pe {

struct PEArgs {
  std::size_t n = 0, d = 0;
  std::string out;
  bool json = false;
};

int run_pe(const PEArgs& a) {
  require_memory(64.0 * double(a.n) * double(a.d), "--n * --d");

  auto start = std::chrono::steady_clock::now();
  if (a.n == 0 || a.d == 0) throw input_error("generate pe", "--n/--d", "expected positive sizes");
  std::vector<double> v = proofs::sinusoidal_encoding(a.n, a.d);
  file_write_atomic(a.out, npy_bytes_float64({a.n, a.d}, v));
  emit(a.json, {{"n", a.n}, {"d", a.d}, {"out", a.out}, {"dtype", "float64"}},
       "wrote the " + std::to_string(a.n) + " x " + std::to_string(a.d) +
           " float64 sinusoidal positional encoding to " + a.out,
       start);
  return kExitHolds;
}

const CommandRegistrar reg{{61, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<PEArgs>();
  CLI::App* sub = root.get_subcommand("generate")->add_subcommand("pe", "Sinusoidal positional encodings (.npy)");
  add_int_option(sub, "--n", args->n, 1, 1 << 20, "Number of positions")->required();
  add_int_option(sub, "--d", args->d, 1, 1 << 20, "Embedding dimension")->required();
  sub->add_option("--out", args->out, "Output .npy file")->required();
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_pe(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
