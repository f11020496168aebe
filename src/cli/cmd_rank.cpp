// memcert rank MATRIX [--key NAME] [--tol X] [--cert OUT] [--json]
// Exact rank with a two-sided certificate through the storage-filtered engine (linalg/rank.hpp):
// lower bound from a k x k minor non-zero modulo a prime, upper bound trivially min(rows, cols), from
// primes whose product beats the Hadamard bound ("multi-prime"), or from an exact kernel basis.
// JSON (docs/CLI.md): {"rows","cols","rank_lower","rank_upper","rank" (when equal),"method","storage",
// "threads","seconds"}
// plus the numerical rank of the stored values (numpy.linalg.matrix_rank's, an uncertified estimate):
//   "numerical_rank","numerical_tol" and, when it differs from the exact rank, "warning".
#include <algorithm>

#include "command.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/fmat/numerical_rank.hpp"

namespace memcert::cli {
namespace cmd_rank {

struct RankArgs {
  std::string matrix, key, cert, tol;
  bool json = false;
};

int run_rank(const RankArgs& args) {
  auto start = std::chrono::steady_clock::now();
  TypedMatrix a = matrix_read_typed(args.matrix, args.key);
  RankCertificate c = rank_certified(a);
  if (!args.cert.empty()) file_write_atomic(args.cert, rank_certificate_text(a, c));

  const std::string rows = std::to_string(a.rows), cols = std::to_string(a.cols), r = std::to_string(c.rank);
  nlohmann::json j{{"rows", a.rows}, {"cols", a.cols}, {"rank_lower", c.rank}, {"rank_upper", c.rank},
                   {"rank", c.rank}, {"method", c.method()}, {"storage", storage_name(a.storage)},
                   {"threads", fast_threads()}};
  std::string upper = c.upper == RankUpper::trivial ? "rank <= min(rows, cols)"
                      : c.upper == RankUpper::kernel
                          ? std::to_string(a.cols - c.rank) + " independent exact kernel vector(s)"
                          : "rank <= " + r + " modulo " + std::to_string(c.upper_primes.size()) +
                                " primes whose product exceeds the Hadamard bound of the " + std::to_string(c.rank + 1) +
                                "-minors";
  std::string human = "rank " + r + " (certified: " + r + " <= rank <= " + r + ") of the " + rows + " x " + cols +
                      " matrix " + args.matrix + " (" + storage_name(a.storage) + ")\n  lower: non-singular " + r +
                      " x " + r + " minor mod " + std::to_string(c.prime) + "\n  upper: " + upper;
  if (!args.cert.empty()) human += "\ncertificate written to " + args.cert;
  NumericalRank nr = numerical_rank(a, numerical_tol_option(args.tol));
  j["numerical_rank"] = nr.rank;
  j["numerical_tol"] = nr.tol;
  j["numerical_method"] = nr.method;  // "svd" (numpy's) or "gram-rump" (full rank shown without one)
  human += "\n  numerical rank " + std::to_string(nr.rank) + " at tol " + double_text(nr.tol) + (nr.method == "svd" ? " (as numpy.linalg.matrix_rank)"
                        : " (every singular value certified above tol by Rump's test, so no SVD was needed)");
  if (nr.rank != c.rank) {
    j["warning"] = numerical_rank_warning(c.rank, nr, "rank");
    human += "\nwarning: " + j["warning"].get<std::string>();
  }
  emit(args.json, j, human, start);
  return kExitHolds;
}

const CommandRegistrar reg{{20, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<RankArgs>();
  CLI::App* sub = root.add_subcommand("rank", "Exact rank of a matrix with a two-sided certificate");
  sub->add_option("MATRIX", args->matrix, "Matrix file (.npy, .npz, .txt, .json)")->required();
  sub->add_option("--key", args->key, "Member of a multi-array .npz to read");
  sub->add_option("--cert", args->cert, "Write the rank certificate (JSON) to this file");
  sub->add_option("--tol", args->tol, "Threshold for the numerical rank (default numpy's: sigma_max * max(m, n) * eps)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_rank(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
