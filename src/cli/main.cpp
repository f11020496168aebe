// memcert command-line entry point: builds the CLI11 app from the registered commands, runs the chosen
// one, and maps errors to docs/CLI.md's exit codes.
#include <gmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <vector>

#include "command.hpp"
#include "memcert/data/decimals.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/memory.hpp"
#include "memcert/util/progress.hpp"
#include "memcert/version.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMCERT_HAS_ASAN 1
#endif
#endif
#ifndef MEMCERT_HAS_ASAN
#define MEMCERT_HAS_ASAN 0
#endif


namespace memcert::cli {

namespace {
std::vector<Registration>& registry() {
  static std::vector<Registration> r;
  return r;
}

int g_threads = 0;
bool g_quiet = false;
ProgressHook g_progress_hook;  // in-process runs: where progress goes instead of stderr
std::string g_self_executable;  // in-process runs: the memcert executable child commands run as
EmitHook g_emit_hook;           // in-process runs: receives emit()'s JSON and human text
std::vector<std::string> g_notes;  // note(): said by emit() (human "note:" lines, JSON "notes")

// State of the stage on display (progress() is called under one lock by the library's sink, and from
// the command's own thread otherwise).
struct Display {
  std::mutex m;
  std::string label;
  std::size_t last_done = 0;
  std::chrono::steady_clock::time_point start, last_line;
  bool announced = false;  // a plain line was printed for this stage
  bool open_bar = false;   // a bar without its newline is on the terminal
};
Display& display() {
  static Display d;
  return d;
}

std::string clock_text(double s) {
  if (!(s >= 0) || s > 359999) return "--:--";
  long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}
// An error message as printed: one line, with no byte a terminal would act on (a file name may hold a
// newline or an escape sequence; a certificate's data.file even a NUL): control characters escaped as
// \n, \t, \r, \xNN. Readers escape what they quote at the source; this is the last guard.
std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}
}  // namespace

int threads_option() { return g_threads; }

std::string message_line(const std::string& message) { return one_line(message); }

std::vector<std::string> notes_take() {
  std::vector<std::string> out;
  out.swap(g_notes);
  return out;
}

const std::string& self_executable() {
  static const std::string proc_self = [] {
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/self/exe", ec).string();
  }();
  return g_self_executable.empty() ? proc_self : g_self_executable;
}

CommandRegistrar::CommandRegistrar(Registration r) { registry().push_back(std::move(r)); }

void note(const std::string& text) {
  if (std::find(g_notes.begin(), g_notes.end(), text) == g_notes.end()) g_notes.push_back(text);
}

void emit(bool json, nlohmann::json j, const std::string& human_in,
          std::chrono::steady_clock::time_point start) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Notes about how the input was read (e.g. integer-dtype labels taken as real): a line each, and "notes".
  std::string human = human_in;
  if (!g_notes.empty()) {
    if (!human.empty() && human.back() != '\n') human += '\n';
    for (const auto& n : g_notes) human += "note: " + n + "\n";
    j["notes"] = g_notes;
  }
  // Decimal literals whose meaning depends on --decimals (docs/FORMATS.md "Numbers"): said, never silent.
  const std::string decimals = memcert::decimal_note();
  if (json || g_emit_hook) {
    if (!decimals.empty()) {
      const auto& st = memcert::decimal_stats();
      j["decimals"] = {{"mode", memcert::decimal_mode() == memcert::DecimalMode::exact ? "exact" : "double"},
                       {"inexact_decimals", st.inexact_text},
                       {"inexact_json_numbers", st.inexact_json},
                       {"note", decimals}};
    }
    j["seconds"] = secs;
  }
  if (g_emit_hook)  // in process: both forms, whichever is printed
    g_emit_hook(j.dump(), human + (!human.empty() && human.back() != '\n' ? "\n" : "") +
                              (decimals.empty() ? "" : "note: " + decimals + "\n"));
  if (json) {
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << human;
    if (!human.empty() && human.back() != '\n') std::cout << '\n';
    if (!decimals.empty()) std::cout << "note: " << decimals << '\n';
  }
}

