// Theorem 1's trace (docs/THEORY.md section 4) read and tied to the weights: the groups R_h and target
// logits, each saturating head's c, g, w (W_K[:, k] = c g, W_Q[:, k] = w), eps, gap, spread and sigma_lower,
// and the integrity checksum of the descriptive fields. What depends on the data is re-derived by
// check_forward_pass and check_lemma5_sigma.
#include <algorithm>
#include <cstdio>

#include "kernel/context.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker::theorem1 {

bool read_theorem1_trace(const Value& cert, Theorem1& k, std::string& why) {
  // Groups: R_1 = the first r examples, R_h = the next r-1. Claim 1: the target logits are E W e.
  // Claim 2 / Lemma 3: W_K[:, |R_h|] = c g and W_Q[:, |R_h|] = w, w^T e = 0 on R_h, w^T e != 0 and a
  // unique maximum of s = (w^T e) E g on the earlier examples; gap = min delta, spread = max A over them
  // (with a = logits - c s); Lemma 4: c >= (A + ln(2(n-1)/eps)) / delta for each of them; Lemma 5
  // (direct criterion): m eps^2 B^2 < sigma_lower^2, with sigma_lower re-certified below. The remaining
  // descriptive fields (attempt counts, step_sigma_lower, c_weyl, the B.2 estimate) are covered by
  // "trace_checksum" against accidental edits.
  const std::size_t H = k.H, T = k.T, n = k.n, d = k.d, r = k.r;
  const bool generic = k.generic;
  const auto &WKq = k.WKq, &WQq = k.WQq;
  std::vector<HeadTrace>& ht = k.ht;
  std::vector<std::size_t>& grp = k.grp;
  ht.resize(H);
  grp.assign(T, H);
  {
    const Value* trv = member(cert, "", "trace", json::Type::Array, why);
    if (!trv) return false;
    const std::size_t traced = generic ? 0 : H;  // generic weights: no proof steps are claimed
    if (trv->size() != traced) {
      why = generic ? "trace: expected an empty trace for method generic" : "trace: expected one entry per head";
      return false;
    }
    if (generic) note_not_checked("trace (method generic: no proof step is claimed; the verdict is the forward pass, the labels and rank(Z) >= T)");
    std::size_t next = 0;
    for (std::size_t h = 0; h < traced; ++h) {
      const json::Item e_item = trv->at(h);
      const Value& e = *e_item;
      const std::string w = at("trace", h);
      HeadTrace& x = ht[h];
      const Value* gv = member(e, w, "group", json::Type::Array, why);
      const Value* lv = gv ? member(e, w, "target_logits", json::Type::Array, why) : nullptr;
      if (!lv) return false;
      const std::size_t want = std::min(h == 0 ? r : r - 1, T - next);
      if (gv->size() != want || lv->size() != want) {
        why = w + ": expected the group R_" + std::to_string(h + 1) + " of " + std::to_string(want) + " examples with their target logits";
        return false;
      }
      for (std::size_t i = 0; i < want; ++i) {
        std::size_t t = 0;
        if (!read_size(*gv->at(i), at(w + ".group", i), T - 1, t, why)) return false;
        if (t != next + i) { why = at(w + ".group", i) + ": expected example " + std::to_string(next + i); return false; }
        x.group.push_back(t);
        x.targets.push_back(lv->at(i));
        grp[t] = h;
      }
      x.old = next;
      next += want;
      std::size_t old = 0, rt = 0;
      const Value* ov2 = member(e, w, "old_examples", json::Type::Number, why);
      if (!ov2 || !read_size(*ov2, w + ".old_examples", T, old, why)) return false;
      const Value* rv2 = member(e, w, "rank_target", json::Type::Number, why);
      if (!rv2 || !read_size(*rv2, w + ".rank_target", T, rt, why)) return false;
      if (old != x.old || rt != x.old + want) { why = w + ": old_examples / rank_target do not match the groups"; return false; }
      const Value* cv2 = e.find("c");
      if (!cv2 || !read_rational(*cv2, w + ".c", x.c, why)) { if (why.empty()) why = w + ".c: missing"; return false; }
      x.sat = h > 0 && want > 0;
      if (!x.sat) {
        if (sgn(x.c) != 0) { why = w + ".c: expected 0 for a head without a saturator"; return false; }
        // Said here, so the fields are not listed again as unread one by one.
        for (const char* key : {"g", "w", "eps", "gap", "spread", "eps_criterion"}) e.find(key);
        note_not_checked(w + ": g, w, eps, gap, spread, eps_criterion (a head without a saturator: only its group, target logits and c = 0 enter the verdict)");
        continue;
      }
      const Value* gv2 = member(e, w, "g", json::Type::Array, why);
      if (!gv2 || !read_rational_vector(*gv2, w + ".g", d, x.g, why)) return false;
      const Value* wv2 = member(e, w, "w", json::Type::Array, why);
      if (!wv2 || !read_rational_vector(*wv2, w + ".w", d, x.w, why)) return false;
      for (std::size_t c = 0; c < d; ++c)
        if (WKq[h][c][want] != x.c * x.g[c] || WQq[h][c][want] != x.w[c]) {
          why = w + ": W_K[:, " + std::to_string(want) + "] != c g or W_Q[:, " + std::to_string(want) + "] != w (row " + std::to_string(c) + ")";
          return false;
        }
      x.gs = scale_matrix(QMat{x.g});
      x.ws = scale_matrix(QMat{x.w});
      x.gd = SmallInts(x.gs.num, /*transpose=*/true);  // g as a column
      const Value* ev = e.find("eps");
      if (!ev || !read_rational(*ev, w + ".eps", x.eps, why)) { if (why.empty()) why = w + ".eps: missing"; return false; }
      if (sgn(x.eps) <= 0) { why = w + ".eps: must be > 0"; return false; }
      x.log_term = log(Interval(mpq_class(2 * long(n - 1)) / x.eps, kPrec));
      const Value* gapv = e.find("gap");
      const Value* spv = e.find("spread");
      if (!gapv || !spv) { why = w + ": gap / spread missing"; return false; }
      if (!read_rational(*gapv, w + ".gap", x.gap, why) || !read_rational(*spv, w + ".spread", x.spread, why)) return false;
      std::string crit;
      if (!read_string(e, w, "eps_criterion", crit, why)) return false;
      // "none": the weights sit at a chosen scale, not the proof's; no step of the Weyl chain is claimed
      // for this head (Lemmas 4 and 5 are not checked) and the verdict rests on step 3 alone, as always.
      if (crit != "direct" && crit != "b2" && crit != "none") { why = w + ".eps_criterion: expected direct, b2 or none"; return false; }
      x.direct = crit == "direct";
      x.chain = crit != "none";
      const Value* sv2 = e.find("sigma_lower");
      if (!sv2 || !read_rational(*sv2, w + ".sigma_lower", x.sigma, why)) { if (why.empty()) why = w + ".sigma_lower: missing"; return false; }
      // Optional: heads 1..r whose Gram matrix alone is to be tried first for sigma_lower (r <= h: heads
      // before this one). Only a choice of what to factor; the proof is checked either way.
      // A direct head's sigma_lower must be positive: m eps^2 B^2 < sigma^2 stands for sqrt(m) eps B <
      // sigma_k(Z_inf), and with sigma <= 0 the squared form says nothing (while Rump's test would only be
      // asked for sigma_k > 0).
      if (x.direct && sgn(x.sigma) <= 0) { why = w + ".sigma_lower: must be > 0 (direct criterion)"; return false; }
      if (const Value* rv3 = e.find("sigma_reference_heads"); rv3 && rv3->type != json::Type::Null)
        if (!read_size(*rv3, w + ".sigma_reference_heads", h, x.reference, why)) return false;
    }
    // The descriptive fields: the verdict rests on none of them (they are neither evidence nor trusted).
    // The theorem's hypotheses are not needed either: memorization is checked directly on the weights.
    if (cert.find("hypotheses"))
      note_not_checked("hypotheses (Assumptions 1-3, general position: recorded by the engine; the verdict checks memorization directly and does not rest on them)");
    if (cert.find("notes") || cert.find("labels_generated"))
      note_not_checked("notes, labels_generated (descriptive: recorded by the engine; trace_checksum only guards them against accidental edits)");
    if (!generic) {
      for (std::size_t h = 0; h < trv->size(); ++h)  // said here, so not listed again as unread
        for (const char* key : {"c_weyl", "c_proof", "step_sigma_lower", "eps_b2_estimate", "lemma3_attempts", "target_attempts"})
          trv->at(h)->find(key);
      note_not_checked("trace[*].c_weyl, c_proof, step_sigma_lower, eps_b2_estimate, lemma3_attempts, target_attempts (descriptive)");
    }
    for (std::size_t h = 0; h < H; ++h)
      if (ht[h].sat && !ht[h].chain)
        note_not_checked("trace[" + std::to_string(h) + "].eps, sigma_lower (eps_criterion none: no Weyl-chain step is claimed at a chosen scale)");
      else if (ht[h].sat && !ht[h].direct)
        note_not_checked("trace[" + std::to_string(h) + "].sigma_lower (B.2 head: rank(Z_c) >= k_h is re-certified instead)");
    // Integrity of the descriptive fields against accidental edits (a checksum is never evidence).
    auto text = [](const Value* v) -> std::string {
      if (!v) return "missing";
      switch (v->type) {
        case json::Type::Null: return "null";
        case json::Type::Bool: return v->boolean ? "true" : "false";
        case json::Type::Array: {
          std::string s2;
          for (std::size_t i = 0; i < v->size(); ++i) s2 += (i ? "," : "") + v->at(i)->text;
          return s2;
        }
        default: return v->text;
      }
    };
    std::string all;
    for (std::size_t h = 0; h < trv->size(); ++h)
      for (const char* k : {"lemma3_attempts", "target_attempts", "eps_b2_estimate", "sigma_lower", "c_weyl", "step_sigma_lower"})
        all += std::string(k) + "=" + text(trv->at(h)->find(k)) + ";";
    for (const char* k : {"hypotheses", "notes", "labels_generated", "examples"}) all += std::string(k) + "=" + text(cert.find(k)) + ";";
    std::uint64_t hh = 1469598103934665603ull;
    for (unsigned char ch : all) { hh ^= ch; hh *= 1099511628211ull; }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hh));
    std::string sum;
    if (!read_string(cert, "", "trace_checksum", sum, why)) return false;
    if (sum != buf) { why = "trace_checksum: does not match the trace's descriptive fields"; return false; }
  }
  auto& target_of = k.target_of;
  target_of.assign(H, std::vector<const Value*>(T, nullptr));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < ht[h].group.size(); ++i) target_of[h][ht[h].group[i]] = &*ht[h].targets[i];
  return true;
}

}  // namespace memcert_checker::theorem1
