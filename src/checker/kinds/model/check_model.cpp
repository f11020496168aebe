// kind "model", claim "certified predictions of a trained model" (docs/CERTIFICATES.md, kind "model"):
// a trained model's verdicts on its data set, re-derived from the weights and the data alone. The model
// file's tensors and the data set's arrays are asked of the caller's suppliers (by the file names the
// certificate gives), their digests recomputed and compared; then every example the certificate claims
// CORRECT must have its margin enclosure proved > 0 and >= min_margin (regression: its error |f - y| <=
// tolerance and <= max_error), every example claimed WRONG margin <= 0 (regression: error > tolerance);
// undecided examples need nothing. Each enclosure comes from the checker's own forward pass
// (forward_*.cpp): first in doubles with a rigorous error bound, then, for the examples that bound does
// not decide, in MPFR intervals at 128, 256 and 512 bits, before a rejection. Examples run on
// checker_threads() threads; the first example whose claim is refuted (else the first one left undecided at
// 512 bits) in index order is reported, whatever the number of threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "kernel/context.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/read.hpp"
#include "kinds/model/model_arch.hpp"

namespace memcert_checker {

namespace model_kind {
namespace {

const char* const kModelClaim = "certified predictions of a trained model";
// An MPFR interval product (four corner products and two additions at 128 bits) against a double
// multiply-add: about this many elementary operations (measured, with a margin), times bits / 128.
constexpr double kMpfrOpsPerProduct = 60;
const long kLadder[] = {128, 256, 512};

// A strictly ascending list of indices < T.
bool read_ascending(const Value& cert, const std::string& key, std::size_t T, bool required, std::vector<std::size_t>& out,
                    std::string& why) {
  const Value* v = cert.find(key);
  out.clear();
  if (!v) {
    if (!required) return true;
    check_context().malformed = true;
    why = key + ": missing";
    return false;
  }
  if (v->type != json::Type::Array) {
    check_context().malformed = true;
    why = key + ": expected an array of example indices";
    return false;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    std::size_t k;
    const std::string w = key + "[" + std::to_string(i) + "]";
    if (T == 0) {
      why = w + ": no index is in range (T = 0)";
      return false;
    }
    if (!read_size(*v->at(i), w, T - 1, k, why)) return false;
    if (!out.empty() && k <= out.back()) {
      why = w + ": index " + std::to_string(k) + (k == out.back() ? " repeated" : " out of order") +
            " (expected strictly ascending indices)";
      return false;
    }
    out.push_back(k);
  }
  return true;
}

enum class Claim : unsigned char { correct, wrong, undecided };
enum class Status : unsigned char { open, proved, refuted };

struct Rule {
  bool regression = false;
  mpq_class tol, min_margin, max_error;
  bool have_bound = false;  // min_margin / max_error given
  // Proved: the claim holds for every value in the enclosure; refuted: for none.
  Status decide(Claim c, const Bounds& b) const {
    const mpq_class &lo = b.lo, &hi = b.hi;
    if (!regression) {
      if (c == Claim::correct) {
        if (sgn(lo) > 0 && lo >= min_margin) return Status::proved;
        if (sgn(hi) <= 0 || hi < min_margin) return Status::refuted;
        return Status::open;
      }
      if (sgn(hi) <= 0) return Status::proved;
      if (sgn(lo) > 0) return Status::refuted;
      return Status::open;
    }
    if (c == Claim::correct) {
      if (hi <= tol && hi <= max_error) return Status::proved;
      if (lo > tol || lo > max_error) return Status::refuted;
      return Status::open;
    }
    if (lo > tol) return Status::proved;
    if (hi <= tol) return Status::refuted;
    return Status::open;
  }
};

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

}  // namespace
}  // namespace model_kind


namespace model_kind {
namespace {

// The certificate's fields, read once (read_model_certificate).
struct ModelCertificate {
  std::string arch, task, model_file, model_digest, data_file, data_digest;
  Rule rule;
  std::size_t heads = 0, T = 0, n_correct = 0;
  std::vector<std::size_t> wrong, undecided, f32;
  bool lists_f32 = false;
};

// The referenced tensors (read_model_inputs).
struct ModelInputs {
  std::vector<NamedArray> model, data;
  AttentionArrays att;
  double input_values = 0;  // values read, for the cost
  std::size_t data_T = 0;
};

// Stage 1: claim, version, arch, task, heads, tolerance, files and digests, T, the verdict lists, the bound.
bool read_model_certificate(const Value& cert, ModelCertificate& k, std::string& why) {
  std::string claim;
  std::string &arch = k.arch, &task = k.task;
  Rule& rule = k.rule;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != kModelClaim) {
    why = "claim: expected \"" + std::string(kModelClaim) + "\"";
    return false;
  }
  const Value* ver = member(cert, "", "version", json::Type::Number, why);
  std::size_t version = 0;
  if (!ver || !read_size(*ver, "version", 1000, version, why)) return false;
  if (version != 1) {
    check_context().malformed = true;
    why = "version: expected 1, got " + std::to_string(version);
    return false;
  }
  if (!read_string(cert, "", "arch", arch, why) || !read_string(cert, "", "task", task, why)) return false;
  if (arch != "mahdavi24-baseline" && arch != "dana24-aot" && arch != "mha") {
    check_context().malformed = true;
    why = "arch: expected \"mahdavi24-baseline\", \"dana24-aot\" or \"mha\"";
    return false;
  }
  if (task != "classification" && task != "regression") {
    check_context().malformed = true;
    why = "task: expected \"classification\" or \"regression\"";
    return false;
  }
  rule.regression = task == "regression";
  if (rule.regression && arch == "dana24-aot") {
    why = "task: dana24-aot predicts a next token (classification only)";
    return false;
  }
  std::size_t& heads = k.heads;
  if (arch == "mahdavi24-baseline") {
    if (cert.find("heads")) {
      check_context().malformed = true;
      why = "heads: not a field of a mahdavi24-baseline certificate (its heads are the tensors' first dimension)";
      return false;
    }
  } else {
    const Value* hv = member(cert, "", "heads", json::Type::Number, why);
    if (!hv || !read_size(*hv, "heads", kMaxDimension, heads, why)) return false;
    if (heads == 0) {
      why = "heads: expected at least 1";
      return false;
    }
  }
  if (rule.regression) {
    const Value* tv = member(cert, "", "tolerance", json::Type::String, why);
    if (!tv || !read_rational(*tv, "tolerance", rule.tol, why)) return false;
    if (rule.tol < 0) {
      why = "tolerance: expected a non-negative number";
      return false;
    }
  } else if (cert.find("tolerance")) {
    check_context().malformed = true;
    why = "tolerance: only a regression certificate has one";
    return false;
  }
  std::string &model_file = k.model_file, &model_digest = k.model_digest, &data_file = k.data_file,
              &data_digest = k.data_digest;
  const Value* mv = member(cert, "", "model", json::Type::Object, why);
  if (!mv || !read_string(*mv, "model", "file", model_file, why) || !read_string(*mv, "model", "digest", model_digest, why))
    return false;
  const Value* dv = member(cert, "", "data", json::Type::Object, why);
  if (!dv || !read_string(*dv, "data", "file", data_file, why) || !read_string(*dv, "data", "digest", data_digest, why))
    return false;
  const Value* tv = member(cert, "", "T", json::Type::Number, why);
  std::size_t& T = k.T;
  if (!tv || !read_size(*tv, "T", kMaxDimension, T, why)) return false;
  auto &wrong = k.wrong, &undecided = k.undecided, &f32 = k.f32;
  if (!read_ascending(cert, "wrong", T, true, wrong, why) || !read_ascending(cert, "undecided", T, true, undecided, why) ||
      !read_ascending(cert, "float32_disagreements", T, false, f32, why))
    return false;
  for (std::size_t i = 0, j = 0; i < wrong.size() && j < undecided.size();) {  // both ascending: disjoint?
    if (wrong[i] == undecided[j]) {
      why = "undecided: example " + std::to_string(undecided[j]) + " is also listed as wrong";
      return false;
    }
    if (wrong[i] < undecided[j]) ++i;
    else ++j;
  }
  const std::size_t n_correct = k.n_correct = T - wrong.size() - undecided.size();
  const std::string bound_key = rule.regression ? "max_error" : "min_margin";
  if (const Value* bv = cert.find(bound_key)) {
    if (!read_rational(*bv, bound_key, rule.regression ? rule.max_error : rule.min_margin, why)) return false;
    rule.have_bound = true;
  } else if (n_correct > 0) {
    check_context().malformed = true;
    why = bound_key + ": missing (required when some example is claimed correct)";
    return false;
  }
  if (cert.find(rule.regression ? "min_margin" : "max_error")) {
    check_context().malformed = true;
    why = std::string(rule.regression ? "min_margin" : "max_error") + ": not a field of a " + task + " certificate";
    return false;
  }