RunBudget& run_budget() {
  static RunBudget b;
  return b;
}

long long memory_that_suffices_mb(double bytes) {
  return static_cast<long long>(std::ceil(bytes / 1048576.0 / 100) * 100);
}

double checker_max_bytes() {
  return run_budget().max_memory_mb > 0 ? run_budget().max_memory_mb * 1048576.0 : 1e300;
}

std::string budget_suffices_text(double needs_seconds, double needs_bytes) {
  std::string s;
  if (needs_bytes > run_budget().max_memory_mb * 1048576.0 && run_budget().max_memory_mb > 0 && needs_bytes / 1048576 <= 1e9)
    s = "--max-memory " + std::to_string(memory_that_suffices_mb(needs_bytes));
  if (needs_seconds > run_budget().max_seconds && run_budget().max_seconds > 0 && needs_seconds < 1e9)
    s += (s.empty() ? "" : " ") + std::string("--max-seconds ") +
         std::to_string(static_cast<long long>(std::ceil(needs_seconds)));
  return s.empty() ? s : " (" + s + " would suffice)";
}

void require_memory(double bytes, const std::string& what) {
  const double cap = run_budget().max_memory_mb * 1024 * 1024;
  if (run_budget().max_memory_mb > 0 && !(bytes <= cap))
    throw memcert::InputError(what + ": needs about " + std::to_string(static_cast<long long>(bytes / 1048576)) +
                              " MB, over the --max-memory budget of " +
                              std::to_string(static_cast<long long>(run_budget().max_memory_mb)) + " MB" +
                              (std::isfinite(bytes) && bytes / 1048576 <= 1e9
                                   ? " (--max-memory " + std::to_string(memory_that_suffices_mb(bytes)) + " would suffice)"
                                   : std::string(" (beyond any --max-memory: a smaller size is needed)")));
}

