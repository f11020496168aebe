// Entry point of the checker: parse, read "kind" and "claim", dispatch to the kind's check.
#include <cmath>
#include <cstdio>
#include <exception>
#include <new>

#include "kernel/context.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/json.hpp"
#include "kernel/match_data.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert_checker {

// ---- The table of certificate kinds ----------------------------------------------------------------
// HOW TO ADD A KIND `foo`:
//   1. Write src/checker/check_foo.cpp defining, in namespace memcert_checker,
//        bool check_foo(const json::Value& cert, std::string& why);
//      It returns true iff the certificate is valid; otherwise it sets `why` to a specific reason
//      (use the readers in read.hpp, which do exactly that). It must check the "claim" it accepts.
//      It may throw nothing but std::bad_alloc (caught below); include only src/checker/*.hpp,
//      memcert/checker/*, GMP/MPFR and the standard library.
//   2. Add ONE line `X("foo", check_foo)` to the list below (it both declares the function and
//      registers it). No CMake change is needed: src/checker/*.cpp is globbed.
#define MEMCERT_CHECKER_KINDS(X)                \
  X("rank", check_rank)                         \
  X("kruskal", check_kruskal)                   \
  X("enclosure-rank", check_enclosure_rank)     \
  X("enclosure-rank-rump", check_enclosure_rank_rump) \
  X("claim", check_claim)                       \
  X("ks", check_ks)                             \
  X("theorem1", check_theorem1)               \
  X("dana24", check_dana24)                   \
  X("dana24-claim", check_dana24_claim)        \
  X("model", check_model)

using CheckFn = bool (*)(const json::Value& cert, std::string& why);
#define MEMCERT_DECLARE_KIND(name, fn) bool fn(const json::Value& cert, std::string& why);
MEMCERT_CHECKER_KINDS(MEMCERT_DECLARE_KIND)
#undef MEMCERT_DECLARE_KIND

namespace {
struct Kind {
  const char* name;
  CheckFn check;
};
#define MEMCERT_KIND_ENTRY(name, fn) Kind{name, fn},
const Kind kKinds[] = {MEMCERT_CHECKER_KINDS(MEMCERT_KIND_ENTRY)};
#undef MEMCERT_KIND_ENTRY

// The papers' names of two kinds, the same kinds as the table's names (which the engine writes).
struct KindAlias {
  const char* alias;
  const char* name;
};
const KindAlias kKindAliases[] = {{"mahdavi24", "theorem1"}, {"ks25", "ks"}};

Verdict reject(Verdict v, std::string why) {
  v.valid = false;
  v.reason = std::move(why);
  return v;
}

thread_local CheckContext* current = nullptr;
}  // namespace

std::string kind_name(const std::string& kind) {
  for (const KindAlias& a : kKindAliases)
    if (kind == a.alias) return a.name;
  return kind;
}

CheckContext& check_context() {
  static thread_local CheckContext fallback;  // a check called outside verify_certificate_text (tests)
  return current ? *current : fallback;
}
void note_applied(const std::string& rule) { check_context().applied.push_back(rule); }
void note_not_checked(const std::string& field) { check_context().not_checked.push_back(field); }

bool within_budget(double ops, double bytes, const std::string& what, std::string& why) {
  CheckContext& c = check_context();
  const double secs = ops / Budget::kOpsPerSecond;
  if (!(secs <= c.budget.max_seconds) || !(bytes <= c.budget.max_bytes)) {  // NaN / inf are over, too
    c.over_budget = true;
    c.needs_seconds = std::isfinite(secs) ? secs : 0;
    c.needs_bytes = std::isfinite(bytes) ? bytes : 0;
    char buf[160], secs_budget[40], bytes_budget[40];
    // An unlimited side (1e300, as for --max-memory 0) is said as such.
    if (c.budget.max_seconds >= 1e299) std::snprintf(secs_budget, sizeof secs_budget, "no time limit");
    else std::snprintf(secs_budget, sizeof secs_budget, "%.3g s", c.budget.max_seconds);
    if (c.budget.max_bytes >= 1e299) std::snprintf(bytes_budget, sizeof bytes_budget, "no memory limit");
    else std::snprintf(bytes_budget, sizeof bytes_budget, "%.3g MB", c.budget.max_bytes / 1e6);
    std::snprintf(buf, sizeof buf, " needs about %.3g s and %.3g MB (budget %s, %s)", secs, bytes / 1e6, secs_budget,
                  bytes_budget);
    why = "over budget: " + what + buf;
    return false;
  }
  return true;
}

