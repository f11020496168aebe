// memcert rank MATRIX [--cert OUT] [--json]
// Exact rank with a two-sided certificate: lower bound from a k x k minor non-zero modulo a prime, upper
// bound from an exact kernel basis (or trivially min(rows, cols)). JSON (INTERFACE.md):
//   {"rows","cols","rank_lower","rank_upper","rank" (when equal),"method","seconds"}
// plus the numerical rank of the stored values (numpy.linalg.matrix_rank's, an uncertified estimate):
//   "numerical_rank","numerical_tol" and, when it differs from the exact rank, "warning".
#include <algorithm>

#include "command.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/numerical_rank.hpp"
#include "memcert/linalg/qmat.hpp"

namespace memcert::cli {
namespace {

struct RankArgs {
  std::string matrix, cert, tol;
  bool json = false;
};

int run_rank(const RankArgs& args) {
  auto start = std::chrono::steady_clock::now();
  QMatrix a = matrix_read(args.matrix);
  RankCertificate c = qmat_rank_certified(a);
  bool trivial_upper = c.rank == std::min(a.rows(), a.cols());
  std::string method = std::string("minor-mod-p+") + (trivial_upper ? "trivial" : "kernel");
  if (!args.cert.empty()) file_write_atomic(args.cert, rank_certificate_to_json(a, c).dump() + "\n");

  nlohmann::json j{{"rows", a.rows()}, {"cols", a.cols()}, {"rank_lower", c.rank}, {"rank_upper", c.rank},
                   {"rank", c.rank}, {"method", method}};
  std::string human = "rank " + std::to_string(c.rank) + " (certified: " + std::to_string(c.rank) +
                      " <= rank <= " + std::to_string(c.rank) + ") of the " + std::to_string(a.rows()) + " x " +
                      std::to_string(a.cols()) + " matrix " + args.matrix + "\n  lower: non-singular " +
                      std::to_string(c.rank) + " x " + std::to_string(c.rank) + " minor mod " + std::to_string(c.prime) +
                      "\n  upper: " + (trivial_upper ? "rank <= min(rows, cols)" :
                                       std::to_string(a.cols() - c.rank) + " independent exact kernel vector(s)");
  if (!args.cert.empty()) human += "\ncertificate written to " + args.cert;
  NumericalRank nr = numerical_rank(a, numerical_tol_option(args.tol));
  j["numerical_rank"] = nr.rank;
  j["numerical_tol"] = nr.tol;
  human += "\n  numerical rank " + std::to_string(nr.rank) + " at tol " + double_text(nr.tol) + " (as numpy.linalg.matrix_rank)";
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
  sub->add_option("MATRIX", args->matrix, "Matrix file (.npy, .txt, .json)")->required();
  sub->add_option("--cert", args->cert, "Write the rank certificate (JSON) to this file");
  sub->add_option("--tol", args->tol, "Threshold for the numerical rank (default numpy's: sigma_max * max(m, n) * eps)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run_rank(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
