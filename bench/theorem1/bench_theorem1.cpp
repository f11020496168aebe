// Benchmark harness for mahdavi24 Theorem 1 (not a test): full construction + certificate and
// the independent checker's re-verification for H=8, n=8, d=16, d_h=8 (T*=57), H=32, n=16, d=32,
// d_h=16 (T*=481) and H=64, n=32, d=64, d_h=32 (T*=1985, Z is 1985 x 4096). Reports wall and CPU seconds,
// peak resident memory, the construction's stage timings, and per head the proof's c versus c_weyl
// (the smallest grid value {0} u {c 2^-j} at which the step's certificate succeeds).
//   bench_theorem1 [--only small|large|h64] [--data theorem1|general] [--seed S] [--no-cmin] [--json]
// Targets: T*=481 under 60 s; T*=1985 construction + certificate under 120 s.
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>

#include "memcert/checker/checker.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

namespace {
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace memcert;
  using namespace memcert::mahdavi24;
  std::string only;
  std::uint64_t seed = 1;
  bool json = false, cmin = true;
  std::string data = "theorem1";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--no-cmin")) cmin = false;
    else if (!std::strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else { std::cerr << "usage: bench_theorem1 [--only small|large|h64] [--data theorem1|general] [--seed S] [--no-cmin] [--json]\n"; return 2; }
  }
  struct Case { const char* name; std::size_t H, n, d, dh; };
  int rc = 0;
  for (Case c : {Case{"small", 8, 8, 16, 8}, Case{"large", 32, 16, 32, 16}, Case{"h64", 64, 32, 64, 32}}) {
    if (!only.empty() && only != c.name) continue;
    const std::size_t r = std::min(c.n, c.dh), T = c.H * (r - 1) + 1;
    AttentionDataset ds = generate_attention_dataset(data, T, c.n, c.d, std::nullopt, seed);
    Theorem1Options opt;
    opt.H = c.H;
    opt.dh = c.dh;
    opt.seed = seed;
    opt.saturation = cmin;
    StageTimes stages;
    opt.timings = &stages;
    auto w0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    Theorem1Result res = theorem1_construct(ds, opt);
    std::string text = res.certificate.dump();
    auto w1 = std::chrono::steady_clock::now();
    double c1 = cpu_seconds();
    memcert_checker::Verdict v = memcert_checker::verify_certificate_text(text);
    auto w2 = std::chrono::steady_clock::now();
    double c2 = cpu_seconds();
    const double wc = std::chrono::duration<double>(w1 - w0).count(), wv = std::chrono::duration<double>(w2 - w1).count();
    nlohmann::json j{{"case", c.name}, {"H", c.H}, {"n", c.n}, {"d", c.d}, {"dh", c.dh}, {"T", res.T_star},
                     {"rank_Z_lower", res.rank_Z_lower}, {"memorized", res.memorized}, {"verified", v.valid},
                     {"construct_wall_s", wc}, {"construct_cpu_s", c1 - c0}, {"check_wall_s", wv},
                     {"check_cpu_s", c2 - c1}, {"total_wall_s", wc + wv}, {"peak_rss_kib", peak_rss_kib()},
                     {"certificate_bytes", text.size()}, {"hypotheses", res.hypotheses}};
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& t : res.trace) {
      if (t.head == 1) continue;
      double cp = rational_to_double(t.c), cm = t.c_weyl ? rational_to_double(*t.c_weyl) : -1;
      heads.push_back({{"head", t.head}, {"c", cp}, {"c_weyl", cm}, {"eps", t.eps ? rational_to_double(*t.eps) : 0.0},
                       {"eps_criterion", t.eps_criterion.str()}, {"sigma_lower", t.sigma_lower}});
    }
    j["heads"] = heads;
    nlohmann::json tj = nlohmann::json::object();
    for (const auto& [stage, secs] : stages.entries()) tj[stage] = secs;
    j["stages"] = tj;
    j["data"] = data;
    if (json) {
      std::cout << j.dump() << "\n";
    } else {
      std::cout << c.name << ": H=" << c.H << " n=" << c.n << " d=" << c.d << " dh=" << c.dh << " T*=" << res.T_star
                << "  memorized=" << res.memorized << " verified=" << v.valid << "\n"
                << "  construction " << wc << " s wall (" << (c1 - c0) << " s cpu), checker " << wv << " s wall ("
                << (c2 - c1) << " s cpu), total " << wc + wv << " s; peak RSS " << peak_rss_kib() / 1024 << " MiB; certificate "
                << text.size() / 1024 << " KiB (" << data << " data)\n  stages:";
      for (const auto& [stage, secs] : stages.entries()) std::cout << " " << stage << " " << secs << " s;";
      std::cout << "\n  head: proof c / c_weyl (eps, criterion)\n";
      for (const auto& h : heads)
        std::cout << "    " << h["head"] << ": " << h["c"].get<double>() << " / " << h["c_weyl"].get<double>() << "  ("
                  << h["eps"].get<double>() << ", " << h["eps_criterion"].get<std::string>() << ")\n";
    }
    if (!res.memorized || !v.valid) rc = 1;
  }
  return rc;
}