namespace {
// Runs `body` with a fresh context installed; copies what the check noted into the verdict.
Verdict with_context(const Budget& budget, Verdict (*body)(const std::string&, const DataSupplier*),
                     const std::string& text, const DataSupplier* data, const ArraysSupplier* arrays = nullptr,
                     const TensorsSupplier* tensors = nullptr, const KsArraysSupplier* ks = nullptr) {
  CheckContext ctx;
  ctx.budget = budget;
  ctx.arrays = arrays;
  ctx.ks_arrays = ks;
  ctx.tensors = tensors;
  CheckContext* saved = current;
  current = &ctx;
  Verdict v = body(text, data);
  current = saved;
  if (ctx.over_budget && !v.valid) {
    v.undecided = true;
    v.needs_seconds = ctx.needs_seconds;
    v.needs_bytes = ctx.needs_bytes;
  }
  if (ctx.malformed && !v.valid && !v.undecided) v.malformed = true;
  v.applied = std::move(ctx.applied);
  v.not_checked = std::move(ctx.not_checked);
  if (v.valid) v.counts = std::move(ctx.counts);
  return v;
}

// The certificate must be about the supplied data set: parsed within the budget, then compared exactly.
bool match_supplied_data(const std::string& kind, const json::Value& cert, const DataSupplier& supply,
                         std::string& why) {
  if (!match_data_supported(kind)) {
    check_context().malformed = true;
    why = "kind: --data is not supported for \"" + kind + "\" certificates (only theorem1, ks, dana24)";
    return false;
  }
  // A theorem1 certificate that references its data file: DATA is tied to it by the digest, which
  // check_theorem1 recomputes from DATA's values (the caller's arrays supplier reads DATA).
  if (kind == "theorem1")
    if (const json::Value* cd = cert.find("data"); cd && cd->type == json::Type::Object && cd->find("file")) {
      note_applied("data: DATA replaces the file the certificate references; its contexts and queries are tied by the digest of their values, its labels compared exactly");
      check_context().data_replaces_file = true;
      return true;
    }
  // The same for a ks certificate that references its sequence file (check_ks reads DATA in its place).
  if (kind == "ks")
    if (const json::Value* cd = cert.find("data"); cd && cd->type == json::Type::Object && cd->find("file")) {
      note_applied("data: DATA replaces the file the certificate references; its sequences and labels are tied by the digest of their values");
      check_context().data_replaces_file = true;
      return true;
    }
  std::string text, error;
  if (!supply(kind, text, error)) {
    check_context().malformed = true;
    why = error.empty() ? "data: could not be read" : error;
    return false;
  }
  if (!within_budget(double(text.size()), double(text.size()) * kBytesPerInputByte, "reading the data set", why))
    return false;
  json::Value data;
  if (!json::parse(text, data, why)) {  // the supplier's own output: not the certificate's fault
    check_context().malformed = true;
    why = "data: " + why;
    return false;
  }
  return match_data(kind, cert, data, why);
}

// A certificate is a JSON object: the first byte after JSON whitespace must be '{'. Names that byte
// otherwise (a NUL of /dev/zero, a byte-order mark, an .npz's "PK"), without quoting the text.
bool starts_like_certificate(const std::string& text, std::string& why) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '{') return true;
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", c);
    why = "offset " + std::to_string(i) + ": expected a certificate (a JSON object, '{'), got " +
          (c == 0 ? std::string("a NUL byte") : c == 0xef ? std::string("a byte-order mark or non-ASCII byte 0xef") : "byte " + std::string(buf));
    return false;
  }
  return true;  // empty or blank: the parser says so
}

// The envelope's fields, read above by the dispatch itself.
void fields_read_by_verify(const json::Value& cert) {
  cert.find("kind");
  cert.find("claim");
}

