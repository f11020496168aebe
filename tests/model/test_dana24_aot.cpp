// dana24-aot: the double filter's enclosures and the float32 bound against a 512-bit MPFR evaluation
// written independently here (plain softmax exp(s_j) / sum exp(s_k), no shared code with the engine's
// passes), on random small models (1-2 layers, with and without MLPs and compression); the escalation
// ladder on a margin below the double filter's reach; exact ties; and the loader's errors naming keys.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "memcert/model/dana24_aot.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/util/error.hpp"

using namespace memcert;

namespace {

struct Config {
  std::size_t N, d, dh, cw, L, P, heads, width;
  double scale;
};

Tensor aot_tensor(std::vector<std::size_t> shape, std::vector<double> values) {
  Tensor t;
  t.dtype = DType::float32;
  t.shape = std::move(shape);
  t.f64 = std::move(values);
  return t;
}

std::vector<double> aot_floats(std::mt19937_64& rng, std::size_t n, double scale) {
  std::normal_distribution<double> g(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(static_cast<float>(scale * g(rng)));
  return v;
}

StateDict aot_model(const Config& c, std::uint64_t seed, bool with_mask = true) {
  std::mt19937_64 rng(seed);
  StateDict sd;
  auto add = [&](const std::string& key, std::vector<std::size_t> shape, double s) {
    std::size_t n = 1;
    for (auto k : shape) n *= k;
    sd.insert(key, aot_tensor(shape, aot_floats(rng, n, s)));
  };
  add("word_emb.weight", {c.N, c.d}, c.scale);
  add("pos_emb.weight", {c.cw, c.dh}, c.scale);
  for (std::size_t l = 0; l < c.L; ++l)
    for (std::size_t p = 0; p < c.P; ++p) {
      const std::string b = "attn_seq." + std::to_string(l) + "." + std::to_string(p) + ".";
      add(b + "in_proj_weight", {3 * c.dh, c.dh}, c.scale / std::sqrt(double(c.dh)));
      add(b + "out_proj.weight", {c.dh, c.dh}, c.scale / std::sqrt(double(c.dh)));
    }
  add("linear_compress.weight", {c.dh, c.d}, c.scale / std::sqrt(double(c.d)));
  add("linear_decompress.weight", {c.d, c.dh}, c.scale / std::sqrt(double(c.dh)));
  if (c.width > 0)
    for (std::size_t l = 0; l < c.L; ++l) {
      const std::string b = "mlp_seq." + std::to_string(l) + ".";
      add(b + "0.weight", {c.width, c.d}, c.scale / std::sqrt(double(c.d)));
      add(b + "0.bias", {c.width}, c.scale);
      add(b + "2.weight", {c.d, c.width}, c.scale / std::sqrt(double(c.width)));
    }
  add("unemb.weight", {c.N, c.d}, c.scale);
  if (with_mask) {
    Tensor m;
    m.dtype = DType::boolean;
    m.shape = {c.cw - 1, c.cw - 1};
    for (std::size_t i = 0; i + 1 < c.cw; ++i)
      for (std::size_t j = 0; j + 1 < c.cw; ++j) m.i64.push_back(j > i ? 1 : 0);
    sd.insert("attn_mask", m);
  }
  return sd;
}

Dana24AotData aot_data(std::size_t T, std::size_t S, std::size_t N, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> tok(0, static_cast<std::int64_t>(N) - 1);
  Dana24AotData d;
  d.T = T;
  d.S = S;
  for (std::size_t k = 0; k < T * S; ++k) d.sequences.push_back(tok(rng));
  for (std::size_t t = 0; t < T; ++t) d.next.push_back(tok(rng));
  d.file = "data.npz";
  return d;
}

// ---- the reference: 512-bit MPFR intervals, the forward pass written out plainly --------------------------
using I = Interval;
I iv(double x) { return I(Rational(x)); }
const std::vector<double>& aot_get(const StateDict& sd, const std::string& k) { return sd.find(k)->f64; }

// Logits at the last position, all N of them.
std::vector<I> reference_logits(const StateDict& sd, const Config& c, const std::int64_t* seq, std::size_t S) {
  const std::size_t hd = c.dh / c.heads;
  const bool comp = c.d != c.dh;
  const auto& we = aot_get(sd, "word_emb.weight");
  const auto& pe = aot_get(sd, "pos_emb.weight");
  std::vector<std::vector<I>> res(S, std::vector<I>(c.d));
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t k = 0; k < c.d; ++k) res[i][k] = iv(we[seq[i] * c.d + k]);
  auto matvec = [](const std::vector<double>& W, std::size_t rows, std::size_t cols, std::size_t r0, const std::vector<I>& x) {
    std::vector<I> y(rows);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t k = 0; k < cols; ++k) y[r] += iv(W[(r0 + r) * cols + k]) * x[k];
    return y;
  };
  const I scale = I(Rational(1)) / interval_sqrt(I(Rational(static_cast<long>(hd))));
  for (std::size_t l = 0; l < c.L; ++l) {
    std::vector<std::vector<I>> cin(S);
    for (std::size_t i = 0; i < S; ++i) {
      cin[i] = comp ? matvec(aot_get(sd, "linear_compress.weight"), c.dh, c.d, 0, res[i]) : res[i];
      for (std::size_t k = 0; k < c.dh; ++k) cin[i][k] += iv(pe[i * c.dh + k]);
    }
    std::vector<std::vector<I>> next = res;
    for (std::size_t i = 0; i < S; ++i) {  // every position (the reference does not skip any)
      std::vector<I> para(c.dh);
      for (std::size_t p = 0; p < c.P; ++p) {
        const std::string b = "attn_seq." + std::to_string(l) + "." + std::to_string(p) + ".";
        const auto& win = aot_get(sd, b + "in_proj_weight");
        const std::vector<I> q = matvec(win, c.dh, c.dh, 0, cin[i]);
        std::vector<I> o(c.dh);
        for (std::size_t h = 0; h < c.heads; ++h) {
          std::vector<I> ex(i + 1);
          I z;
          std::vector<std::vector<I>> vs(i + 1);
          for (std::size_t j = 0; j <= i; ++j) {
            const std::vector<I> kj = matvec(win, c.dh, c.dh, c.dh, cin[j]);
            vs[j] = matvec(win, c.dh, c.dh, 2 * c.dh, cin[j]);
            I s;
            for (std::size_t e = 0; e < hd; ++e) s += q[h * hd + e] * kj[h * hd + e];
            ex[j] = interval_exp(s * scale);
            z += ex[j];
          }
          for (std::size_t e = 0; e < hd; ++e)
            for (std::size_t j = 0; j <= i; ++j) o[h * hd + e] += ex[j] / z * vs[j][h * hd + e];
        }
        const std::vector<I> a = matvec(aot_get(sd, b + "out_proj.weight"), c.dh, c.dh, 0, o);
        for (std::size_t k = 0; k < c.dh; ++k) para[k] += a[k];
      }
      const std::vector<I> dec = comp ? matvec(aot_get(sd, "linear_decompress.weight"), c.d, c.dh, 0, para) : para;
      for (std::size_t k = 0; k < c.d; ++k) next[i][k] = dec[k] + res[i][k];
      if (c.width > 0) {
        const std::string b = "mlp_seq." + std::to_string(l) + ".";
        std::vector<I> hmid = matvec(aot_get(sd, b + "0.weight"), c.width, c.d, 0, next[i]);
        const auto& b1 = aot_get(sd, b + "0.bias");
        const I r2 = interval_sqrt(I(Rational(2)));
        for (std::size_t k = 0; k < c.width; ++k) {
          const I x = hmid[k] + iv(b1[k]);
          hmid[k] = x * (I(Rational(1)) + interval_erf(x / r2)) / I(Rational(2));
        }
        const std::vector<I> mo = matvec(aot_get(sd, b + "2.weight"), c.d, c.width, 0, hmid);
        for (std::size_t k = 0; k < c.d; ++k) next[i][k] = mo[k] + next[i][k];
      }
    }
    res = std::move(next);
  }
  return matvec(aot_get(sd, "unemb.weight"), c.N, c.d, 0, res[S - 1]);
}

