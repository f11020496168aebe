#pragma once
// Small trained-model instances for kind "model" tests: random weights and data for each architecture,
// each example's margin by a SECOND, independent method (a plain MPFR forward pass at 300 bits, written
// straight from the architectures' definitions: no enclosures, no shortcuts such as precomputed products),
// and the certificate that states the true verdicts. The tensors reach the checker through a lambda
// TensorsSupplier (and an ArraysSupplier for "mha" data).
#include <gmpxx.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "memcert/checker/checker.hpp"

namespace model_fixture {

using memcert_checker::AttentionArrays;
using memcert_checker::NamedArray;

// A 300-bit real, round-to-nearest: the reference arithmetic.
struct R {
  mpfr_t v;
  R(double x = 0) { mpfr_init2(v, 300); mpfr_set_d(v, x, MPFR_RNDN); }  // NOLINT: reads like a number
  R(const R& o) { mpfr_init2(v, 300); mpfr_set(v, o.v, MPFR_RNDN); }
  R& operator=(const R& o) { mpfr_set(v, o.v, MPFR_RNDN); return *this; }
  ~R() { mpfr_clear(v); }
  friend R operator+(const R& a, const R& b) { R r; mpfr_add(r.v, a.v, b.v, MPFR_RNDN); return r; }
  friend R operator-(const R& a, const R& b) { R r; mpfr_sub(r.v, a.v, b.v, MPFR_RNDN); return r; }
  friend R operator*(const R& a, const R& b) { R r; mpfr_mul(r.v, a.v, b.v, MPFR_RNDN); return r; }
  friend R operator/(const R& a, const R& b) { R r; mpfr_div(r.v, a.v, b.v, MPFR_RNDN); return r; }
  R& operator+=(const R& b) { mpfr_add(v, v, b.v, MPFR_RNDN); return *this; }
  friend bool operator<(const R& a, const R& b) { return mpfr_less_p(a.v, b.v) != 0; }
  int sign() const { return mpfr_sgn(v); }
  double d() const { return mpfr_get_d(v, MPFR_RNDN); }
};
inline R rexp(const R& a) { R r; mpfr_exp(r.v, a.v, MPFR_RNDN); return r; }
inline R rsqrt(double k) { R r; mpfr_sqrt_ui(r.v, static_cast<unsigned long>(k), MPFR_RNDN); return r; }
inline R rgelu(const R& x) {  // x Phi(x) = x (1 + erf(x / sqrt 2)) / 2
  R t = x / rsqrt(2);
  mpfr_erf(t.v, t.v, MPFR_RNDN);
  return x * (R(1) + t) / R(2);
}
inline R rabs(const R& a) { R r; mpfr_abs(r.v, a.v, MPFR_RNDN); return r; }
// A decimal (6 significant digits) rounded down / up.
inline std::string decimal(const R& a, bool down) {
  char* s = nullptr;
  mpfr_asprintf(&s, down ? "%.5RDe" : "%.5RUe", a.v);
  std::string out(s);
  mpfr_free_str(s);
  return out;
}

inline NamedArray arr(const std::string& name, std::vector<std::size_t> shape, std::vector<double> v, bool f32 = false) {
  NamedArray a;
  a.name = name;
  a.shape = std::move(shape);
  if (f32) a.values_f32.assign(v.begin(), v.end());
  else a.values = std::move(v);
  return a;
}
inline std::vector<double> rnd(std::mt19937_64& g, std::size_t n, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(u(g));  // float32 values, as a trained model stores
  return v;
}
inline NamedArray* find(std::vector<NamedArray>& a, const std::string& n) {
  for (auto& x : a)
    if (x.name == n) return &x;
  return nullptr;
}
inline double at(const NamedArray& a, std::size_t i) { return a.value(i); }

// ---- an instance: tensors, true margins, certificate -------------------------------------------------
struct Instance {
  std::string arch;
  bool regression = false;
  std::size_t heads = 0;
  std::vector<NamedArray> model, data;
  AttentionArrays att;       // mha
  std::string tolerance;     // regression
  std::vector<R> margin;     // classification: logit[y] - max other; regression: |f - y|
  std::size_t T() const { return margin.size(); }
};

inline bool is_correct(const Instance& in, std::size_t t) {
  if (!in.regression) return in.margin[t].sign() > 0;
  R tol;
  mpfr_set_str(tol.v, in.tolerance.c_str(), 10, MPFR_RNDN);  // tolerances here are dyadic: exact
  return !(tol < in.margin[t]);
}

// The certificate of the true verdicts (all decided); model/data files named "model.pt" / "data.npz".
inline nlohmann::json certificate(const Instance& in) {
  nlohmann::json j;
  j["kind"] = "model";
  j["version"] = 1;
  j["claim"] = "certified predictions of a trained model";
  j["arch"] = in.arch;
  j["task"] = in.regression ? "regression" : "classification";
  if (in.regression) j["tolerance"] = in.tolerance;
  if (in.arch != "mahdavi24-baseline") j["heads"] = in.heads;
  j["model"] = {{"file", "model.pt"}, {"digest", memcert_checker::tensors_digest(in.model)}};
  j["data"] = {{"file", "data.npz"},
               {"digest", in.arch == "mha" ? memcert_checker::attention_arrays_digest(in.att, in.att.T)
                                           : memcert_checker::tensors_digest(in.data)}};
  j["T"] = in.T();
  j["wrong"] = nlohmann::json::array();
  j["undecided"] = nlohmann::json::array();
  bool any = false;
  R best;
  for (std::size_t t = 0; t < in.T(); ++t) {
    if (!is_correct(in, t)) {
      j["wrong"].push_back(t);
      continue;
    }
    if (!any || (in.regression ? best < in.margin[t] : in.margin[t] < best)) best = in.margin[t];
    any = true;
  }
  if (any) j[in.regression ? "max_error" : "min_margin"] = decimal(best, !in.regression);
  j["float32_disagreements"] = nlohmann::json::array();
  return j;
}

// The suppliers: the instance's tensors (by role) and attention arrays, whatever file is named.
inline memcert_checker::TensorsSupplier tensors_of(const Instance& in) {
  return [&in](const std::string&, const std::string& role, const std::string&, std::vector<NamedArray>& out, std::string&) {
    out = role == "model" ? in.model : in.data;
    return true;
  };
}
inline memcert_checker::ArraysSupplier arrays_of(const Instance& in) {
  return [&in](const std::string&, AttentionArrays& out, std::string&) {
    out = in.att;
    return true;
  };
}
inline memcert_checker::Verdict verify(const Instance& in, const nlohmann::json& cert,
                                       const memcert_checker::Budget& b = {}) {
  const auto ts = tensors_of(in);
  const auto as = arrays_of(in);
  return memcert_checker::verify_certificate_text(cert.dump(), b, ts, &as);
}

// ---- mahdavi24-baseline -------------------------------------------------------------------------------
struct MahdaviShape {
  std::size_t T = 10, n = 5, din = 3, dm = 6, H = 2, dh = 4, dv = 1, C = 3;
  bool regression = false;
};

// The reference margins from the tensors as they are (so a test may edit tensors and recompute).
inline void mahdavi_reference(Instance& in) {
  auto& M = in.model;
  const NamedArray &We = *find(M, "embedding.weight"), &be = *find(M, "embedding.bias"), &pe = *find(M, "pos_enc.pe"),
                   &Wq = *find(M, "attention.Wq"), &Wk = *find(M, "attention.Wk"), &Wv = *find(M, "attention.Wv"),
                   &Wo = *find(M, "attention.Wo"), &Wd = *find(M, "decoder.weight"), &bd = *find(M, "decoder.bias");
  const NamedArray &X = *find(in.data, "X"), &y = *find(in.data, "y");
  const std::size_t T = X.shape[0], np = X.shape[1], din = X.shape[2], dm = We.shape[0], H = Wq.shape[0],
                    dh = Wq.shape[2], dv = Wv.shape[2], dO = Wo.shape[1], C = Wd.shape[0];
  in.margin.assign(T, R());
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<std::vector<R>> x(np, std::vector<R>(dm));
    for (std::size_t j = 0; j < np; ++j)
      for (std::size_t c = 0; c < dm; ++c) {
        R s = R(at(be, c)) + R(at(pe, j * dm + c));
        for (std::size_t k = 0; k < din; ++k) s += R(at(X, (t * np + j) * din + k)) * R(at(We, c * din + k));
        x[j][c] = s;
      }
    std::vector<R> z(H * dv);
    for (std::size_t h = 0; h < H; ++h) {
      std::vector<R> q(dh), s(np);
      for (std::size_t k = 0; k < dh; ++k)
        for (std::size_t i = 0; i < dm; ++i) q[k] += x[0][i] * R(at(Wq, (h * dm + i) * dh + k));
      R mx;
      for (std::size_t j = 1; j < np; ++j) {
        R dot;
        for (std::size_t k = 0; k < dh; ++k) {
          R kk;
          for (std::size_t i = 0; i < dm; ++i) kk += x[j][i] * R(at(Wk, (h * dm + i) * dh + k));
          dot += q[k] * kk;
        }
        s[j] = dot / rsqrt(static_cast<double>(dm));
        if (j == 1 || mx < s[j]) mx = s[j];
      }
      R Z;
      for (std::size_t j = 1; j < np; ++j) Z += rexp(s[j] - mx);
      for (std::size_t j = 1; j < np; ++j) {
        const R a = rexp(s[j] - mx) / Z;
        for (std::size_t k = 0; k < dv; ++k) {
          R v;
          for (std::size_t i = 0; i < dm; ++i) v += x[j][i] * R(at(Wv, (h * dm + i) * dv + k));
          z[h * dv + k] += a * v;
        }
      }
    }
    std::vector<R> out(dO), logit(C);
    for (std::size_t c = 0; c < dO; ++c)
      for (std::size_t r = 0; r < H * dv; ++r) out[c] += z[r] * R(at(Wo, r * dO + c));
    for (std::size_t c = 0; c < C; ++c) {
      logit[c] = R(at(bd, c));
      for (std::size_t i = 0; i < dO; ++i) logit[c] += R(at(Wd, c * dO + i)) * out[i];
    }
    if (in.regression) {
      in.margin[t] = rabs(logit[0] - R(at(y, t)));
    } else {
      const std::size_t cy = static_cast<std::size_t>(at(y, t));
      bool first = true;
      R best;
      for (std::size_t c = 0; c < C; ++c)
        if (c != cy && (first || best < logit[c])) best = logit[c], first = false;
      in.margin[t] = logit[cy] - best;
    }
  }
}