namespace {
// GMP (and MPFR, which allocates through it) aborts with "GNU MP: Cannot allocate memory" when an
// allocation fails, and its manual leaves throwing through it undefined. Under the address-space limit
// that failure means the run is over its budget: one line and exit 3, as for the time limit (output files
// are written atomically, so nothing is left half-written).
[[noreturn]] void gmp_out_of_memory(std::size_t bytes) {
  std::fprintf(stderr, "memcert: undecided: over budget: out of memory (a %zu-byte GMP allocation failed; --max-memory)\n", bytes);
  std::fflush(stderr);
  std::_Exit(kExitUndecided);
}
void* gmp_alloc(std::size_t n) {
  void* p = std::malloc(n);
  if (!p) gmp_out_of_memory(n);
  return p;
}
void* gmp_realloc(void* old, std::size_t, std::size_t n) {
  void* p = std::realloc(old, n);
  if (!p) gmp_out_of_memory(n);
  return p;
}
void gmp_free(void* p, std::size_t) { std::free(p); }

// The watchdog's deadline (steady clock, nanoseconds; 0: no watchdog), moved on by budget_restart_clock().
std::atomic<std::int64_t> g_deadline_ns{0};
std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::int64_t seconds_ns(double s) { return static_cast<std::int64_t>(std::min(s, 1e9) * 1e9); }

// Starts the watchdog and the address-space limit of run_budget(). Over time: one line on stderr and
// exit 3 (the run decided nothing); files are written atomically, so nothing is left half-written.
void start_budget() {
  mp_set_memory_functions(gmp_alloc, gmp_realloc, gmp_free);
  const RunBudget b = run_budget();
  if (b.max_seconds > 0) {
    g_deadline_ns = steady_now_ns() + seconds_ns(b.max_seconds);
    std::thread([s = b.max_seconds] {
      for (std::int64_t now = steady_now_ns(); now < g_deadline_ns.load(); now = steady_now_ns())
        std::this_thread::sleep_for(std::chrono::nanoseconds(g_deadline_ns.load() - now));
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

void budget_restart_clock() {
  if (g_deadline_ns.load() != 0) g_deadline_ns = steady_now_ns() + seconds_ns(run_budget().max_seconds);
}

bool progress_enabled() { return !g_quiet && isatty(STDERR_FILENO) != 0; }

void progress(const std::string& label, std::size_t done, std::size_t total) {
  if (g_quiet) return;
  if (g_progress_hook) {
    g_progress_hook(label, done, total);
    return;
  }
  static const bool tty = isatty(STDERR_FILENO) != 0;
  Display& d = display();
  std::lock_guard<std::mutex> lock(d.m);
  auto now = std::chrono::steady_clock::now();
  if (label != d.label || done < d.last_done) {  // a new stage
    if (d.open_bar) std::cerr << '\n';
    d.label = label;
    d.start = d.last_line = now;
    d.announced = d.open_bar = false;
  }
  d.last_done = done;
  const bool finished = done >= total;
  const double elapsed = std::chrono::duration<double>(now - d.start).count();
  const double eta = done > 0 ? elapsed * static_cast<double>(total - std::min(done, total)) / static_cast<double>(done) : -1;
  if (tty) {
    if (!finished && d.open_bar && std::chrono::duration<double>(now - d.last_line).count() < 0.1) return;
    d.last_line = now;
    const int width = 30;
    const int fill = total ? static_cast<int>(width * std::min(done, total) / total) : width;
    std::cerr << '\r' << label << " [" << std::string(fill, '#') << std::string(width - fill, '.') << "] " << done << '/'
              << total << (finished ? " in " + clock_text(elapsed) : " ETA " + clock_text(eta)) << "   " << std::flush;
    d.open_bar = !finished;
    if (finished) std::cerr << '\n';
    return;
  }
  if (finished) {
    if (elapsed >= 2 || d.announced) std::cerr << label << ": " << done << '/' << total << " done in " << clock_text(elapsed) << '\n';
    d.label.clear();
    return;
  }
  if (elapsed >= 2 && (!d.announced || std::chrono::duration<double>(now - d.last_line).count() >= 30)) {
    std::cerr << label << ": " << done << '/' << total << ", ETA " << clock_text(eta) << '\n';
    d.announced = true;
    d.last_line = now;
  }
}

// An input read in place from its file (a mapped .npz member) faults on access (SIGBUS) when the file
// shrinks or cannot be read while in use: bad input, reported in one line with exit 2 rather than a crash.
// Only async-signal-safe calls here.
extern "C" void on_bus_error(int) {
  static const char msg[] =
      "memcert: bad input: a file read in place (a mapped .npz member) shrank or could not be read while in use "
      "(expected a file that does not change while memcert runs)\n";
  const ::ssize_t written = ::write(2, msg, sizeof msg - 1);
  (void)written;
  ::_exit(kExitBadInput);
}

}  // namespace memcert::cli

// The whole command line (main_exe.cpp's main, and the Python module in process: docs/PYTHON.md). In
// process, the process-wide machinery (watchdog, address-space limit, GMP's allocation hook, the SIGBUS
// handler) is not installed, and progress goes to `hooks.progress`.
int memcert::cli::run_command_line(int argc, char** argv, const RunHooks& hooks) {
  using namespace memcert::cli;
  g_threads = 0;  // globals bound to options: each run starts from the defaults
  g_quiet = false;
  g_progress_hook = hooks.progress;
  g_self_executable = hooks.self_executable;
  g_emit_hook = hooks.emitted;
  g_notes.clear();
  struct ClearHooks {  // nothing of the caller's outlives the run
    ~ClearHooks() {
      g_progress_hook = nullptr;
      g_emit_hook = nullptr;
      g_self_executable.clear();
    }
  } clear_hooks;
  memcert::decimal_stats_reset();
  CLI::App app{"memcert: exact-arithmetic verification of memorization theory for Transformers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("memcert ") + memcert::version_string);
  // Global options, accepted before or after the command's name (fallthrough is inherited by commands).
  app.fallthrough();
  add_int_option(&app, "--threads", g_threads, 0, 4096, "Worker threads of the engine and the checker (default 0: all cores)");
  app.add_flag("--quiet", g_quiet, "No progress on stderr");
  std::string decimals = "exact";
  app.add_option("--decimals", decimals,
                 "Decimal literals in .txt files and JSON strings: exact (default, \"0.1\" is 1/10) or double (the "
                 "nearest double, as numpy reads text); docs/FORMATS.md");
  app.add_subcommand("construct", "Build a paper's construction and certify it")->require_subcommand(1);
  app.add_subcommand("generate", "Write a data set like the papers'")->require_subcommand(1);
  app.add_subcommand("claims", "The registry of theory claims, run as regression tests")->require_subcommand(1);

  CommandRun chosen;
  // Every command takes the budget options (unless it defines its own); verify's time default is 60 s.
  auto bind = [&chosen](CLI::App* sub, CommandRun run) {
    const bool verify = sub->get_name() == "verify";
    auto secs = std::make_shared<double>(verify ? 60.0 : 0.0);
    // Memory: verify keeps a fixed 4096 MB; every other command 75% of physical memory.
    static const double physical_share = memcert::default_memory_budget_mb();  // read once
    const double mem_default = verify ? 4096.0 : physical_share;
    auto mem = std::make_shared<double>(mem_default);
    // A budget is a finite number in [0, 10^9] ("nan" passes CLI::Range's comparisons, so not that).
    const CLI::Validator budget_range(
        [](std::string& text) {
          char* end = nullptr;
          const double x = std::strtod(text.c_str(), &end);
          if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x) || x < 0 || x > 1e9)
            return "expected a number in [0, 1e9], got '" + printable_argument(text) + "'";
          return std::string();
        },
        "NUMBER in [0 - 1e9]");
    if (!sub->get_option_no_throw("--max-seconds"))
      sub->add_option("--max-seconds", *secs,
                      "Time budget in seconds, 0 = none, for the command and every check it runs (verify: default 60); "
                      "over it: exit 3")
          ->check(budget_range);
    if (!sub->get_option_no_throw("--max-memory"))
      sub->add_option("--max-memory", *mem,
                      "Memory budget in MB, 0 = none, for the command and every check it runs (default " +
                          (verify ? std::string("4096") : "75% of physical memory: " + std::to_string(long(mem_default))) +
                          "); over it: exit 3")
          ->check(budget_range);
    sub->callback([&chosen, run, secs, mem]() {
      run_budget() = RunBudget{*secs, *mem};
      chosen = run;
    });
  };
  std::vector<Registration> regs = registry();
  std::stable_sort(regs.begin(), regs.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& r : regs) r.setup(app, bind);
  help_examples_apply(app);
  if (std::string unknown = command_name_check(app, argc, argv); !unknown.empty() ||
                                                                   !(unknown = option_name_check(app, argc, argv)).empty()) {
    std::cerr << "memcert: " << one_line(unknown) << "\n";
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
    std::cerr << "memcert: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  }
  if (!chosen) {
    std::cerr << "memcert: no command given (see memcert --help)\n";
    return kExitBadInput;
  }
  if (decimals != "exact" && decimals != "double") {
    std::cerr << "memcert: --decimals: expected exact or double, got '" << printable_argument(decimals) << "'\n";
    return kExitBadInput;
  }
  memcert::decimal_mode_set(decimals == "exact" ? memcert::DecimalMode::exact : memcert::DecimalMode::nearest_double);
  memcert::fast_set_threads(g_threads);  // 0: all hardware threads
  memcert_checker::verify_set_threads(static_cast<unsigned>(g_threads));
  memcert::progress_set_sink([](const std::string& stage, std::size_t done, std::size_t total) { progress(stage, done, total); });
  if (!hooks.in_process) {
    struct sigaction bus {};
    bus.sa_handler = on_bus_error;
    ::sigaction(SIGBUS, &bus, nullptr);
  }
  try {
    if (!hooks.in_process) start_budget();
    return chosen();
  } catch (const memcert::InputError& e) {
    std::cerr << "memcert: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "memcert: undecided: over budget: out of memory (--max-memory)\n";
    return kExitUndecided;
  } catch (const std::exception& e) {
    // A bug: it decides nothing, so it is "undecided" (exit 3), never another status.
    std::cerr << "memcert: undecided: internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  } catch (...) {
    std::cerr << "memcert: undecided: internal error\n";
    return kExitInternal;
  }
}
