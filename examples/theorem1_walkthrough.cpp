// Walkthrough of mahdavi24's Theorem 1 (docs/THEORY.md section 4): generate a small data set satisfying
// Assumptions 1-2, construct the memorizing weights step by step, and verify the certificate with the
// independent checker. Usage: example_theorem1_walkthrough [H n d dh seed]
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "memcert/checker/checker.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

int main(int argc, char** argv) {
  using namespace memcert::mahdavi24;
  std::size_t H = 4, n = 5, d = 8, dh = 5;
  std::uint64_t seed = 1;
  if (argc >= 5) { H = std::atoi(argv[1]); n = std::atoi(argv[2]); d = std::atoi(argv[3]); dh = std::atoi(argv[4]); }
  if (argc >= 6) seed = std::strtoull(argv[5], nullptr, 10);
  const std::size_t r = std::min(n, dh), T = H * (r - 1) + 1;
  auto ds = generate_attention_dataset("theorem1", T, n, d, std::nullopt, seed);
  Theorem1Options opt;
  opt.H = H;
  opt.dh = dh;
  opt.seed = seed;
  static auto start = std::chrono::steady_clock::now();
  opt.narrate = [](const std::string& s) {
    std::cout << "[" << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << "s] " << s << "\n";
  };
  auto t0 = std::chrono::steady_clock::now();
  Theorem1Result res = theorem1_construct(ds, opt);
  auto t1 = std::chrono::steady_clock::now();
  std::string text = res.certificate.dump();
  auto v = memcert_checker::verify_certificate_text(text);
  auto t2 = std::chrono::steady_clock::now();
  std::cout << "construction " << std::chrono::duration<double>(t1 - t0).count() << " s, checker "
            << std::chrono::duration<double>(t2 - t1).count() << " s, certificate " << text.size() / 1024 << " KiB\n";
  std::cout << "memorized: " << (res.memorized ? "yes" : "no") << "; independent checker: "
            << (v.valid ? "valid" : "REJECTED (" + v.reason + ")") << "\n";
  return res.memorized && v.valid ? 0 : 1;
}