inline Instance mahdavi(std::uint64_t seed, const MahdaviShape& s = {}) {
  std::mt19937_64 g(seed);
  Instance in;
  in.arch = "mahdavi24-baseline";
  in.regression = s.regression;
  const std::size_t C = s.regression ? 1 : s.C;
  in.model = {arr("embedding.weight", {s.dm, s.din}, rnd(g, s.dm * s.din), true),
              arr("embedding.bias", {s.dm}, rnd(g, s.dm, 0.1), true),
              arr("pos_enc.pe", {s.n + 3, s.dm}, rnd(g, (s.n + 3) * s.dm), true),
              arr("attention.Wq", {s.H, s.dm, s.dh}, rnd(g, s.H * s.dm * s.dh, 1.5)),
              arr("attention.Wk", {s.H, s.dm, s.dh}, rnd(g, s.H * s.dm * s.dh, 1.5)),
              arr("attention.Wv", {s.H, s.dm, s.dv}, rnd(g, s.H * s.dm * s.dv)),
              arr("attention.Wo", {s.H * s.dv, s.dm}, rnd(g, s.H * s.dv * s.dm)),
              arr("decoder.weight", {C, s.dm}, rnd(g, C * s.dm)),
              arr("decoder.bias", {C}, rnd(g, C, 0.1))};
  std::vector<double> y(s.T);
  std::uniform_int_distribution<std::size_t> cls(0, C - 1);
  for (double& v : y) v = s.regression ? static_cast<float>(std::uniform_real_distribution<double>(-1, 1)(g)) : double(cls(g));
  in.data = {arr("X", {s.T, s.n + 1, s.din}, rnd(g, s.T * (s.n + 1) * s.din), true), arr("y", {s.T}, y)};
  if (s.regression) in.tolerance = "0.5";
  mahdavi_reference(in);
  return in;
}