// The reference margin as [lo, hi] doubles (outward).
std::pair<double, double> reference_margin(const StateDict& sd, const Config& c, const std::int64_t* seq, std::size_t S,
                                           std::size_t y) {
  Interval::PrecisionScope scope(512);
  const std::vector<I> lg = reference_logits(sd, c, seq, S);
  double lo = INFINITY, hi = INFINITY;
  for (std::size_t k = 0; k < c.N; ++k)
    if (k != y) {
      const I m = lg[y] - lg[k];
      lo = std::min(lo, m.lower_double_down());
      hi = std::min(hi, m.upper_double_up());
    }
  return {lo, hi};
}

const Config kAotConfigs[] = {
    {7, 6, 6, 6, 1, 1, 1, 0, 1.0},   // one layer, one block, d == d_head
    {9, 8, 8, 5, 1, 2, 2, 0, 1.5},   // parallel blocks, sub-heads
    {8, 10, 6, 6, 2, 1, 3, 0, 1.0},  // two layers, compress
    {6, 6, 6, 5, 2, 2, 2, 7, 1.0},   // two layers with MLPs
    {10, 9, 4, 7, 2, 1, 2, 5, 1.2},  // MLPs and compress
    {5, 4, 4, 4, 1, 1, 4, 3, 3.0},   // larger weights
};

}  // namespace

