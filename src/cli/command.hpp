#pragma once
// CLI plumbing shared by every command file: a registry (each cmd_*.cpp registers itself), the output
// contract of docs/CLI.md (human summary or exactly one JSON object), exit codes, and progress.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include "memcert/checker/checker.hpp"

namespace memcert {
struct NumericalRank;
}

namespace memcert::cli {

// Exit codes (docs/CLI.md): verdict holds / verdict negative / bad usage or input.
inline constexpr int kExitHolds = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
// Extension (docs/CLI.md): the command ran but could not decide within its budget (a "holds": null
// verdict). No exit status outside {0, 1, 2, 3} exists: an unexpected failure inside memcert (an
// exception that escaped, or the checker rejecting what the engine built) decides nothing and is also
// reported as 3, with a one-line "undecided: internal error" on stderr.
inline constexpr int kExitUndecided = 3;
inline constexpr int kExitInternal = kExitUndecided;

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

// A note about how the input was read, printed by emit() as a human "note: ..." line and in the JSON's
// "notes" list (each text once).
void note(const std::string& text);
// The notes said so far, handed over and forgotten (for a command that prints several results itself).
std::vector<std::string> notes_take();
// An error message as main() prints it: one line, control characters escaped.
std::string message_line(const std::string& message);
// The --max-seconds watchdog counts again from now (a command that runs one check after another gives each
// the whole budget); nothing when no watchdog runs.
void budget_restart_clock();

// Adds one worked example to the foot of every registered command's --help (help_manners.cpp).
void help_examples_apply(CLI::App& root);
// Before parsing: when argv names a command that does not exist, the one-line message
// "unknown command 'rnak'; did you mean 'rank'?" (nearest name by edit distance, when it is close);
// "" when every command word is known.
std::string command_name_check(CLI::App& root, int argc, char** argv);
// The same for option names: "unknown option '--weight-out' for 'construct theorem1'; did you mean
// '--weights-out'?" when a --option the command (or a command above it) does not take is close to one it
// does; "" otherwise (an unknown option with no close match is left to the parser's message).
std::string option_name_check(CLI::App& root, int argc, char** argv);

// --tol for the numerical rank: "" -> nullopt (numpy's default), else a finite number >= 0 (InputError).
std::optional<double> numerical_tol_option(const std::string& tol);
// "exact rank 300 of the stored values; numerical rank 5 at tol 1.2e-13: ..." (why they differ).
std::string numerical_rank_warning(std::size_t exact, const memcert::NumericalRank& nr, const std::string& what);
// A double with 3 significant digits ("1.2e-13").
std::string double_text(double x);
// An exact number as a human line prints it: the exact text with a short decimal beside it when it is
// a fraction, "594013787898139033/9007199254740992 (~0.0659)"; integers and text that is not an exact
// number unchanged. JSON keeps the exact strings alone.
std::string exact_text(const std::string& exact);

// The value of `text` when it is a decimal integer (an optional '-', then digits only: no '+', spaces or
// base prefixes such as 0x) within [min, max], read exactly (no saturation: 2^64 is not 2^64 - 1); nullopt
// otherwise.
std::optional<long long> int_in_range(const std::string& text, long long min, long long max);

// A command-line argument or file name as shown in a one-line message: control characters, backslashes
// and non-ASCII bytes escaped (\n, \x1b, \\), long text cut.
std::string printable_argument(const std::string& text, std::size_t max_chars = 200);

// Integer option `name` bound to `var`, accepting only integers in [min, max]: anything else (negative,
// too large, not an integer) is exit 2 at parse time, before a command allocates anything from it. The
// accepted text is handed on in canonical decimal, so "010" is 10, never octal.
template <class T>
CLI::Option* add_int_option(CLI::App* sub, const std::string& name, T& var, long long min, long long max,
                            const std::string& description) {
  CLI::Validator exact(
      [min, max](std::string& text) {
        const std::optional<long long> v = int_in_range(text, min, max);
        if (!v) return "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" +
                       printable_argument(text) + "'";
        text = std::to_string(*v);
        return std::string();
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
  return sub->add_option(name, var, description)->transform(exact);
}

// The resource budget of this run: --max-seconds and --max-memory, which main() adds to every command
// (verify: 60 s, 4096 MB by default; the others: no time limit, 75% of physical memory,
// memcert::default_memory_budget_mb). 0 means no limit, for the command and every check it runs. The time
// limit is enforced by a watchdog (exit 3, "undecided: over budget"), the memory limit by the address
// space limit; commands also check their own estimates BEFORE allocating (require_memory).
struct RunBudget {
  double max_seconds = 0;
  double max_memory_mb = 4096;
};
RunBudget& run_budget();

// Throws InputError (exit 2) naming `what` when `bytes` exceeds the --max-memory budget. Used before
// allocating anything whose size the user chose (e.g. generate --T * --n * --d).
void require_memory(double bytes, const std::string& what);

// The independent checker's memory budget (memcert_checker::Budget::max_bytes) for a check a command
// runs inside: the run's --max-memory, or unlimited (1e300) when it is 0 -- never the checker's own default.
double checker_max_bytes();
// --max-memory in MB that covers `bytes`, rounded up to 100 MB.
long long memory_that_suffices_mb(double bytes);
// " (--max-memory 900 would suffice)" (and/or --max-seconds) for an over-budget verdict whose refused step
// estimated what it needs (memcert_checker::Verdict::needs_*), when that is over this run's budget; ""
// when not known.
std::string budget_suffices_text(double needs_seconds, double needs_bytes);

// Global options (every command): --threads N (default 0 = all hardware threads) sets the engine's and
// the checker's worker threads; --quiet silences progress.
int threads_option();

// True when stderr is a terminal and --quiet is not given (a redrawn display is possible there).
bool progress_enabled();

// `construct ... --check`: the independent checker on a certificate's text before it is written. True
// when it accepts; otherwise one line on stderr ("undecided: the independent checker did not ...
// (nothing written)") and false, and the caller returns kExitUndecided: a certificate the checker does
// not accept (or cannot finish within its budget) is never written.
bool checker_accepts_before_write(const std::string& cert, const memcert_checker::KsArraysSupplier* ks = nullptr);  // within the run's budget (checker_max_bytes)
// Progress of stage `label` (done of total units) on stderr: on a terminal a bar with percentage and ETA
// (redrawn at most 10 times a second, newline when done == total); otherwise plain lines: one when a
// stage has run 2 s, one every 30 s after that, and one when it ends (stages under 2 s print nothing).
// Library code reports through memcert/util/progress.hpp, which the CLI routes here.
void progress(const std::string& label, std::size_t done, std::size_t total);

// The command line as a function: builds the app from the registry, runs the chosen command and maps
// errors to the exit codes (main_exe.cpp's main calls it with the defaults). In process (the Python
// module), none of the process-wide machinery is installed: no watchdog, no address-space limit, no
// GMP allocation hook, no signal handler; progress() calls `progress` (when set) instead of drawing on
// stderr. The caller captures std::cout / std::cerr.
using ProgressHook = std::function<void(const std::string& label, std::size_t done, std::size_t total)>;
using EmitHook = std::function<void(const std::string& json_text, const std::string& human_text)>;
struct RunHooks {
  bool in_process = false;
  ProgressHook progress;
  EmitHook emitted;  // receives both forms of what emit() prints (the JSON object and the human summary)
  std::string self_executable;  // "" = this process's executable (/proc/self/exe)
};
// The memcert executable that child commands (sweep's cells) run: RunHooks::self_executable when set.
const std::string& self_executable();
int run_command_line(int argc, char** argv, const RunHooks& hooks = {});

}  // namespace memcert::cli