// ---- dana24-aot ---------------------------------------------------------------------------------------
struct DanaShape {
  std::size_t T = 8, S = 4, N = 5, d = 4, dh = 4, L = 2, P = 2, heads = 2, width = 0;
};

inline std::vector<R> mha_ref(const std::vector<std::vector<R>>& X, std::size_t i, std::size_t nkeys, const std::vector<double>& in,
                              const std::vector<double>& bin, const std::vector<double>& Wout, const std::vector<double>& bout,
                              std::size_t E, std::size_t K) {
  auto proj = [&](std::size_t block, const std::vector<R>& x) {
    std::vector<R> y(E);
    for (std::size_t r = 0; r < E; ++r) {
      y[r] = bin.empty() ? R(0) : R(bin[block * E + r]);
      for (std::size_t c = 0; c < E; ++c) y[r] += R(in[(block * E + r) * E + c]) * x[c];
    }
    return y;
  };
  const std::size_t hd = E / K;
  const std::vector<R> q = proj(0, X[i]);
  std::vector<std::vector<R>> k(nkeys), v(nkeys);
  for (std::size_t j = 0; j < nkeys; ++j) k[j] = proj(1, X[j]), v[j] = proj(2, X[j]);
  std::vector<R> o(E);
  for (std::size_t h = 0; h < K; ++h) {
    std::vector<R> s(nkeys);
    R mx;
    for (std::size_t j = 0; j < nkeys; ++j) {
      for (std::size_t c = h * hd; c < (h + 1) * hd; ++c) s[j] += q[c] * k[j][c];
      s[j] = s[j] / rsqrt(static_cast<double>(hd));
      if (j == 0 || mx < s[j]) mx = s[j];
    }
    R Z;
    for (std::size_t j = 0; j < nkeys; ++j) Z += rexp(s[j] - mx);
    for (std::size_t j = 0; j < nkeys; ++j)
      for (std::size_t c = h * hd; c < (h + 1) * hd; ++c) o[c] += rexp(s[j] - mx) / Z * v[j][c];
  }
  std::vector<R> out(E);
  for (std::size_t r = 0; r < E; ++r) {
    out[r] = bout.empty() ? R(0) : R(bout[r]);
    for (std::size_t c = 0; c < E; ++c) out[r] += R(Wout[r * E + c]) * o[c];
  }
  return out;
}