Verdict verify_in_context(const std::string& json_text, const DataSupplier* data) {
  Verdict v;
  try {
    json::Value cert;
    std::string why;
    if (!starts_like_certificate(json_text, why)) {
      check_context().malformed = true;
      return reject(v, why);
    }
    // The text and a captured matrix are admitted before parsing; the tree is charged while it is built,
    // so a huge text is undecided rather than exhausting memory.
    const double text_cost = double(json_text.size()) * kTextBytesPerInputByte;
    if (!within_budget(double(json_text.size()), text_cost, "reading the JSON", why)) return reject(v, why);
    const double tree_room = check_context().budget.max_bytes - text_cost;
    bool over = false;
    auto parse_failed = [&] {
      if (over) {
        check_context().over_budget = true;
        // A parsed tree takes at most kBytesPerInputByte per byte of text: that, beside the text, suffices.
        check_context().needs_bytes = text_cost + double(json_text.size()) * kBytesPerInputByte;
      } else {
        check_context().malformed = true;
      }
      return reject(v, why);
    };
    // A large integer matrix at matrix.data is read straight into machine integers; it is used only by
    // kind "rank", and every other kind gets the whole tree (the text parsed again without capturing).
    json::IntMatrix captured;
    if (!json::parse_within(json_text, cert, why, &captured, tree_room, over)) return parse_failed();
    if (cert.type != json::Type::Object) return reject(v, "certificate: expected a JSON object");
    const json::Value* kind = cert.find("kind");
    if (!kind || kind->type != json::Type::String) return reject(v, "kind: missing or not a string");
    v.kind = kind->text;
    if (captured.present && v.kind != "rank") {
      captured = json::IntMatrix{};
      cert = json::Value{};
      if (!json::parse_within(json_text, cert, why, nullptr, tree_room, over)) return parse_failed();
      kind = cert.find("kind");
    }
    if (captured.present) check_context().int_matrix = &captured;
    const std::string name = kind_name(v.kind);  // the verdict keeps the kind as written
    const Kind* chosen = nullptr;
    for (const Kind& k : kKinds)
      if (name == k.name) chosen = &k;
    if (!chosen) return reject(v, "kind: unknown certificate kind \"" + v.kind + "\"");
    const json::Value* claim = cert.find("claim");
    if (!claim || claim->type != json::Type::String) {
      check_context().malformed = true;  // a field every certificate has, missing or mistyped: not well-typed
      return reject(v, "claim: missing or not a string");
    }
    v.claim = claim->text;
    json::FieldTracker fields(cert);
    fields_read_by_verify(cert);
    if (data && !match_supplied_data(name, cert, *data, why)) return reject(v, why);
    if (!chosen->check(cert, why)) return reject(v, why.empty() ? "rejected (no reason given)" : why);
    // What the verdict does not rest on, said: every field, at any depth, the check never read.
    for (const std::string& key : fields.unread()) note_not_checked(key + " (not read by the checker)");
    v.valid = true;
    return v;
  } catch (const std::bad_alloc&) {
    // Memory ran out although the estimate admitted the certificate: not a verdict on it.
    check_context().over_budget = true;
    return reject(v, "over budget: out of memory while checking");
  } catch (const std::exception& e) {  // defensive: a check must not throw, but never let it escape
    check_context().over_budget = true;
    return reject(v, std::string("undecided: unexpected error in the checker: ") + e.what());
  } catch (...) {
    check_context().over_budget = true;
    return reject(v, "undecided: unexpected error in the checker");
  }
}
}  // namespace

Verdict verify_certificate_text(const std::string& json_text, const Budget& budget) {
  return with_context(budget, verify_in_context, json_text, nullptr);
}
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const DataSupplier& data) {
  return with_context(budget, verify_in_context, json_text, &data);
}

namespace {
Verdict verify_file(const std::string& path, const Budget& budget, const DataSupplier* data,
                    const ArraysSupplier* arrays = nullptr, const TensorsSupplier* tensors = nullptr,
                    const KsArraysSupplier* ks = nullptr) {
  try {
    // Bounded read: never more than the budget admits plus one byte (so /dev/zero or a FIFO ends too).
    const double cap_d = budget.max_bytes / kTextBytesPerInputByte;
    const std::size_t cap = cap_d >= 1e15 ? std::size_t(1e15) : static_cast<std::size_t>(cap_d);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return reject(Verdict{}, path + ": cannot open");
    std::string text;
    char buf[1 << 16];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) {
      if (text.size() + got > cap) {
        // A seekable file's size says what would suffice; a stream's is not known.
        const long size = std::fseek(f, 0, SEEK_END) == 0 ? std::ftell(f) : -1L;
        std::fclose(f);
        Verdict v = reject(Verdict{}, "over budget: " + path + " is larger than " + std::to_string(cap) +
                                          " bytes (the memory budget / " + std::to_string(int(kTextBytesPerInputByte)) + ")");
        v.undecided = true;
        if (size > 0) v.needs_bytes = double(size) * kTextBytesPerInputByte;
        return v;
      }
      text.append(buf, got);
      // Not a certificate from its first byte on: read no further (a device of zeros is malformed at byte 0,
      // not over budget after the budget); verify_in_context names the byte.
      if (std::string unused; !starts_like_certificate(text, unused)) break;
    }
    const bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return reject(Verdict{}, path + ": read error");
    return with_context(budget, verify_in_context, text, data, arrays, tensors, ks);
  } catch (...) {
    return reject(Verdict{}, path + ": cannot read");
  }
}
}  // namespace

Verdict verify_certificate_file(const std::string& path, const Budget& budget) {
  return verify_file(path, budget, nullptr);
}
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const DataSupplier& data) {
  return verify_file(path, budget, &data);
}
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const DataSupplier* data,
                                const ArraysSupplier& arrays, const KsArraysSupplier* ks) {
  return verify_file(path, budget, data, &arrays, nullptr, ks);
}
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const DataSupplier* data,
                                const ArraysSupplier& arrays, const KsArraysSupplier* ks) {
  return with_context(budget, verify_in_context, json_text, data, &arrays, nullptr, ks);
}
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const TensorsSupplier& tensors,
                                const ArraysSupplier* arrays, const KsArraysSupplier* ks) {
  return verify_file(path, budget, nullptr, arrays, &tensors, ks);
}
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const TensorsSupplier& tensors,
                                const ArraysSupplier* arrays, const KsArraysSupplier* ks) {
  return with_context(budget, verify_in_context, json_text, nullptr, arrays, &tensors, ks);
}

}  // namespace memcert_checker

namespace memcert_checker {
void verify_set_threads(unsigned k) { set_checker_threads(k); }
}  // namespace memcert_checker