TEST_CASE("dana24-aot: double filter and float32 bound enclose the 512-bit margin", "[dana24_aot]") {
  std::uint64_t seed = 100;
  for (const Config& c : kAotConfigs) {
    const StateDict sd = aot_model(c, ++seed);
    const Dana24Aot m = dana24_aot_load(sd, c.heads, "model.pt");
    CHECK(m.layers == c.L);
    CHECK(m.parallel == c.P);
    CHECK(m.width == c.width);
    CHECK(m.compress == (c.d != c.dh));
    const Dana24AotData data = aot_data(12, c.cw - 1, c.N, seed * 7);
    CertifyOptions opt;
    opt.max_bits = 0;  // the double filter alone
    opt.threads = 2;
    const ModelVerdicts v = dana24_aot_certify(m, data, opt);
    REQUIRE(v.verdict.size() == data.T);
    for (std::size_t t = 0; t < data.T; ++t) {
      INFO("config N=" << c.N << " d=" << c.d << " dh=" << c.dh << " L=" << c.L << " width=" << c.width << " example " << t);
      const auto [rl, rh] = reference_margin(sd, c, data.sequences.data() + t * data.S, data.S, data.next[t]);
      // The exact margin lies in [rl, rh] (width ~1e-150): the certified enclosure must meet it.
      CHECK(v.margin_lo[t] <= rh);
      CHECK(rl <= v.margin_hi[t]);
      // Worst-case radii grow with every linear map's absolute row sums (the wrapping effect of ball
      // arithmetic): tight for one layer, looser for two; always far below the margins decided here.
      CHECK(v.margin_hi[t] - v.margin_lo[t] <= (c.L == 1 && c.scale <= 1.5 ? 1e-11 : 1e-4) * (1 + std::abs(rl)));
      if (v.verdict[t] == ExampleVerdict::correct) CHECK(rl > 0);
      if (v.verdict[t] == ExampleVerdict::wrong) CHECK(rh <= 0);
      if (rl > 1e-3 || rh < -1e-3) {
        CHECK(v.bits[t] == 53);
        CHECK(v.verdict[t] == (rl > 0 ? ExampleVerdict::correct : ExampleVerdict::wrong));
      }
      // float32: the emulated margin within the bound of the exact one.
      CHECK(std::abs(v.float32_margin[t] - rl) <= v.float32_error_bound[t] + (rh - rl));
      if (c.L == 1 && c.scale <= 1.0) CHECK(v.float32_error_bound[t] < 1e-3);
      if (v.float32_disagreement[t] == 0)  // the float32 margin's sign is the exact one
        CHECK((v.float32_margin[t] > 0) == (rl > 0));
    }
  }
}

