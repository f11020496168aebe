// Theorem 1's certificate read once: claim and sizes (with the cost admitted before any work), the data
// (embedded or by reference) and labels, and the weights in the forms the exact products use.
#include <algorithm>
#include <memory>

#include "kernel/context.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker::theorem1 {

bool read_theorem1_sizes(const Value& cert, Theorem1& k, std::string& why) {
  std::string claim;
  bool& generic = k.generic;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  // "method": "theorem" (the default, older certificates have no field) is Theorem 1's construction with
  // its proof trace, T <= H(r-1)+1; "generic" is weights beyond the theorem (any T <= H d, the column count
  // of Z): no trace is taken, the verdict rests on the forward pass and rank(Z) >= T alone (steps 1-4).
  if (cert.find("method")) {
    std::string method;
    if (!read_string(cert, "", "method", method, why)) return false;
    if (method != "theorem" && method != "generic") { why = "method: expected \"theorem\" or \"generic\", got \"" + method + "\""; return false; }
    generic = method == "generic";
  }
  const char* const want_claim = generic ? "mahdavi24/generic-weights" : "mahdavi24/theorem-1";
  if (claim != want_claim) {
    why = std::string("claim: kind \"theorem1\" with method ") + (generic ? "generic" : "theorem") + " proves \"" + want_claim +
          "\", not \"" + claim + "\"";
    return false;
  }
  // ---- sizes ----
  std::size_t &H = k.H, &n = k.n, &d = k.d, &dh = k.dh, &dv = k.dv, &dout = k.dout, &T = k.T, &rankZ = k.rankZ;
  const std::size_t kMax = 1u << 20;
  struct SizeField { const char* key; std::size_t* out; };
  for (SizeField f : {SizeField{"H", &H}, SizeField{"n", &n}, SizeField{"d", &d}, SizeField{"dh", &dh},
                      SizeField{"dv", &dv}, SizeField{"d_out", &dout}, SizeField{"T", &T},
                      SizeField{"rank_Z_lower", &rankZ}}) {
    const Value* v = member(cert, "", f.key, json::Type::Number, why);
    if (!v || !read_size(*v, f.key, kMax, *f.out, why)) return false;
  }
  if (H == 0 || n == 0 || d == 0 || dh == 0 || dout == 0 || T == 0) { why = "sizes: H, n, d, dh, d_out, T must be >= 1"; return false; }
  if (n > d) { why = "n: Theorem 1 needs n <= d"; return false; }
  if (dv < dout || d < dout) { why = "d_out: Theorem 1 needs d_v >= d_out and d >= d_out"; return false; }
  const std::size_t r = k.r = std::min(n, dh);
  if (!generic && T > H * (r - 1) + 1) { why = "T: exceeds H(r-1)+1 = " + std::to_string(H * (r - 1) + 1); return false; }
  if (generic && T > H * d) { why = "T: exceeds H d = " + std::to_string(H * d) + ", the column count of Z (rank(Z) = T is impossible)"; return false; }
  if (rankZ != T) { why = "rank_Z_lower: the certificate must claim rank(Z) >= T = " + std::to_string(T); return false; }
  {
    // Cost, from the shapes alone, in word-size operations (Budget::kOpsPerSecond): the exact logits
    // (T H n d min(d_h, 8) products of machine numbers, about 5 to an operation: E W_K for small d_h,
    // else E (W_K v) in a few 128-bit passes over E), the mixing and read-out
    // (T H (n d + d dv)), and Lemma 5's double-precision kernels, blocked and vectorized (about 50 flops
    // to an operation): the Gram matrix accumulated head by head (H T^2 d) and Rump's test of the growing
    // k_h x k_h Gram per head (sum_h k_h^3 / 3 ~ H T^3 / 12). Calibrated on H = 64, n = 32, d = 64,
    // d_h = 32, T = 1985: 17 s on 2 threads, estimated 18 s (the count before, every term at 1, gave 958 s,
    // so `verify` refused the certificate under its default 60 s); ViT-B shape (H = 12, n = 197, d = 768,
    // d_h = 64, T = 757, float32): about 10 s, estimated 95 s with d_h in the logits term, now about 16 s.
    // The run's watchdog bounds the time anyway.
    const double Td = double(T), Hd = double(H), nd = double(n), dd = double(d);
    const double ops = Td * Hd * nd * dd * double(std::min<std::size_t>(dh, 8)) / 5 + Td * Hd * (nd * dd + dd * double(dv)) +
                       (Hd * Td * Td * dd + Hd * Td * Td * Td / 12) / 50;
    const double bytes = 8 * (4 * Td * Hd * dd + 2 * Td * double(std::min(H, n)) * dd + 3 * Td * Td);
    if (!within_budget(ops, bytes, "the theorem1 check", why)) return false;
  }
  if (const Value* sv = cert.find("skip")) {
    if (sv->type != json::Type::Bool) { why = "skip: expected a boolean"; return false; }
    k.skip = sv->boolean;
  }
  // The certificate cannot choose its own tolerance: real labels are accepted by the checker's fixed
  // rule |y_hat - y| <= kLabelTolerance * max(1, |y|). A "tolerance" field (older certificates) must
  // still be a well-formed exact number but plays no part in the verdict.
  if (const Value* tv = cert.find("tolerance")) {
    mpq_class ignored;
    if (!read_rational(*tv, "tolerance", ignored, why)) return false;
    note_not_checked("tolerance (the certificate's own value is ignored; the checker's fixed rule applies)");
  }
  return true;
}

