// Benchmark (plain harness, not a test): build + full exact verification of the ks25 Theorem 4.1
// construction. Default: N = 2000 sequences, n = 16, d = 32, vocabulary V = 512, C = 10 (target
// under 120 s on 2 cores). Prints seconds, peak RSS, parameters, depth.
//   usage: bench_ks [N n d V C seed]
//          bench_ks --sweep [n d V C seed]   (ks25_parameter_sweep over N in {100, 400, 1600, 6400})
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memcert/theory/ks25/construct.hpp"

int main(int argc, char** argv) {
  using namespace memcert::ks25;
  if (argc > 1 && std::string(argv[1]) == "--sweep") {
    auto a = [&](int i, long def) { return argc > i ? std::atol(argv[i]) : def; };
    KsSweep sw = ks25_parameter_sweep({100, 400, 1600, 6400}, a(2, 16), a(3, 32), a(4, 512), a(5, 10), a(6, 1));
    for (const auto& r : sw.rows)
      std::printf("N=%6zu parameters=%8zu nonzero=%7zu depth=%5zu width=%2zu bits=%4zu memorized=%d eq55=%d %.1fs\n",
                  r.N, r.parameters, r.nonzero_parameters, r.depth, r.width, r.bit_complexity, r.memorized, r.eq55,
                  r.seconds);
    std::printf("fitted exponent %.3f (parameters ~ %.1f N^%.3f); first swept N below trivial: %s; crossover "
                "estimate N ~ %.3g\n",
                sw.exponent, sw.coefficient, sw.exponent,
                sw.first_below_N ? std::to_string(*sw.first_below_N).c_str() : "none", sw.crossover_estimate);
    std::printf("%s\n", ks_sweep_json(sw).dump().c_str());
    return 0;
  }
  auto arg = [&](int i, long def) { return argc > i ? std::atol(argv[i]) : def; };
  const std::size_t N = arg(1, 2000), n = arg(2, 16), d = arg(3, 32), V = arg(4, 512);
  const long C = arg(5, 10);
  const std::uint64_t seed = arg(6, 1);
  auto t0 = std::chrono::steady_clock::now();
  auto ds = ks_generate(N, n, d, V, C, seed, false);
  auto t1 = std::chrono::steady_clock::now();
  KsPrepared P = ks_prepare(ds, C, "bench");
  auto t2 = std::chrono::steady_clock::now();
  KsOptions o;
  o.seed = seed;
  KsResult r = ks_construct(P, o);
  auto t3 = std::chrono::steady_clock::now();
  auto cert = ks_certificate_json(r).dump();
  auto t4 = std::chrono::steady_clock::now();
  auto s = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("ks25 bench: N=%zu n=%zu d=%zu V=%zu C=%ld\n", N, n, d, V, C);
  std::printf("  generate %.2fs  prepare(checks) %.2fs  build %.2fs  verify %.2fs  certificate %.2fs (%zu bytes)\n",
              s(t0, t1), s(t1, t2), r.build_seconds, r.verify_seconds, s(t3, t4), cert.size());
  std::printf("  total (prepare+build+verify) %.2fs  peak RSS %.1f MiB\n", s(t1, t3), ru.ru_maxrss / 1024.0);
  std::printf("  memorized=%d eq55=%d distinct tokens=%zu multisets=%zu |A|=%zu\n", r.memorized, r.eq55_holds,
              P.tokens.size(), P.distinct_multisets.size(), r.phi.weights.A.size());
  std::printf("  parameters=%zu nonzero=%zu depth=%zu (f1 %zu, f2 %zu) width=%zu bits=%zu\n", r.total.parameters,
              r.total.nonzero_parameters, r.total.depth, r.f1c.depth, r.f2c.depth, r.total.width,
              r.total.bit_complexity);
  std::printf("  f1: k=%zu m=%zu B=%zu   f2: k=%zu m=%zu B=%zu (rho=%zu c=%zu)\n", r.phi.c1.k, r.phi.c1.m, r.phi.c1.B,
              r.f2info.k, r.f2info.m, r.f2info.B, r.f2info.rho, r.f2info.c);
  return r.memorized ? 0 : 1;
}