TEST_CASE("dana24-aot: a margin below the double filter's reach is decided by MPFR", "[dana24_aot]") {
  // N = 2: the margin is (U_0 - U_1) . h. Row 1 is row 0 plus (-1, delta) with delta = h_0 / h_1 rounded,
  // so the margin is a rounding error of size ~1e-16 |h_0|: the double filter's radius (~1e-14) cannot
  // decide it; MPFR at 128 bits can.
  // One layer; and two layers with parallel blocks, compression and MLPs (the MPFR pass through all of it).
  const Config configs[] = {{2, 4, 4, 4, 1, 1, 2, 0, 1.0}, {2, 6, 4, 5, 2, 2, 2, 3, 1.0}};
  for (const Config& c : configs) {
    INFO("d=" << c.d << " L=" << c.L);
    StateDict sd = aot_model(c, 7);
    Dana24AotData data = aot_data(1, c.cw - 1, 2, 9);
    data.next[0] = 0;
    Config ref = c;
    std::vector<I> lg;
    std::vector<double> h(c.d);
    // Read h_0, h_1 off the reference with unemb = the unit rows e_0, e_1.
    {
      StateDict unit;
      for (const auto& [k, t] : sd.entries())
        if (k != "unemb.weight") unit.insert(k, t);
      std::vector<double> rows(2 * c.d, 0.0);
      rows[0] = rows[c.d + 1] = 1;
      unit.insert("unemb.weight", aot_tensor({2, c.d}, rows));
      Interval::PrecisionScope scope(512);
      lg = reference_logits(unit, ref, data.sequences.data(), data.S);
      h[0] = lg[0].upper_double_up();
      h[1] = lg[1].upper_double_up();
    }
    REQUIRE(h[1] != 0);
    const std::vector<double>& u0 = sd.find("unemb.weight")->f64;
    std::vector<double> U(u0.begin(), u0.end());
    const double delta = h[0] / h[1];
    for (std::size_t k = 0; k < c.d; ++k) U[c.d + k] = U[k];
    U[c.d + 0] = U[0] - 1.0;
    U[c.d + 1] = U[1] + delta;  // margin = h_0 - (delta rounded) h_1 ~ 0
    StateDict sd2;
    for (const auto& [k, t] : sd.entries())
      if (k != "unemb.weight") sd2.insert(k, t);
    Tensor ut = aot_tensor({2, c.d}, U);
    ut.dtype = DType::float64;
    sd2.insert("unemb.weight", ut);
    const Dana24Aot m = dana24_aot_load(sd2, c.heads, "model.pt");
    const auto [rl, rh] = reference_margin(sd2, c, data.sequences.data(), data.S, 0);
    REQUIRE(std::abs(rl) < 1e-12);
    REQUIRE((rl > 0 || rh < 0));  // the exact margin is not 0
    CertifyOptions only_double;
    only_double.max_bits = 0;
    const ModelVerdicts v0 = dana24_aot_certify(m, data, only_double);
    CHECK(v0.verdict[0] == ExampleVerdict::undecided);
    CHECK(v0.bits[0] == 0);
    CHECK(v0.margin_lo[0] <= rh);
    CHECK(rl <= v0.margin_hi[0]);
    CHECK(v0.float32_disagreement[0] == 1);
    const ModelVerdicts v = dana24_aot_certify(m, data, CertifyOptions{});
    CHECK(v.bits[0] == 128);
    CHECK(v.verdict[0] == (rl > 0 ? ExampleVerdict::correct : ExampleVerdict::wrong));
    CHECK(v.margin_lo[0] <= rh);
    CHECK(rl <= v.margin_hi[0]);
  }
}

TEST_CASE("dana24-aot: identical unembedding rows are an exact tie, certified wrong", "[dana24_aot]") {
  const Config c{6, 6, 6, 5, 2, 1, 2, 4, 1.0};
  StateDict sd = aot_model(c, 21);
  StateDict sd2;
  for (const auto& [k, t] : sd.entries()) {
    Tensor x = t;
    if (k == "unemb.weight")  // rows 2 and 4 equal and large (the winners)
      for (std::size_t j = 0; j < c.d; ++j) x.f64[2 * c.d + j] = x.f64[4 * c.d + j] = x.f64[2 * c.d + j] * 20;
    sd2.insert(k, x);
  }
  const Dana24Aot m = dana24_aot_load(sd2, c.heads, "model.pt");
  Dana24AotData data = aot_data(10, 4, c.N, 5);
  for (std::size_t t = 0; t < data.T; ++t) data.next[t] = t % 2 ? 2 : 4;
  const ModelVerdicts v = dana24_aot_certify(m, data, CertifyOptions{});
  for (std::size_t t = 0; t < data.T; ++t) {
    INFO("example " << t);
    CHECK(v.verdict[t] != ExampleVerdict::correct);
    CHECK(v.margin_hi[t] <= 0);
    CHECK(v.verdict[t] == ExampleVerdict::wrong);
    CHECK(v.bits[t] == 53);
  }
}