inline std::vector<double> vals(const NamedArray* a) {
  std::vector<double> v;
  if (a)
    for (std::size_t i = 0; i < a->size(); ++i) v.push_back(a->value(i));
  return v;
}

inline void dana_reference(Instance& in, const DanaShape& s) {
  auto& M = in.model;
  const std::vector<double> emb = vals(find(M, "word_emb.weight")), pos = vals(find(M, "pos_emb.weight")),
                            un = vals(find(M, "unemb.weight")), Wc = vals(find(M, "linear_compress.weight")),
                            Wdc = vals(find(M, "linear_decompress.weight"));
  const std::vector<double> seq = vals(find(in.data, "sequences")), nxt = vals(find(in.data, "next"));
  const std::size_t T = nxt.size();
  in.margin.assign(T, R());
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<std::vector<R>> res(s.S, std::vector<R>(s.d));
    for (std::size_t i = 0; i < s.S; ++i)
      for (std::size_t c = 0; c < s.d; ++c) res[i][c] = R(emb[static_cast<std::size_t>(seq[t * s.S + i]) * s.d + c]);
    for (std::size_t l = 0; l < s.L; ++l) {
      std::vector<std::vector<R>> comp(s.S, std::vector<R>(s.dh));
      for (std::size_t i = 0; i < s.S; ++i)
        for (std::size_t r = 0; r < s.dh; ++r) {
          R v = R(pos[i * s.dh + r]);
          if (s.d != s.dh)
            for (std::size_t c = 0; c < s.d; ++c) v += R(Wc[r * s.d + c]) * res[i][c];
          else
            v += res[i][r];
          comp[i][r] = v;
        }
      std::vector<std::vector<R>> nres = res;
      for (std::size_t i = 0; i < s.S; ++i) {
        std::vector<R> para(s.dh);
        for (std::size_t p = 0; p < s.P; ++p) {
          const std::string k = "attn_seq." + std::to_string(l) + "." + std::to_string(p) + ".";
          const std::vector<R> o = mha_ref(comp, i, i + 1, vals(find(M, k + "in_proj_weight")), vals(find(M, k + "in_proj_bias")),
                                           vals(find(M, k + "out_proj.weight")), vals(find(M, k + "out_proj.bias")), s.dh, s.heads);
          for (std::size_t r = 0; r < s.dh; ++r) para[r] += o[r];
        }
        for (std::size_t c = 0; c < s.d; ++c) {
          R v;
          if (s.d != s.dh)
            for (std::size_t r = 0; r < s.dh; ++r) v += R(Wdc[c * s.dh + r]) * para[r];
          else
            v = para[c];
          nres[i][c] = v + res[i][c];
        }
        if (s.width > 0) {
          const std::string k = "mlp_seq." + std::to_string(l) + ".";
          const std::vector<double> W1 = vals(find(M, k + "0.weight")), b1 = vals(find(M, k + "0.bias")), W2 = vals(find(M, k + "2.weight"));
          std::vector<R> h(s.width);
          for (std::size_t a = 0; a < s.width; ++a) {
            R v = R(b1[a]);
            for (std::size_t c = 0; c < s.d; ++c) v += R(W1[a * s.d + c]) * nres[i][c];
            h[a] = rgelu(v);
          }
          std::vector<R> add(s.d);
          for (std::size_t c = 0; c < s.d; ++c)
            for (std::size_t a = 0; a < s.width; ++a) add[c] += R(W2[c * s.width + a]) * h[a];
          for (std::size_t c = 0; c < s.d; ++c) nres[i][c] = nres[i][c] + add[c];
        }
      }
      res = nres;
    }
    std::vector<R> logit(s.N);
    for (std::size_t c = 0; c < s.N; ++c)
      for (std::size_t i = 0; i < s.d; ++i) logit[c] += R(un[c * s.d + i]) * res[s.S - 1][i];
    const std::size_t cy = static_cast<std::size_t>(nxt[t]);
    bool first = true;
    R best;
    for (std::size_t c = 0; c < s.N; ++c)
      if (c != cy && (first || best < logit[c])) best = logit[c], first = false;
    in.margin[t] = logit[cy] - best;
  }
}

