// memcert command-line entry point: builds the CLI11 app from the registered commands, runs the chosen
// one, and maps errors to INTERFACE.md's exit codes.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <vector>

#include "command.hpp"
#include "memcert/util/error.hpp"

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
  auto bind = [&chosen](CLI::App* sub, CommandRun run) {
    sub->callback([&chosen, run]() { chosen = run; });
  };
  std::vector<Registration> regs = registry();
  std::stable_sort(regs.begin(), regs.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& r : regs) r.setup(app, bind);
  help_examples_apply(app);
  if (std::string unknown = command_name_check(app, argc, argv); !unknown.empty()) {
    std::cerr << "memcert: " << unknown << "\n";
    return kExitBadInput;
  }

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
    return chosen();
  } catch (const memcert::InputError& e) {
    std::cerr << "memcert: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "memcert: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "memcert: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
