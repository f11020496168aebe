// memcert verify CERT... [--data DATA] [--json] [--max-seconds S] [--max-memory MB]
// Re-checks a certificate with the independent checker (memcert_checker). With --data, the certificate
// must be about DATA: DATA is read with memcert's data readers (JSON / .npz, exactly as `construct` reads
// it), handed to the checker as exact JSON, and compared by the checker with the certificate's embedded
// data (docs/CERTIFICATES.md "Tying a certificate to a data set"); a difference is exit 1. JSON (docs/CLI.md):
//   {"valid","kind","claim","reason" (when invalid or undecided),"applied":[rules],"not_checked":[fields],
//    "undecided" (when over budget),"seconds"} (+ a kind "model" certificate's counts: "certified_correct",
//    "certified_wrong", "undecided" as integers)
// Exit: 0 valid, 1 rejected (well-formed but false), 2 bad input (unreadable, not JSON, or a field of the
// wrong type / syntax / length: one line "CERT: field: expected ..."), 3 undecided: over budget, decided
// from the checker's cost estimate before the work starts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "attention_arrays.hpp"
#include "ks_arrays.hpp"
#include "model_tensors.hpp"
#include "memcert/data/dataset.hpp"
#include "memcert/data/file_kind.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/theory/dana24/assoc_data.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
namespace cmd_verify {

struct VerifyArgs {
  std::vector<std::string> certs;  // as given: one, or several (run_verify_many)
  std::string cert;                // the one being checked
  std::string data;  // --data: empty = the certificate's own embedded data
  bool json = false;
};

// A class label of an attention data set (a non-negative integer, checked by its reader) as a JSON integer.
nlohmann::json class_label_json(const Rational& q, const std::string& file, std::size_t t) {
  if (q.get_den() != 1 || q < 0 || !q.get_num().fits_ulong_p())
    throw input_error(file, "class_labels[" + std::to_string(t) + "]", "expected a class label in [0, 2^64)");
  return q.get_num().get_ui();
}

// The data set at `path`, read as a certificate of kind `kind` was built from it, as the exact JSON the
// checker compares (layout: docs/CERTIFICATES.md). Throws InputError for an unreadable / malformed DATA.
std::string data_as_exact_json(const std::string& path, const std::string& kind) {
  nlohmann::json j;
  if (kind == "theorem1") {
    const AttentionDataset ds = attention_dataset_read(path);
    if (ds.labels_integer_dtype) note(attention_labels_note());
    j["contexts"] = nlohmann::json::array();
    for (const auto& e : ds.contexts) j["contexts"].push_back(qmat_to_json(e));
    j["queries"] = qmat_to_json(ds.queries);
    if (ds.labels && ds.class_labels) {
      j["class_labels"] = nlohmann::json::array();
      for (std::size_t t = 0; t < ds.labels->rows(); ++t) j["class_labels"].push_back(class_label_json((*ds.labels)(t, 0), path, t));
    } else if (ds.labels) {
      j["labels"] = qmat_to_json(*ds.labels);
    }
  } else if (kind == "ks") {
    const SequenceDataset ds = sequence_dataset_read(path);
    j["sequences"] = nlohmann::json::array();
    for (const auto& x : ds.sequences) j["sequences"].push_back(qmat_to_json(x));
    if (!ds.token_labels.empty()) j["token_labels"] = ds.token_labels;
    else if (!ds.labels.empty()) j["labels"] = ds.labels;
  } else if (kind == "dana24") {
    const dana24::AssocData a = dana24::assoc_data_read(path);
    j = {{"vocab", a.N}, {"sequences", a.sequences}, {"next", a.next}};
  } else {
    throw input_error(path, "", "expected a certificate of kind theorem1, ks or dana24 for --data, got kind \"" + kind + "\"");
  }
  return j.dump();
}

// A certificate that is not a regular file (a pipe, /dev/stdin): read here, up to the checker's cap (the
// memory budget / kTextBytesPerInputByte), from a descriptor opened without blocking, so a FIFO nobody writes to
// is empty (bad input) instead of a hang at open(). nullopt: over the cap (undecided, as the checker says).
std::optional<std::string> read_stream_capped(const std::string& path, double max_bytes) {
  const double cap_d = max_bytes / memcert_checker::kTextBytesPerInputByte;
  const std::size_t cap = cap_d >= 1e15 ? std::size_t(1e15) : static_cast<std::size_t>(cap_d);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open");
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end, no writer (EAGAIN) or a read error: what was read is checked
    if (text.size() + static_cast<std::size_t>(got) > cap) {
      ::close(fd);
      return std::nullopt;
    }
    text.append(buf.data(), static_cast<std::size_t>(got));
    // Not a certificate from its first byte on (a device of zeros, binary data): the checker says where.
    const auto first = text.find_first_not_of(" \t\n\r");
    if (first != std::string::npos && text[first] != '{') break;
  }
  ::close(fd);
  return text;
}

