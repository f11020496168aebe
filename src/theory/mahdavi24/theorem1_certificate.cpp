// The certificate of kind "theorem1" (docs/THEORY.md section 7): the chosen examples, the exact weights and the
// construction's trace, for the independent checker to re-verify.
#include <cstdio>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "memcert/util/parallel.hpp"
#include "format.hpp"

namespace memcert::mahdavi24 {

using nlohmann::json;

namespace {

using detail::fmt;
using detail::fmtq;
}  // namespace

json theorem1_write_certificate(const Theorem1Result& res, const AttentionDataset& ds, const QMatrix& Y,
                                const std::vector<long>& cls, const std::string& data_file, const std::string& data_digest) {
  const std::size_t Tstar = res.examples.size();  // the certified examples (T* for the theorem's construction)
  const bool generic = res.method == "generic";
  json cert;
  cert["kind"] = "theorem1";
  // method "generic" goes beyond the theorem (T > T* possible): the checker then takes no trace and rests
  // the verdict on the forward pass and rank(Z) = T alone.
  cert["claim"] = generic ? "mahdavi24/generic-weights" : "mahdavi24/theorem-1";
  if (generic) cert["method"] = "generic";  // absent: "theorem" (older certificates stay byte-identical)
  cert["H"] = res.H; cert["n"] = res.n; cert["d"] = res.d; cert["dh"] = res.dh; cert["dv"] = res.dv; cert["d_out"] = res.d_out;
  cert["r"] = res.r; cert["T"] = Tstar; cert["skip"] = res.skip;
  cert["rank_Z_lower"] = res.rank_Z_lower;
  cert["tolerance"] = rational_to_string(res.tolerance);
  cert["hypotheses"] = res.hypotheses;
  cert["examples"] = res.examples;
  json data;
  if (!data_file.empty()) {
    // Data by reference: the checker re-reads the file and recomputes the digest of its first T* examples.
    data["file"] = data_file;
    data["digest"] = data_digest;
  } else {
    // The big parts (contexts, weights) are rendered on the fast-path threads, then assembled in order.
    std::vector<json> ctxv(ds.T());
    parallel_for(ctxv.size(), fast_threads(), [&](std::size_t t) {
      ctxv[t] = qmat_to_json(ds.typed ? attention_context(ds, t) : ds.contexts[t]);
    });
    json ctxj = json::array();
    for (auto& c : ctxv) ctxj.push_back(std::move(c));
    data["contexts"] = std::move(ctxj);
    data["queries"] = qmat_to_json(ds.queries);
  }
  if (res.class_labels) {
    data["class_labels"] = cls;
  } else {
    data["labels"] = qmat_to_json(Y);
  }
  cert["data"] = data;
  cert["labels_generated"] = res.labels_generated;
  std::vector<json> headv(res.weights.heads.size());
  parallel_for(headv.size(), fast_threads(), [&](std::size_t h) {
    const auto& hd = res.weights.heads[h];
    headv[h] = {{"WK", qmat_to_json(hd.WK)}, {"WQ", qmat_to_json(hd.WQ)}, {"WV", qmat_to_json(hd.WV)}};
  });
  json heads = json::array();
  for (auto& h : headv) heads.push_back(std::move(h));
  cert["weights"] = {{"heads", heads}, {"WO", qmat_to_json(res.weights.WO)}, {"WD", qmat_to_json(res.weights.WD)}};
  json trace = json::array();
  for (const auto& tr : res.trace) {
    json j;
    j["head"] = tr.head;
    j["group"] = tr.group;
    json tg = json::array();
    for (const auto& l : tr.targets) tg.push_back(qvec_to_json(l));
    j["target_logits"] = tg;
    j["g"] = qvec_to_json(tr.g);
    j["w"] = qvec_to_json(tr.w);
    j["lemma3_attempts"] = tr.lemma3_attempts;
    j["target_attempts"] = tr.target_attempts;
    j["old_examples"] = tr.old_examples;
    j["rank_target"] = tr.rank_target;
    j["gap"] = rational_to_string(tr.gap);
    j["spread"] = rational_to_string(tr.spread);
    j["eps"] = tr.eps ? json(rational_to_string(*tr.eps)) : json(nullptr);
    j["eps_criterion"] = tr.eps_criterion.str();
    j["eps_direct"] = tr.eps_direct ? json(rational_to_string(*tr.eps_direct)) : json(nullptr);
    auto dq = [](double x) { return json(rational_to_string(rational_from_double(x))); };
    j["eps_b2_estimate"] = tr.eps_b2 ? dq(*tr.eps_b2) : json(nullptr);
    j["sigma_lower"] = dq(tr.sigma_lower);
    j["sigma_reference_heads"] = tr.sigma_reference_heads;
    j["c"] = rational_to_string(tr.c);
    j["c_proof"] = rational_to_string(tr.c_proof);
    j["c_weyl"] = tr.c_weyl ? json(rational_to_string(*tr.c_weyl)) : json(nullptr);
    j["step_sigma_lower"] = dq(tr.step_sigma_lower);
    trace.push_back(j);
  }
  cert["trace"] = trace;
  cert["notes"] = generic ? "generic weights (beyond Theorem 1's T*): random exact W_K, W_Q per head; rank(Z) >= T is "
                            "certified by a Gram matrix of the interval centres of Z and Rump's floating-point "
                            "positive-definiteness test; no proof trace." : "rank(Z) >= T is certified by a Gram matrix of the interval centres of Z and Rump's floating-point "
                  "positive-definiteness test; sigma_lower values are certified; eps_b2_estimate is a double estimate "
                  "(when eps_criterion is b2 the step's rank is certified directly at the resulting c; when it is none the "
                  "weights sit at a chosen scale c other than the proof's and only the final rank is claimed); c_proof is "
                  "Lemma 4's c, c_weyl the smallest c of the direct Weyl criterion with the actual eps.";
  cert["trace_checksum"] = theorem1_trace_checksum(cert);
  return cert;
}

// FNV-1a (64 bit) over "key=value;" for the trace entries the checker cannot re-derive cheaply
// (an integrity check against accidental edits, not a proof; the checker re-derives everything else).
std::string theorem1_trace_checksum(const nlohmann::json& cert) {
  auto text = [](const json& v) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "null";
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_array()) {
      std::string s;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ',';
        s += v[i].dump();
      }
      return s;
    }
    return v.dump();
  };
  std::string all;
  for (const auto& e : cert["trace"])
    for (const char* k : {"lemma3_attempts", "target_attempts", "eps_b2_estimate", "sigma_lower", "c_weyl", "step_sigma_lower"})
      all += std::string(k) + "=" + (e.contains(k) ? text(e[k]) : "missing") + ";";
  for (const char* k : {"hypotheses", "notes", "labels_generated", "examples"})
    all += std::string(k) + "=" + (cert.contains(k) ? text(cert[k]) : "missing") + ";";
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : all) { h ^= ch; h *= 1099511628211ull; }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace memcert::mahdavi24
