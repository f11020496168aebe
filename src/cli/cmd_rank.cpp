// memcert rank MATRIX [--key NAME] [--cert OUT] [--json]
// Exact rank with a two-sided certificate through the storage-filtered engine (linalg/dispatch.hpp):
// lower bound from a k x k minor non-zero modulo a prime, upper bound trivially min(rows, cols), from
// primes whose product beats the Hadamard bound ("multi-prime"), or from an exact kernel basis.
// JSON (docs/CLI.md): {"rows","cols","rank_lower","rank_upper","rank" (when equal),"method","storage",
// "threads","seconds"}
#include <algorithm>

#include "command.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/dispatch.hpp"
#include "memcert/linalg/fast/dmod.hpp"

namespace memcert::cli {
namespace {

struct RankArgs {
  std::string matrix, key, cert;
  bool json = false;
};

int run_rank(const RankArgs& args) {
  auto start = std::chrono::steady_clock::now();
  TypedMatrix a = matrix_read_typed(args.matrix, args.key);
  CertifiedRank c = rank_certified(a);
  if (!args.cert.empty()) file_write_atomic(args.cert, rank_certificate_text(a, c));

  const std::string rows = std::to_string(a.rows), cols = std::to_string(a.cols), r = std::to_string(c.rank);
  nlohmann::json j{{"rows", a.rows}, {"cols", a.cols}, {"rank_lower", c.rank}, {"rank_upper", c.rank},
                   {"rank", c.rank}, {"method", c.method()}, {"storage", storage_name(a.storage)},
                   {"threads", fast_threads()}};
  std::string upper = c.upper == "trivial" ? "rank <= min(rows, cols)"
                      : c.upper == "kernel"
                          ? std::to_string(a.cols - c.rank) + " independent exact kernel vector(s)"
                          : "rank <= " + r + " modulo " + std::to_string(c.multimodular.upper_primes.size()) +
                                " primes whose product exceeds the Hadamard bound of the " + std::to_string(c.rank + 1) +
                                "-minors";
  std::string human = "rank " + r + " (certified: " + r + " <= rank <= " + r + ") of the " + rows + " x " + cols +
                      " matrix " + args.matrix + " (" + storage_name(a.storage) + ")\n  lower: non-singular " + r +
                      " x " + r + " minor mod " + std::to_string(c.prime()) + "\n  upper: " + upper;
  if (!args.cert.empty()) human += "\ncertificate written to " + args.cert;
  emit(args.json, j, human, start);
  return kExitHolds;
}

const CommandRegistrar reg{{20, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<RankArgs>();
  CLI::App* sub = root.add_subcommand("rank", "Exact rank of a matrix with a two-sided certificate");
  sub->add_option("MATRIX", args->matrix, "Matrix file (.npy, .npz, .txt, .json)")->required();
  sub->add_option("--key", args->key, "Member of a multi-array .npz to read");
  sub->add_option("--cert", args->cert, "Write the rank certificate (JSON) to this file");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_rank(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