  k.lists_f32 = cert.find("float32_disagreements") != nullptr;
  return true;
}

// Stage 2: the model's and the data's tensors from the suppliers, their digests recomputed and compared.
bool read_model_inputs(const ModelCertificate& k, ModelInputs& in, std::string& why) {
  const std::string &arch = k.arch, &model_file = k.model_file, &data_file = k.data_file;
  std::vector<NamedArray> &model = in.model, &data = in.data;
  AttentionArrays& att = in.att;
  double& input_values = in.input_values;
  std::size_t& data_T = in.data_T;
  CheckContext& ctx = check_context();
  if (!ctx.tensors) {
    ctx.malformed = true;
    why = "model.file: the certificate references its model (" + model_file +
          ") and data; they must be supplied (memcert verify reads the files it names)";
    return false;
  }
  std::string error;
  if (!(*ctx.tensors)(model_file, "model", arch, model, error)) {
    ctx.malformed = true;
    why = error.empty() ? "model.file: " + model_file + ": could not be read" : error;
    return false;
  }
  for (const NamedArray& a : model) input_values += double(a.size());
  const std::string mine = tensors_digest(model);
  if (mine.empty()) {
    why = "model: a tensor has a non-finite value, a repeated name or a size that disagrees with its shape";
    return false;
  }
  if (mine != k.model_digest) {
    why = "model.digest: the model supplied has digest " + mine + ", the certificate names " + k.model_digest;
    return false;
  }
  std::string data_mine;
  if (arch == "mha") {
    if (!ctx.arrays) {
      ctx.malformed = true;
      why = "data.file: the certificate references its data (" + data_file + "); the data file must be supplied";
      return false;
    }
    if (!(*ctx.arrays)(data_file, att, error)) {
      ctx.malformed = true;
      why = error.empty() ? "data.file: " + data_file + ": could not be read" : error;
      return false;
    }
    using L = AttentionArrays::Labels;
    if (att.context_values() != att.T * att.n * att.d || att.queries.size() != att.T * att.d ||
        (att.label_kind == L::classes && att.classes.size() != att.T) ||
        (att.label_kind == L::real && att.labels.size() != att.T * att.d_out)) {
      why = "data: the contexts / queries / labels supplied disagree with their shapes";
      return false;
    }
    for (std::size_t i = 0; i < att.context_values(); ++i)
      if (!std::isfinite(att.context_value(i))) { why = "data: a value is not finite"; return false; }
    for (double x : att.queries)
      if (!std::isfinite(x)) { why = "data: a value is not finite"; return false; }
    data_mine = attention_arrays_digest(att, att.T);
    data_T = att.T;
    input_values += double(att.context_values() + att.queries.size());
  } else {
    if (!(*ctx.tensors)(data_file, "data", arch, data, error)) {
      ctx.malformed = true;
      why = error.empty() ? "data.file: " + data_file + ": could not be read" : error;
      return false;
    }
    for (const NamedArray& a : data) input_values += double(a.size());
    data_mine = tensors_digest(data);
    if (data_mine.empty()) {
      why = "data: an array has a non-finite value, a repeated name or a size that disagrees with its shape";
      return false;
    }
  }
  if (data_mine != k.data_digest) {
    why = "data.digest: the data supplied have digest " + data_mine + ", the certificate names " + k.data_digest;
    return false;
  }

  return true;
}

// Stage 3: the architecture over those tensors (shapes checked) and each example's claim.
bool build_model_arch(const ModelCertificate& k, ModelInputs& in, std::unique_ptr<ModelArch>& out, std::vector<Claim>& claims,
                      std::string& why) {
  const std::string& arch = k.arch;
  const std::size_t T = k.T;
  std::size_t data_T = in.data_T;
  std::unique_ptr<ModelArch>& m = out;
  if (arch == "mahdavi24-baseline") m = make_mahdavi24_baseline(in.model, in.data, k.rule.regression, why);
  else if (arch == "dana24-aot") m = make_dana24_aot(in.model, in.data, k.heads, why);
  else m = make_mha(in.model, in.att, k.heads, k.rule.regression, why);
  if (!m) return false;
  if (arch != "mha") data_T = m->examples();
  if (data_T != T) {
    why = "T: the certificate is about " + std::to_string(T) + " examples, the data supplied have " + std::to_string(data_T);
    return false;
  }
  claims.assign(T, Claim::correct);  // T is the data's: no larger than what was supplied
  for (std::size_t t : k.wrong) claims[t] = Claim::wrong;
  for (std::size_t t : k.undecided) claims[t] = Claim::undecided;
  note_applied(std::string("model: every verdict re-derived from the model's tensors and the data (digests ") +
               "recomputed); margins enclosed by the checker's own forward pass, doubles with a rigorous error "
               "bound, then MPFR at 128, 256, 512 bits");
  if (k.lists_f32)
    note_not_checked("float32_disagreements: " + std::to_string(k.f32.size()) +
                     " example(s) listed where PyTorch's float32 evaluation may disagree (informational, not a verdict)");

  return true;
}

// Stage 4: the cost admitted, then every claim decided by the ladder; the first refuted (else the first
// undecided at 512 bits) example in index order is the reason.
bool run_model_ladder(const ModelCertificate& k, ModelArch& m, const std::vector<Claim>& claims, double input_values,
                      std::string& why) {
  const std::size_t T = k.T;
  const Rule& rule = k.rule;
  const auto& undecided = k.undecided;
  // Cost: digests (about 2 operations per value) and the double pass.
  const unsigned threads = mpfr_buildopt_tls_p() ? std::max(checker_threads(), 1u) : 1u;
  const std::size_t to_check = T - undecided.size();
  const double ops_double = 2.0 * input_values + double(to_check) * m.ops_double();
  const double bytes = m.bytes() + 8.0 * input_values + double(threads) * 64.0 * m.ops_double() / 1e3 + 1e6;
  if (!within_budget(ops_double, bytes, "model forward passes", why)) return false;
  if (!m.prepare()) {
    why = "model: a value of the forward pass is not finite";
    return false;
  }

  // The ladder: doubles, then MPFR 128 / 256 / 512 bits for what is still open.
  std::vector<std::size_t> open;
  for (std::size_t t = 0; t < T; ++t)
    if (claims[t] != Claim::undecided) open.push_back(t);
  std::vector<Status> status(T, Status::open);
  std::vector<Bounds> last(T);
  std::vector<char> evaluated(T, 0);  // some evaluation of the example was finite
  std::size_t decided_by[4] = {0, 0, 0, 0};
  const long bits_seq[4] = {53, kLadder[0], kLadder[1], kLadder[2]};
  for (int level = 0; level < 4 && !open.empty(); ++level) {
    const long bits = bits_seq[level];
    if (level == 1) {
      const double extra = double(open.size()) * m.ops_mpfr() * kMpfrOpsPerProduct * (1 + 2 + 4);
      if (!within_budget(ops_double + extra, bytes, std::to_string(open.size()) + " example(s) in MPFR (the double bound did not decide them)", why))
        return false;
    }
    parallel_for(open.size(), threads, [&](std::size_t i, unsigned) {
      const std::size_t t = open[i];
      Bounds b;
      if (!m.evaluate(t, bits, b)) return;  // not finite at this precision: stays open
      last[t] = b;
      evaluated[t] = 1;
      status[t] = rule.decide(claims[t], b);
    });
    std::vector<std::size_t> still;
    for (std::size_t t : open) {
      if (status[t] == Status::proved) ++decided_by[level];
      else if (status[t] == Status::open) still.push_back(t);
    }
    // A refuted claim needs no more precision: the enclosure already excludes it.
    open.clear();
    for (std::size_t t : still) open.push_back(t);
    bool refuted = false;
    for (std::size_t t = 0; t < T && !refuted; ++t) refuted = status[t] == Status::refuted;
    if (refuted) break;
  }
  // The first example whose claim the enclosure refutes, else the first one 512 bits did not decide.
  std::size_t bad = T;
  for (std::size_t t = 0; t < T && bad == T; ++t)
    if (status[t] == Status::refuted) bad = t;
  for (std::size_t t = 0; t < T && bad == T; ++t)
    if (claims[t] != Claim::undecided && status[t] != Status::proved) bad = t;
  if (bad < T) {
    const std::size_t t = bad;
    const std::string ex = "example " + std::to_string(t) + ": ";
    const std::string enc = evaluated[t] ? "[" + num(last[t].lo.get_d()) + ", " + num(last[t].hi.get_d()) + "]"
                                         : std::string("unbounded (a value was not finite)");
    const bool settled = status[t] == Status::refuted;
    const std::string how = settled ? "" : " (not decided at 512 bits)";
    if (!rule.regression)
      why = ex + (claims[t] == Claim::correct ? "claimed correct, but its margin is not proved > 0 and >= min_margin"
                                              : "claimed wrong, but its margin is not proved <= 0") +
            "; the checker's enclosure of the margin is " + enc + how;
    else
      why = ex + (claims[t] == Claim::correct ? "claimed correct, but its error |f(x) - y| is not proved <= tolerance and <= max_error"
                                              : "claimed wrong, but its error |f(x) - y| is not proved > tolerance") +
            "; the checker's enclosure of the error is " + enc + how;
    return false;
  }
  std::string by = "model: " + std::to_string(decided_by[0]) + " example(s) decided by the double pass";
  for (int level = 1; level < 4; ++level)
    if (decided_by[level] > 0)
      by += ", " + std::to_string(decided_by[level]) + " by MPFR at " + std::to_string(bits_seq[level]) + " bits";
  note_applied(by);
  return true;
}

}  // namespace
}  // namespace model_kind

bool check_model(const Value& cert, std::string& why) {
  using namespace model_kind;
  ModelCertificate k;
  ModelInputs in;
  std::unique_ptr<ModelArch> m;
  std::vector<Claim> claims;
  if (!read_model_certificate(cert, k, why) || !read_model_inputs(k, in, why) || !build_model_arch(k, in, m, claims, why) ||
      !run_model_ladder(k, *m, claims, in.input_values, why))
    return false;
  check_context().counts = {{"certified_correct", k.n_correct}, {"certified_wrong", k.wrong.size()},
                            {"undecided", k.undecided.size()}};
  return true;
}

}  // namespace memcert_checker