inline Instance dana(std::uint64_t seed, const DanaShape& s = {}) {
  std::mt19937_64 g(seed);
  Instance in;
  in.arch = "dana24-aot";
  in.heads = s.heads;
  const std::size_t Smax = s.S + 1;
  in.model = {arr("word_emb.weight", {s.N, s.d}, rnd(g, s.N * s.d), true),
              arr("pos_emb.weight", {Smax, s.dh}, rnd(g, Smax * s.dh), true),
              arr("unemb.weight", {s.N, s.d}, rnd(g, s.N * s.d), true),
              arr("linear_compress.weight", {s.dh, s.d}, rnd(g, s.dh * s.d)),
              arr("linear_decompress.weight", {s.d, s.dh}, rnd(g, s.d * s.dh))};
  std::vector<double> mask((Smax - 1) * (Smax - 1));
  for (std::size_t i = 0; i + 1 < Smax; ++i)
    for (std::size_t j = 0; j + 1 < Smax; ++j) mask[i * (Smax - 1) + j] = j > i ? 1 : 0;
  in.model.push_back(arr("attn_mask", {Smax - 1, Smax - 1}, mask));
  for (std::size_t l = 0; l < s.L; ++l) {
    for (std::size_t p = 0; p < s.P; ++p) {
      const std::string k = "attn_seq." + std::to_string(l) + "." + std::to_string(p) + ".";
      in.model.push_back(arr(k + "in_proj_weight", {3 * s.dh, s.dh}, rnd(g, 3 * s.dh * s.dh, 1.5), true));
      in.model.push_back(arr(k + "out_proj.weight", {s.dh, s.dh}, rnd(g, s.dh * s.dh), true));
    }
    if (s.width > 0) {
      const std::string k = "mlp_seq." + std::to_string(l) + ".";
      in.model.push_back(arr(k + "0.weight", {s.width, s.d}, rnd(g, s.width * s.d)));
      in.model.push_back(arr(k + "0.bias", {s.width}, rnd(g, s.width)));
      in.model.push_back(arr(k + "2.weight", {s.d, s.width}, rnd(g, s.d * s.width)));
    }
  }
  std::vector<double> seq(s.T * s.S), nxt(s.T);
  std::uniform_int_distribution<std::size_t> tok(0, s.N - 1);
  for (double& v : seq) v = double(tok(g));
  for (double& v : nxt) v = double(tok(g));
  in.data = {arr("sequences", {s.T, s.S}, seq), arr("next", {s.T}, nxt)};
  dana_reference(in, s);
  return in;
}

