// memcert._memcert: the memcert command line, run in process. _run(argv) builds the same CLI11 app from
// the same registered commands as the `memcert` executable (src/cli/main.cpp run_command_line) and
// returns what the command printed: (exit_code, json_text, human_text, stderr_text). The package
// python/memcert/ wraps each command in a typed function; nothing here computes anything itself.
//
// In process (docs/PYTHON.md): no watchdog, no address-space limit, no signal handler is installed in
// the interpreter. --max-seconds is enforced at the command's progress reports on the calling thread (an
// overrun there stops the command: exit 3, the CLI's over-budget line); Ctrl-C is noticed there too
// (KeyboardInterrupt). --max-memory bounds what the commands check before allocating (require_memory and
// the checker's budget); an allocation that fails all the same is std::bad_alloc, exit 3.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "memcert/version.hpp"

namespace py = pybind11;

namespace {

// Thrown from the progress hook to stop a command (Ctrl-C, or over --max-seconds). Not a std::exception:
// no command converts it into a result; run_command_line's last catch ends the run with exit 3.
struct StopRun {};

// One run at a time: the command line's options live in process-wide state. A run started from inside
// another (a progress callback calling memcert) would wait for itself: refused instead.
std::mutex g_run_mutex;
thread_local bool t_in_callback = false;  // this thread is inside a run's progress callback

// std::cout / std::cerr redirected into strings for the lifetime of the object.
struct Capture {
  std::ostringstream out, err;
  std::streambuf* old_out;
  std::streambuf* old_err;
  Capture() : old_out(std::cout.rdbuf(out.rdbuf())), old_err(std::cerr.rdbuf(err.rdbuf())) {}
  ~Capture() {
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
  }
};

py::tuple run(const std::vector<std::string>& args, py::object progress, double max_seconds,
              const std::string& self_executable) {
  if (t_in_callback) throw std::runtime_error("memcert commands do not nest: a progress callback called memcert");
  std::vector<std::string> argv_s{"memcert"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::thread::id caller = std::this_thread::get_id();
  const auto start = std::chrono::steady_clock::now();
  bool interrupted = false, over_time = false;
  PyObject *err_type = nullptr, *err_value = nullptr, *err_trace = nullptr;
  std::mutex hook_mutex;  // progress may be reported from several threads
  auto last_call = start - std::chrono::seconds(1);
  std::string last_label;

  memcert::cli::RunHooks hooks;
  hooks.in_process = true;
  hooks.self_executable = self_executable;
  std::string json_text, human_text;
  hooks.emitted = [&](const std::string& j, const std::string& h) {
    json_text = j;
    human_text = h;
  };
  hooks.progress = [&](const std::string& label, std::size_t done, std::size_t total) {
    const bool on_caller = std::this_thread::get_id() == caller;
    std::lock_guard<std::mutex> lock(hook_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (on_caller && !interrupted && !over_time) {
      if (max_seconds > 0 && std::chrono::duration<double>(now - start).count() > max_seconds) over_time = true;
      if (!over_time) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {  // Ctrl-C: Python's handler raised KeyboardInterrupt
          interrupted = true;
          PyErr_Fetch(&err_type, &err_value, &err_trace);
        }
      }
    }
    if (interrupted || over_time) {
      if (on_caller) throw StopRun{};
      return;
    }
    // The Python callback: at most 10 times a second, and at each new stage and each stage's end.
    if (progress.is_none()) return;
    if (label == last_label && done < total && now - last_call < std::chrono::milliseconds(100)) return;
    last_call = now;
    last_label = label;
    py::gil_scoped_acquire gil;
    try {
      t_in_callback = true;
      progress(label, done, total);
      t_in_callback = false;
    } catch (py::error_already_set& e) {  // a failing callback stops the command like Ctrl-C
      t_in_callback = false;
      if (!interrupted) {  // the first error is raised after the run; the caller stops at its next report
        interrupted = true;
        e.restore();
        PyErr_Fetch(&err_type, &err_value, &err_trace);
      }
      if (on_caller) throw StopRun{};
    }
  };

  int code = 0;
  std::string out, err;
  {
    py::gil_scoped_release unlocked;  // before waiting for another thread's run (which may need the GIL)
    std::lock_guard<std::mutex> one_run(g_run_mutex);
    Capture capture;
    code = memcert::cli::run_command_line(static_cast<int>(argv_s.size()), argv.data(), hooks);
    out = capture.out.str();
    err = capture.err.str();
  }
  if (interrupted) {
    if (!err_type) {
      err_type = PyExc_KeyboardInterrupt;
      Py_INCREF(err_type);
    }
    PyErr_Restore(err_type, err_value, err_trace);
    throw py::error_already_set();
  }
  if (over_time) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "memcert: undecided: over budget: more than %g s (--max-seconds)\n", max_seconds);
    err = buf;
    code = memcert::cli::kExitUndecided;
  }
  // Without --json (or for --help / --version) the printed text is the human one.
  if (human_text.empty() && json_text.empty()) human_text = out;
  return py::make_tuple(code, py::bytes(json_text).attr("decode")("utf-8", "replace"),
                        py::bytes(human_text).attr("decode")("utf-8", "replace"),
                        py::bytes(err).attr("decode")("utf-8", "replace"));
}

}  // namespace

PYBIND11_MODULE(_memcert, m) {
  m.doc() = "memcert's command line, run in process (use the memcert package's functions)";
  m.attr("__version__") = memcert::version_string;
#ifdef MEMCERT_EXECUTABLE
  m.attr("BUILD_EXECUTABLE") = MEMCERT_EXECUTABLE;
#else
  m.attr("BUILD_EXECUTABLE") = "";
#endif
  m.def("_run", &run, py::arg("argv"), py::arg("progress") = py::none(), py::arg("max_seconds") = 0.0,
        py::arg("self_executable") = "",
        "Run `memcert ARGV...` in process: (exit_code, json_text, human_text, stderr_text).\n"
        "progress(label, done, total) is called as the command reports; max_seconds > 0 stops the command\n"
        "(exit 3) at its first progress report past that time; Ctrl-C raises KeyboardInterrupt.");
}