// One certificate's result: the JSON object and the human text verify prints, and its exit status.
struct Outcome {
  int code = kExitHolds;
  nlohmann::json j;
  std::string human;
};

// Checks args.cert. Bad input (unreadable, malformed, a bad DATA) is thrown as InputError, as main() reports it.
Outcome check_one(const VerifyArgs& args) {
  struct stat st {};
  if (::stat(args.cert.c_str(), &st) != 0 || ::access(args.cert.c_str(), R_OK) != 0)
    throw InputError(args.cert + ": cannot open");
  expect_certificate_file(args.cert);  // an array, archive or model: named, with what verify takes
  memcert_checker::Budget budget;
  const RunBudget& rb = run_budget();
  budget.max_seconds = rb.max_seconds > 0 ? rb.max_seconds : 1e300;
  budget.max_bytes = rb.max_memory_mb > 0 ? rb.max_memory_mb * 1024 * 1024 : 1e300;
  // The file is read by the checker, bounded by the memory budget (never an unbounded stream).
  // Regular files are read by the checker; anything else (a pipe, a device) here (read_stream_capped).
  std::optional<std::string> stream_text;
  const bool regular = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
  if (!regular) {
    stream_text = read_stream_capped(args.cert, budget.max_bytes);
    if (!stream_text) {
      memcert_checker::Verdict over;
      over.undecided = true;
      over.reason = "over budget: " + args.cert + " is larger than the memory budget / " +
                    std::to_string(int(memcert_checker::kTextBytesPerInputByte)) + " bytes";
      nlohmann::json j{{"valid", false}, {"kind", ""}, {"claim", ""}, {"applied", nlohmann::json::array()},
                       {"not_checked", nlohmann::json::array()}, {"reason", over.reason}, {"undecided", true},
                       {"portable", memcert_checker::checker_portable()}};
      return Outcome{kExitUndecided, j, "UNDECIDED: certificate: " + over.reason};
    }
  }
  memcert_checker::Verdict v;
  // A theorem1 certificate may reference its data file (docs/CERTIFICATES.md "Data by reference"): the
  // checker asks for it through this supplier (DATA when given, else the file the certificate names).
  const memcert_checker::ArraysSupplier arrays = attention_arrays_supplier(args.data, args.cert);
  // The same for a ks certificate that references its sequence file.
  const memcert_checker::KsArraysSupplier ks_arrays = ks_arrays_supplier(args.data, args.cert);
  // A kind "model" certificate references its model file and data file: read through this supplier.
  const memcert_checker::TensorsSupplier tensors = model_tensors_supplier(args.cert);
  // The checker reports nothing itself (it includes no engine code): one stage line for the whole check.
  progress("verify: independent checker", 0, 1);
  if (args.data.empty()) {
    v = stream_text ? memcert_checker::verify_certificate_text(*stream_text, budget, tensors, &arrays, &ks_arrays)
                    : memcert_checker::verify_certificate_file(args.cert, budget, tensors, &arrays, &ks_arrays);
  } else {
    // DATA is read only once the checker has parsed the certificate and knows its kind; a bad DATA is
    // reported as DATA's own bad input (exit 2), not as the certificate's.
    if (::access(args.data.c_str(), R_OK) != 0) throw InputError(args.data + ": cannot open");
    std::optional<InputError> data_error;
    auto supply = [&](const std::string& kind, std::string& out, std::string& error) {
      try {
        out = data_as_exact_json(args.data, kind);
        return true;
      } catch (const InputError& e) {
        data_error = e;
        error = e.what();
        return false;
      }
    };
    const memcert_checker::DataSupplier data_supply = supply;
    v = stream_text ? memcert_checker::verify_certificate_text(*stream_text, budget, &data_supply, arrays, &ks_arrays)
                    : memcert_checker::verify_certificate_file(args.cert, budget, &data_supply, arrays, &ks_arrays);
    if (data_error) throw *data_error;
  }
  progress("verify: independent checker", 1, 1);
  if (v.malformed) throw InputError(args.cert + ": " + v.reason);
  // Not a certificate at all (no string "kind": a data set or a list given by mistake) is bad input, not
  // a rejected certificate; an over-budget read stays undecided.
  if (!v.valid && !v.undecided && v.kind.empty())
    throw input_error(args.cert, "", "expected a certificate (a JSON object with a string \"kind\"), got: " + v.reason);
  nlohmann::json j{{"valid", v.valid}, {"kind", v.kind}, {"claim", v.claim},
                   {"applied", v.applied}, {"not_checked", v.not_checked},
                   {"portable", memcert_checker::checker_portable()}};
  if (v.undecided) v.reason += budget_suffices_text(v.needs_seconds, v.needs_bytes);  // what would have sufficed
  if (!v.valid) j["reason"] = v.reason;
  if (v.undecided) j["undecided"] = true;
  for (const auto& [name, count] : v.counts) j[name] = count;  // kind "model": certified_correct, ...
  // The human lines show what the certificate says (kind, claim, reasons quoting it) escaped and cut: a
  // certificate must not write control sequences to the terminal or flood it (JSON escapes on its own).
  std::string what = (v.kind.empty() ? std::string("certificate") : printable_argument(v.kind, 80) + " certificate") +
                     (v.claim.empty() ? "" : " (claim " + printable_argument(v.claim, 120) + ")");
  std::string human = v.valid       ? "VALID: " + what + " re-checked by the independent checker"
                      : v.undecided ? "UNDECIDED: " + what + ": " + printable_argument(v.reason, 600)
                                    : "INVALID: " + what + ": " + printable_argument(v.reason, 600);
  if (!v.counts.empty()) {
    human += "\n  counts:";
    for (std::size_t i = 0; i < v.counts.size(); ++i)
      human += (i ? ", " : " ") + v.counts[i].first + " " + std::to_string(v.counts[i].second);
  }
  for (const auto& r : v.applied) human += "\n  applied: " + printable_argument(r, 600);
  for (const auto& f : v.not_checked) human += "\n  not checked: " + printable_argument(f, 600);
  if (memcert_checker::checker_portable()) human += "\n  checker: portable mode (MEMCERT_CHECKER_PORTABLE=1: no CPU-specific instructions)";
  return Outcome{v.valid ? kExitHolds : v.undecided ? kExitUndecided : kExitNegative, j, human};
}