bool read_theorem1_data(const Value& cert, Theorem1& k, DataDigestJob& job, unsigned threads, std::string& why) {
  const Value* data = member(cert, "", "data", json::Type::Object, why);
  if (!data) return false;
  const std::size_t T = k.T, n = k.n, d = k.d, dout = k.dout;
  std::vector<QMat>& E = k.E;  // the embedded contexts (empty when the data are referenced by file)
  QMat& Q = k.Q;
  k.arrays = &job.arrays;  // the referenced data's values (docs/CERTIFICATES.md "Data by reference")
  const bool by_file = k.by_file = data->find("file") != nullptr;
  if (by_file) {
    if (!read_referenced_data(*data, T, n, d, job, Q, why, threads)) return false;
  } else {
    const Value* cv = member(*data, "data", "contexts", json::Type::Array, why);
    if (!cv) return false;
    if (cv->size() != T) { why = "data.contexts: expected " + std::to_string(T) + " contexts"; return false; }
    E.resize(T);
    if (!run_all(T, threads, [&](std::size_t t, unsigned, std::string& r) {
          return read_plain_matrix(*cv->at(t), at("data.contexts", t), n, d, E[t], r);
        }, why))
      return false;
    const Value* qv = member(*data, "data", "queries", json::Type::Array, why);
    if (!qv || !read_plain_matrix(*qv, "data.queries", T, d, Q, why)) return false;
  }
  bool& class_labels = k.class_labels;
  QMat& Y = k.Y;
  std::vector<std::size_t>& cls = k.cls;
  if (const Value* cl = data->find("class_labels")) {
    class_labels = true;
    if (cl->type != json::Type::Array || cl->size() != T) { why = "data.class_labels: expected " + std::to_string(T) + " labels"; return false; }
    cls.resize(T);
    for (std::size_t t = 0; t < T; ++t)
      if (!read_size(*cl->at(t), at("data.class_labels", t), dout - 1, cls[t], why)) return false;
    note_applied("class labels: the labelled output is the certified arg-max of y_hat (positive margin over every other output)");
    if (data->find("labels")) note_not_checked("data.labels (class labels present: the verdict is on data.class_labels)");
  } else {
    const Value* lv = member(*data, "data", "labels", json::Type::Array, why);
    if (!lv || !read_plain_matrix(*lv, "data.labels", T, dout, Y, why)) return false;
    note_applied("real labels: |y_hat - y| <= 2^-20 max(1, |y|) for every output (the checker's fixed rule)");
  }
  if (by_file && !bind_file_labels(job.arrays, T, class_labels, Y, cls, why)) return false;
  if (!check_examples_field(cert, T, by_file, why)) return false;
  return true;
}

bool read_theorem1_weights(const Value& cert, Theorem1& k, unsigned threads, std::string& why) {
  const std::size_t H = k.H, d = k.d, dh = k.dh, dv = k.dv, dout = k.dout;
  const Value* wv = member(cert, "", "weights", json::Type::Object, why);
  if (!wv) return false;
  const Value* hv = member(*wv, "weights", "heads", json::Type::Array, why);
  if (!hv) return false;
  if (hv->size() != H) { why = "weights.heads: expected " + std::to_string(H) + " heads"; return false; }
  auto &WK = k.WK, &WQ = k.WQ;
  auto &WKq = k.WKq, &WQq = k.WQq, &WV = k.WV;
  WK.resize(H), WQ.resize(H), WKq.resize(H), WQq.resize(H), WV.resize(H);
  if (!run_all(H, threads, [&](std::size_t h, unsigned, std::string& r) {
        const json::Item hd_item = hv->at(h);
        const Value& hd = *hd_item;
        const std::string w = at("weights.heads", h);
        QMat kk, q;
        const Value* kv = member(hd, w, "WK", json::Type::Array, r);
        if (!kv || !read_plain_matrix(*kv, w + ".WK", d, dh, kk, r)) return false;
        const Value* qqv = member(hd, w, "WQ", json::Type::Array, r);
        if (!qqv || !read_plain_matrix(*qqv, w + ".WQ", d, dh, q, r)) return false;
        const Value* vv = member(hd, w, "WV", json::Type::Array, r);
        if (!vv || !read_plain_matrix(*vv, w + ".WV", d, dv, WV[h], r)) return false;
        WK[h] = scale_matrix(kk);
        WQ[h] = scale_matrix(q);
        WKq[h] = std::move(kk);
        WQq[h] = std::move(q);
        return true;
      }, why))
    return false;
  QMat &WO = k.WO, &WD = k.WD;
  const Value* ov = member(*wv, "weights", "WO", json::Type::Array, why);
  if (!ov || !read_plain_matrix(*ov, "weights.WO", H * dv, d, WO, why)) return false;
  const Value* dvv = member(*wv, "weights", "WD", json::Type::Array, why);
  if (!dvv || !read_plain_matrix(*dvv, "weights.WD", d, dout, WD, why)) return false;

  // The read-out weights as sparse interval matrices; W_K W_Q^T's common denominator per head.
  for (std::size_t h = 0; h < H; ++h) k.WVs.emplace_back(WV[h]);
  k.WOs = std::make_unique<SparseIv>(WO);
  k.WDs = std::make_unique<SparseIv>(WD);
  k.den_kq.resize(H);
  k.WKd.resize(H);
  k.WQg.resize(H);
  for (std::size_t h = 0; h < H; ++h) {
    k.den_kq[h] = WK[h].den * WQ[h].den;
    k.WKd[h] = SmallInts(WK[h].num, false);
    k.WQg[h] = ColumnGcd(WQ[h].num);
  }
  return true;
}

}  // namespace memcert_checker::theorem1