// ---- mha ------------------------------------------------------------------------------------------------
struct MhaShape {
  std::size_t T = 8, n = 4, E = 4, heads = 2, dout = 3;
  bool regression = false, biases = true;
};

inline void mha_reference(Instance& in, const MhaShape& s) {
  auto& M = in.model;
  const std::vector<double> ip = vals(find(M, "in_proj_weight")), ib = vals(find(M, "in_proj_bias")),
                            ow = vals(find(M, "out_proj.weight")), ob = vals(find(M, "out_proj.bias")),
                            rw = vals(find(M, "readout.weight")), rb = vals(find(M, "readout.bias"));
  in.margin.assign(s.T, R());
  for (std::size_t t = 0; t < s.T; ++t) {
    std::vector<std::vector<R>> X(s.n + 1, std::vector<R>(s.E));
    for (std::size_t c = 0; c < s.E; ++c) X[0][c] = R(in.att.queries[t * s.E + c]);
    for (std::size_t j = 0; j < s.n; ++j)
      for (std::size_t c = 0; c < s.E; ++c) X[j + 1][c] = R(in.att.context_value((t * s.n + j) * s.E + c));
    // the query (row 0) attends to the context rows 1..n only: a data set of those rows plus the query
    std::vector<std::vector<R>> K(X.begin() + 1, X.end());
    K.push_back(X[0]);
    const std::vector<R> o = mha_ref(K, s.n, s.n, ip, ib, ow, ob, s.E, s.heads);
    std::vector<R> f(s.dout);
    for (std::size_t c = 0; c < s.dout; ++c) {
      f[c] = rb.empty() ? R(0) : R(rb[c]);
      for (std::size_t i = 0; i < s.E; ++i) f[c] += R(rw[c * s.E + i]) * o[i];
    }
    if (s.regression) {
      R worst;
      for (std::size_t c = 0; c < s.dout; ++c) {
        mpq_class q(in.att.labels[t * s.dout + c]);
        R y;
        mpfr_set_q(y.v, q.get_mpq_t(), MPFR_RNDN);
        const R e = rabs(f[c] - y);
        if (c == 0 || worst < e) worst = e;
      }
      in.margin[t] = worst;
    } else {
      const std::size_t cy = in.att.classes[t];
      bool first = true;
      R best;
      for (std::size_t c = 0; c < s.dout; ++c)
        if (c != cy && (first || best < f[c])) best = f[c], first = false;
      in.margin[t] = f[cy] - best;
    }
  }
}

inline Instance mha(std::uint64_t seed, const MhaShape& s = {}) {
  std::mt19937_64 g(seed);
  Instance in;
  in.arch = "mha";
  in.heads = s.heads;
  in.regression = s.regression;
  in.model = {arr("in_proj_weight", {3 * s.E, s.E}, rnd(g, 3 * s.E * s.E, 1.5), true),
              arr("out_proj.weight", {s.E, s.E}, rnd(g, s.E * s.E), true),
              arr("readout.weight", {s.dout, s.E}, rnd(g, s.dout * s.E))};
  if (s.biases) {
    in.model.push_back(arr("in_proj_bias", {3 * s.E}, rnd(g, 3 * s.E, 0.2)));
    in.model.push_back(arr("out_proj.bias", {s.E}, rnd(g, s.E, 0.2)));
    in.model.push_back(arr("readout.bias", {s.dout}, rnd(g, s.dout, 0.2)));
  }
  AttentionArrays& a = in.att;
  a.T = s.T;
  a.n = s.n;
  a.d = s.E;
  a.contexts = rnd(g, s.T * s.n * s.E);
  a.queries = rnd(g, s.T * s.E);
  if (s.regression) {
    a.label_kind = AttentionArrays::Labels::real;
    a.d_out = s.dout;
    const char* ls[] = {"1/3", "-1/2", "0", "2/7", "-3/5"};
    for (std::size_t i = 0; i < s.T * s.dout; ++i) a.labels.push_back(ls[i % 5]);
    in.tolerance = "0.75";
  } else {
    a.label_kind = AttentionArrays::Labels::classes;
    std::uniform_int_distribution<std::size_t> cls(0, s.dout - 1);
    for (std::size_t t = 0; t < s.T; ++t) a.classes.push_back(cls(g));
  }
  mha_reference(in, s);
  return in;
}

}  // namespace model_fixture