// Several certificates (docs/CLI.md "verify"): each checked on its own, in the order given, with the whole
// budget (the watchdog restarts per certificate), and reported as soon as it is decided: one human line
// "CERT: VERDICT: ..." or one JSON object per line with "certificate" and "exit" added. Bad input in one
// file is that file's line (exit 2 in it), and the others are still checked. The exit status is the most
// severe over the files: 2 (some bad input) before 1 (some rejected) before 3 (some undecided) before 0.
int severity(int code) { return code == kExitBadInput ? 3 : code == kExitNegative ? 2 : code == kExitUndecided ? 1 : 0; }

int run_verify_many(const VerifyArgs& args) {
  int worst = kExitHolds;
  for (const std::string& cert : args.certs) {
    const auto start = std::chrono::steady_clock::now();
    budget_restart_clock();
    VerifyArgs one = args;
    one.cert = cert;
    Outcome o;
    try {
      o = check_one(one);
    } catch (const InputError& e) {
      // The message as main() would print it, without a leading "CERT: " (the line names CERT first).
      std::string why = message_line(e.what());
      const std::string own = message_line(cert) + ": ";
      if (why.compare(0, own.size(), own) == 0) why.erase(0, own.size());
      o.code = kExitBadInput;
      o.j = {{"valid", false}, {"kind", ""}, {"claim", ""}, {"bad_input", true}, {"reason", why}};
      o.human = "BAD INPUT: " + why;
    } catch (const std::bad_alloc&) {
      o.code = kExitUndecided;
      o.j = {{"valid", false}, {"kind", ""}, {"claim", ""}, {"undecided", true},
             {"reason", "over budget: out of memory (--max-memory)"}};
      o.human = "UNDECIDED: over budget: out of memory (--max-memory)";
    }
    if (severity(o.code) > severity(worst)) worst = o.code;
    std::vector<std::string> notes = notes_take();
    if (args.json) {
      nlohmann::json line{{"certificate", cert}, {"exit", o.code}};
      for (auto& [key, value] : o.j.items()) line[key] = value;
      if (!notes.empty()) line["notes"] = notes;
      line["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cout << line.dump() << std::endl;
    } else {
      // The first line of the one-certificate text (--json has the rest: applied rules, not checked, counts).
      std::string first = o.human.substr(0, o.human.find('\n'));
      std::cout << printable_argument(cert, 200) << ": " << first;
      for (const std::string& n : notes) std::cout << " (note: " << printable_argument(n, 200) << ")";
      std::cout << std::endl;
    }
  }
  return worst;
}

int run_verify(const VerifyArgs& args) {
  if (args.certs.size() > 1) return run_verify_many(args);
  const auto start = std::chrono::steady_clock::now();
  VerifyArgs one = args;
  one.cert = args.certs.empty() ? std::string() : args.certs.front();
  const Outcome o = check_one(one);
  emit(args.json, o.j, o.human, start);
  return o.code;
}

const CommandRegistrar reg{{90, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* sub = root.add_subcommand("verify", "Re-check a certificate with the independent checker");
  sub->add_option("CERT", args->certs,
                  "Certificate file(s) (JSON); several: one line (--json: one JSON object) per certificate, in order")
      ->required();
  sub->add_option("--data", args->data,
                  "Data set (JSON / .npz) the certificate must be about: its embedded data must equal DATA exactly "
                  "(theorem1, ks, dana24)");
  sub->add_flag("--json", args->json, "Print one JSON object (several certificates: one per line)");
  bind(sub, [args] { return run_verify(*args); });
}}};

}  // namespace
}  // namespace memcert::cli
