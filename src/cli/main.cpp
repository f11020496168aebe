// memcert command-line entry point: builds the CLI11 app from the registered commands, runs the chosen
// one, and maps errors to INTERFACE.md's exit codes.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include <algorithm>
#include <iostream>
#include <memory>
#include <vector>

#include "command.hpp"
#include "memcert/util/error.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMCERT_HAS_ASAN 1
#endif
#endif
#ifndef MEMCERT_HAS_ASAN
#define MEMCERT_HAS_ASAN 0
#endif

#ifndef MEMCERT_VERSION
#define MEMCERT_VERSION "0.0.0"
#endif

namespace memcert::cli {

namespace {
std::vector<Registration>& registry() {
  static std::vector<Registration> r;
  return r;
}
}  // namespace

CommandRegistrar::CommandRegistrar(Registration r) { registry().push_back(std::move(r)); }

void emit(bool json, nlohmann::json j, const std::string& human,
          std::chrono::steady_clock::time_point start) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (json) {
    j["seconds"] = secs;
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << human;
    if (!human.empty() && human.back() != '\n') std::cout << '\n';
  }
}

RunBudget& run_budget() {
  static RunBudget b;
  return b;
}

void require_memory(double bytes, const std::string& what) {
  const double cap = run_budget().max_memory_mb * 1024 * 1024;
  if (run_budget().max_memory_mb > 0 && !(bytes <= cap))
    throw memcert::InputError(what + ": needs about " + std::to_string(static_cast<long long>(bytes / 1048576)) +
                              " MB, over the --max-memory budget of " +
                              std::to_string(static_cast<long long>(run_budget().max_memory_mb)) + " MB");
}

namespace {
// Starts the watchdog and the address-space limit of run_budget(). Over time: one line on stderr and
// exit 3 (the run decided nothing); files are written atomically, so nothing is left half-written.
void start_budget() {
  const RunBudget b = run_budget();
  if (b.max_seconds > 0) {
    std::thread([s = b.max_seconds] {
      std::this_thread::sleep_for(std::chrono::duration<double>(s));
      std::fprintf(stderr, "memcert: undecided: over budget: more than %g s (--max-seconds)\n", s);
      std::fflush(stderr);
      std::_Exit(kExitUndecided);
    }).detach();
  }
#if !defined(__SANITIZE_ADDRESS__) && !MEMCERT_HAS_ASAN
  if (b.max_memory_mb > 0) {
    // Address space = heap + stacks + code; leave room for the latter so the budget is the heap's.
    const double lim = (b.max_memory_mb + 512) * 1024 * 1024;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && lim < 1e18) {
      const rlim_t want = static_cast<rlim_t>(lim);
      if (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_AS, &rl);
      }
    }
  }
#endif
}
}  // namespace

bool progress_enabled() { return isatty(STDERR_FILENO) != 0; }

void progress(const std::string& label, std::size_t done, std::size_t total) {
  if (!progress_enabled()) return;
  std::cerr << '\r' << label << ' ' << done << '/' << total << std::flush;
  if (done >= total) std::cerr << '\n';
}

}  // namespace memcert::cli

int main(int argc, char** argv) {
  using namespace memcert::cli;
  CLI::App app{"memcert: exact-arithmetic verification of memorization theory for Transformers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("memcert ") + MEMCERT_VERSION);
  app.add_subcommand("construct", "Build a paper's construction and certify it")->require_subcommand(1);
  app.add_subcommand("generate", "Write a data set like the papers'")->require_subcommand(1);
  app.add_subcommand("claims", "The registry of theory claims, run as regression tests")->require_subcommand(1);

  CommandRun chosen;
  // Every command takes the budget options (unless it defines its own); verify's time default is 60 s.
  auto bind = [&chosen](CLI::App* sub, CommandRun run) {
    const bool verify = sub->get_name() == "verify";
    auto secs = std::make_shared<double>(verify ? 60.0 : 0.0);
    auto mem = std::make_shared<double>(4096.0);
    if (!sub->get_option_no_throw("--max-seconds"))
      sub->add_option("--max-seconds", *secs, "Time budget in seconds, 0 = none (verify: default 60); over it: exit 3")
          ->check(CLI::Range(0.0, 1e9));
    if (!sub->get_option_no_throw("--max-memory"))
      sub->add_option("--max-memory", *mem, "Memory budget in MB, 0 = none (default 4096); over it: exit 3")
          ->check(CLI::Range(0.0, 1e9));
    sub->callback([&chosen, run, secs, mem]() {
      run_budget() = RunBudget{*secs, *mem};
      chosen = run;
    });
  };
  std::vector<Registration> regs = registry();
  std::stable_sort(regs.begin(), regs.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& r : regs) r.setup(app, bind);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "memcert: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (!chosen) {
    std::cerr << "memcert: no command given (see memcert --help)\n";
    return kExitBadInput;
  }
  try {
    start_budget();
    return chosen();
  } catch (const memcert::InputError& e) {
    std::cerr << "memcert: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "memcert: undecided: over budget: out of memory (--max-memory)\n";
    return kExitUndecided;
  } catch (const std::exception& e) {
    // A bug: it decides nothing, so it is "undecided" (exit 3), never another status.
    std::cerr << "memcert: undecided: internal error: " << e.what() << "\n";
    return kExitInternal;
  } catch (...) {
    std::cerr << "memcert: undecided: internal error\n";
    return kExitInternal;
  }
}
