#pragma once
// CLI plumbing shared by every command file: a registry (each cmd_*.cpp registers itself), the output
// contract of docs/CLI.md (human summary or exactly one JSON object), exit codes, and progress.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace memcert::cli {

// Exit codes (docs/CLI.md): verdict holds / verdict negative / bad usage or input.
inline constexpr int kExitHolds = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
// Extensions (docs/CLI.md): the command ran but could not decide within its budget (a "holds": null
// verdict); and a bug (an exception escaped, or the checker rejected what the engine built).
inline constexpr int kExitUndecided = 3;
inline constexpr int kExitInternal = 70;  // EX_SOFTWARE

// A command's callback returns its exit code; InputError thrown from it becomes exit 2 with one line.
using CommandRun = std::function<int()>;

// Registers a command: `setup` receives the root app (parents "construct", "generate", "claims" already
// exist: fetch them with root.get_subcommand(name)) and returns the sub-app plus its run function.
struct Registration {
  int order;  // position in --help (lower first)
  std::function<void(CLI::App& root, std::function<void(CLI::App*, CommandRun)> bind)> setup;
};
struct CommandRegistrar {
  explicit CommandRegistrar(Registration r);
};

// Prints `j` (with "seconds" added from `start`) as one JSON line when `json`, else `human`.
void emit(bool json, nlohmann::json j, const std::string& human,
          std::chrono::steady_clock::time_point start);

// Global options (every command): --threads N (default 0 = all hardware threads) sets the engine's and
// the checker's worker threads; --quiet silences progress.
int threads_option();

// True when stderr is a terminal and --quiet is not given (a redrawn display is possible there).
bool progress_enabled();
// Progress of stage `label` (done of total units) on stderr: on a terminal a bar with percentage and ETA
// (redrawn at most 10 times a second, newline when done == total); otherwise plain lines: one when a
// stage has run 2 s, one every 30 s after that, and one when it ends (stages under 2 s print nothing).
// Library code reports through memcert/util/progress.hpp, which the CLI routes here.
void progress(const std::string& label, std::size_t done, std::size_t total);

}  // namespace memcert::cli
