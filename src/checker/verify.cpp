// Entry point of the checker: parse, read "kind" and "claim", dispatch to the kind's check.
#include <exception>
#include <fstream>
#include <new>
#include <sstream>

#include "float_kernels.hpp"
#include "json.hpp"
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
  X("dana24-claim", check_dana24_claim)

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

Verdict reject(Verdict v, std::string why) {
  v.valid = false;
  v.reason = std::move(why);
  return v;
}
}  // namespace

Verdict verify_certificate_text(const std::string& json_text) {
  Verdict v;
  try {
    json::Value cert;
    std::string why;
    if (!json::parse(json_text, cert, why)) return reject(v, why);
    if (cert.type != json::Type::Object) return reject(v, "certificate: expected a JSON object");
    const json::Value* kind = cert.find("kind");
    if (!kind || kind->type != json::Type::String) return reject(v, "kind: missing or not a string");
    v.kind = kind->text;
    const json::Value* claim = cert.find("claim");
    if (!claim || claim->type != json::Type::String) return reject(v, "claim: missing or not a string");
    v.claim = claim->text;
    for (const Kind& k : kKinds) {
      if (v.kind != k.name) continue;
      if (!k.check(cert, why)) return reject(v, why.empty() ? "rejected (no reason given)" : why);
      v.valid = true;
      return v;
    }
    return reject(v, "kind: unknown certificate kind \"" + v.kind + "\"");
  } catch (const std::bad_alloc&) {
    return reject(v, "out of memory while checking");
  } catch (const std::exception& e) {  // defensive: a check must not throw, but never let it escape
    return reject(v, std::string("internal error: ") + e.what());
  } catch (...) {
    return reject(v, "internal error");
  }
}

Verdict verify_certificate_file(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return reject(Verdict{}, path + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return reject(Verdict{}, path + ": read error");
    return verify_certificate_text(ss.str());
  } catch (...) {
    return reject(Verdict{}, path + ": cannot read");
  }
}

}  // namespace memcert_checker

namespace memcert_checker {
void verify_set_threads(unsigned k) { set_checker_threads(k); }
}  // namespace memcert_checker