namespace {
std::string aot_load_error(const StateDict& sd, std::size_t heads) {
  try {
    dana24_aot_load(sd, heads, "m.pt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
StateDict aot_without(const StateDict& sd, const std::string& key) {
  StateDict out;
  for (const auto& [k, t] : sd.entries())
    if (k != key) out.insert(k, t);
  return out;
}
StateDict aot_replaced(const StateDict& sd, const std::string& key, Tensor x) {
  StateDict out;
  for (const auto& [k, t] : sd.entries()) out.insert(k, k == key ? x : t);
  return out;
}
}  // namespace

TEST_CASE("dana24-aot: loading errors name the key and the expectation", "[dana24_aot]") {
  const Config c{6, 8, 4, 5, 2, 2, 2, 3, 1.0};
  const StateDict sd = aot_model(c, 3);
  REQUIRE(aot_load_error(sd, 2).empty());
  auto has = [](const std::string& msg, const std::string& part) {
    INFO(msg);
    CHECK(msg.find(part) != std::string::npos);
    CHECK(msg.rfind("m.pt: ", 0) == 0);
  };
  has(aot_load_error(aot_without(sd, "unemb.weight"), 2), "unemb.weight: expected a tensor of shape (6, 8), missing");
  has(aot_load_error(aot_without(sd, "linear_compress.weight"), 2), "linear_compress.weight");
  has(aot_load_error(aot_without(sd, "attn_seq.1.1.out_proj.weight"), 2), "attn_seq.1.1.out_proj.weight");
  has(aot_load_error(aot_without(sd, "attn_seq.1.1.in_proj_weight"), 2), "attn_seq.1.1.in_proj_weight: expected a tensor of shape (12, 4), missing");
  has(aot_load_error(aot_without(sd, "mlp_seq.1.0.bias"), 2), "mlp_seq.1.0.bias");
  has(aot_load_error(aot_without(sd, "word_emb.weight"), 2), "word_emb.weight");
  has(aot_load_error(aot_replaced(sd, "attn_seq.0.1.in_proj_weight", aot_tensor({4, 4}, std::vector<double>(16, 0.5))), 2),
      "attn_seq.0.1.in_proj_weight: expected shape (12, 4), got (4, 4)");
  {
    Tensor t = *sd.find("pos_emb.weight");
    t.f64[3] = NAN;
    has(aot_load_error(aot_replaced(sd, "pos_emb.weight", t), 2), "pos_emb.weight[0][3]: expected a finite value");
  }
  {
    Tensor t = *sd.find("attn_mask");
    t.i64[1] = 0;
    has(aot_load_error(aot_replaced(sd, "attn_mask", t), 2), "attn_mask[0][1]: expected the causal mask");
    t = *sd.find("attn_mask");
    t.shape = {2, 8};
    has(aot_load_error(aot_replaced(sd, "attn_mask", t), 2), "attn_mask: expected shape (4, 4)");
  }
  {
    Tensor t = *sd.find("unemb.weight");
    t.dtype = DType::int64;
    t.i64.assign(t.f64.size(), 1);
    t.f64.clear();
    has(aot_load_error(aot_replaced(sd, "unemb.weight", t), 2), "unemb.weight: expected a floating-point tensor, got int64");
  }
  {
    StateDict extra = sd;
    extra.insert("attn_seq.0.0.in_proj_bias", aot_tensor({12}, std::vector<double>(12, 0)));
    has(aot_load_error(extra, 2), "attn_seq.0.0.in_proj_bias: expected no such tensor");
  }
  has(aot_load_error(sd, 3), "--heads: expected a divisor of d_head = 4, got 3");
  has(aot_load_error(sd, 0), "--heads: expected a divisor of d_head = 4, got 0");
  // Without attn_mask the model takes sequences up to pos_emb's rows.
  CHECK(dana24_aot_load(aot_without(sd, "attn_mask"), 2, "m.pt").max_len == 5);
  CHECK(dana24_aot_load(sd, 2, "m.pt").max_len == 4);
  // d == d_head: the authors' unused compress/decompress may be present or not.
  const Config e{5, 4, 4, 4, 1, 1, 1, 0, 1.0};
  const StateDict se = aot_model(e, 4);
  CHECK_FALSE(dana24_aot_load(se, 1, "m.pt").compress);
  CHECK(dana24_aot_load(aot_without(aot_without(se, "linear_compress.weight"), "linear_decompress.weight"), 1, "m.pt").N == 5);
}

TEST_CASE("dana24-aot: data errors name the position", "[dana24_aot]") {
  const Config c{6, 8, 4, 5, 1, 1, 2, 0, 1.0};
  const Dana24Aot m = dana24_aot_load(aot_model(c, 3), 2, "m.pt");
  auto err = [&](const Dana24AotData& d) {
    try {
      dana24_aot_certify(m, d, CertifyOptions{});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Dana24AotData d = aot_data(3, 4, c.N, 1);
  CHECK(err(d).empty());
  d.sequences[6] = 6;
  CHECK(err(d) == "data.npz: sequences[1][2]: expected a token id in [0, 6)");
  d.sequences[6] = -1;
  CHECK(err(d) == "data.npz: sequences[1][2]: expected a token id in [0, 6)");
  d = aot_data(3, 4, c.N, 1);
  d.next[2] = 99;
  CHECK(err(d) == "data.npz: next[2]: expected a token id in [0, 6)");
  d = aot_data(3, 5, c.N, 1);
  CHECK(err(d).find("data.npz: sequences: expected at most 4 tokens per sequence") == 0);
  // Shorter than the stored attn_mask (4 x 4): the authors' forward refuses it, and so does memcert; the
  // same model without its mask takes it.
  d = aot_data(3, 3, c.N, 1);
  CHECK(err(d) == "data.npz: sequences[0]: expected exactly 4 tokens per sequence (the model's attn_mask is 4 x 4, and its "
                  "forward refuses any other length), got 3");
  CHECK_NOTHROW(dana24_aot_certify(dana24_aot_load(aot_model(c, 3, false), 2, "m.pt"), d, CertifyOptions{}));
}

TEST_CASE("dana24-aot: a cancelling sum the double pass gets wrong in sign is not decided by it", "[dana24_aot]") {
  // No attention layers: logits = unemb word_emb[x]. Token 0 embeds as e = (2^53, -1.25, -2^53, 1.2), so the
  // margin of target 0 against class 1 is (1, 1, 1, 1) . e = 1.2 - 1.25 < 0 exactly, while the double sum
  // in order evaluates to 2^53 - 1 - 2^53 + 1.2 > 0: only its rounding-error bound keeps the double filter
  // from certifying the example correct.
  StateDict sd;
  Tensor we = aot_tensor({2, 4}, {0x1p53, -1.25, -0x1p53, 1.2, 0, 0, 0, 0});
  we.dtype = DType::float64;
  sd.insert("word_emb.weight", we);
  sd.insert("pos_emb.weight", aot_tensor({2, 4}, std::vector<double>(8, 0.0)));
  sd.insert("unemb.weight", aot_tensor({2, 4}, {1, 1, 1, 1, 0, 0, 0, 0}));
  const Dana24Aot m = dana24_aot_load(sd, 1, "m.pt");
  CHECK(m.layers == 0);
  const Rational exact = Rational(1.2) - Rational(1.25);
  REQUIRE(exact < 0);
  REQUIRE(((0x1p53 + -1.25) + -0x1p53) + 1.2 > 0);  // the double evaluation's sign
  Dana24AotData data;
  data.T = 1;
  data.S = 1;
  data.sequences = {0};
  data.next = {0};
  CertifyOptions only_double;
  only_double.max_bits = 0;
  const ModelVerdicts v0 = dana24_aot_certify(m, data, only_double);
  CHECK(v0.verdict[0] == ExampleVerdict::undecided);
  CHECK(Rational(v0.margin_lo[0]) <= exact);
  CHECK(exact <= Rational(v0.margin_hi[0]));
  const ModelVerdicts v = dana24_aot_certify(m, data, CertifyOptions{});
  CHECK(v.verdict[0] == ExampleVerdict::wrong);
  CHECK(v.bits[0] == 128);
  CHECK(Rational(v.margin_lo[0]) <= exact);
  CHECK(exact <= Rational(v.margin_hi[0]));
  CHECK(v.float32_disagreement[0] == 1);
}
