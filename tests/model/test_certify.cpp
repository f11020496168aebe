// `memcert certify`'s engine: hostile state_dicts are bad input naming the key and the shape; the double
// filter's proved enclosure contains the margin MPFR finds at 512 bits on random small models; ties and
// near-ties are escalated or left undecided, never guessed.
#include <cmath>
#include <random>
#include <string>

#include "catch.hpp"
#include "memcert/model/attention_readout.hpp"
#include "memcert/model/mahdavi24_baseline.hpp"
#include "memcert/model/mha_model.hpp"
#include "memcert/util/error.hpp"

using namespace memcert;

namespace {

Tensor ftensor(std::vector<std::size_t> shape, std::mt19937_64& rng, double scale = 0.5) {
  Tensor t;
  t.dtype = DType::float32;
  t.shape = shape;
  std::normal_distribution<float> g(0.0f, float(scale));
  for (std::size_t i = 0; i < t.numel(); ++i) t.f64.push_back(double(g(rng)));
  return t;
}

// A BaselineAttention state_dict: d_model D, input d_in, H heads of dh, dv = 1, C classes, pe rows P.
StateDict baseline_sd(std::size_t D, std::size_t d_in, std::size_t H, std::size_t dh, std::size_t C, std::size_t P,
                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  StateDict sd;
  sd.insert("embedding.weight", ftensor({D, d_in}, rng));
  sd.insert("embedding.bias", ftensor({D}, rng));
  sd.insert("pos_enc.pe", ftensor({P, D}, rng));
  sd.insert("attention.Wq", ftensor({H, D, dh}, rng, 1.0));
  sd.insert("attention.Wk", ftensor({H, D, dh}, rng, 1.0));
  sd.insert("attention.Wv", ftensor({H, D, 1}, rng));
  sd.insert("attention.Wo", ftensor({H, D}, rng));
  sd.insert("decoder.weight", ftensor({C, D}, rng));
  sd.insert("decoder.bias", ftensor({C}, rng));
  return sd;
}

StateDict without(const StateDict& sd, const std::string& key) {
  StateDict out;
  for (const auto& [k, t] : sd.entries())
    if (k != key) out.insert(k, t);
  return out;
}
StateDict replaced(const StateDict& sd, const std::string& key, Tensor t) {
  StateDict out;
  for (const auto& [k, v] : sd.entries()) out.insert(k, k == key ? t : v);
  return out;
}

std::string load_error(const StateDict& sd) {
  try {
    mahdavi24_baseline_load(sd, "m.pt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Examples {
  std::vector<double> X;  // T x (n+1) x d
  std::vector<std::int64_t> y;
  ReadoutExamples ex;
};
Examples examples(std::size_t T, std::size_t n, std::size_t d, std::size_t C, std::uint64_t seed) {
  Examples e;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g;
  for (std::size_t i = 0; i < T * (n + 1) * d; ++i) e.X.push_back(double(g(rng)));
  for (std::size_t t = 0; t < T; ++t) e.y.push_back(std::int64_t(rng() % C));
  e.ex.T = T;
  e.ex.n = n;
  e.ex.d = d;
  e.ex.q64 = e.X.data();
  e.ex.k64 = e.X.data() + d;
  e.ex.q_stride = e.ex.k_stride = (n + 1) * d;
  e.ex.classes = e.y.data();
  return e;
}

}  // namespace

TEST_CASE("certify: hostile state_dicts are bad input naming the key and the expected shape", "[model][certify]") {
  const StateDict good = baseline_sd(8, 6, 2, 4, 5, 16, 1);
  REQUIRE(load_error(good).empty());
  std::mt19937_64 rng(2);
  const std::string missing = load_error(without(good, "decoder.bias"));
  CHECK(missing.find("decoder.bias") != std::string::npos);
  CHECK(missing.find("(5,)") != std::string::npos);
  const std::string shape = load_error(replaced(good, "attention.Wk", ftensor({2, 8, 5}, rng)));
  CHECK(shape.find("attention.Wk") != std::string::npos);
  CHECK(shape.find("(2, 8, 4)") != std::string::npos);
  Tensor ints;
  ints.dtype = DType::int64;
  ints.shape = {8, 6};
  ints.i64.assign(48, 1);
  const std::string dtype = load_error(replaced(good, "embedding.weight", ints));
  CHECK(dtype.find("embedding.weight") != std::string::npos);
  CHECK(dtype.find("int64") != std::string::npos);
  Tensor nan = ftensor({2, 8, 4}, rng);
  nan.f64[3] = std::nan("");
  const std::string nans = load_error(replaced(good, "attention.Wq", nan));
  CHECK(nans.find("attention.Wq") != std::string::npos);
  CHECK(nans.find("NaN") != std::string::npos);
  StateDict extra = good;
  extra.insert("attention.bias", ftensor({3}, rng));
  CHECK(load_error(extra).find("attention.bias") != std::string::npos);
  // mha: a torch layout without --heads, a memcert layout with a wrong skip.
  StateDict mha;
  mha.insert("in_proj_weight", ftensor({24, 8}, rng));
  mha.insert("out_proj.weight", ftensor({8, 8}, rng));
  CHECK_THROWS_AS(mha_load(mha, 0, "m.pt"), InputError);
  CHECK_NOTHROW(mha_load(mha, 2, "m.pt"));
  CHECK_THROWS_AS(mha_load(mha, 3, "m.pt"), InputError);  // 3 does not divide 8
  StateDict partial = mha;
  partial.insert("in_proj_bias", ftensor({24}, rng));  // without out_proj.bias
  try {
    mha_load(partial, 2, "m.pt");
    FAIL("in_proj_bias without out_proj.bias accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("out_proj.bias") != std::string::npos);
  }
}

TEST_CASE("certify: the double filter's enclosure contains the 512-bit MPFR margin", "[model][certify]") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::size_t D = 4 + seed % 3, d_in = 3 + seed % 2, H = 1 + seed % 3, dh = 2 + seed % 2, C = 3 + seed % 2, n = 3 + seed % 4;
    const Mahdavi24Baseline m = mahdavi24_baseline_load(baseline_sd(D, d_in, H, dh, C, n + 1, seed), "m.pt");
    Examples e = examples(12, n, d_in, C, seed + 100);
    for (std::size_t t = 0; t < 12; ++t) {
      double lo, hi, l5, h5;
      attention_readout_margin_double(m.net, e.ex, t, lo, hi);
      attention_readout_margin_mpfr(m.net, e.ex, t, 512, l5, h5);
      INFO("seed " << seed << " example " << t << ": double [" << lo << ", " << hi << "], mpfr [" << l5 << ", " << h5 << "]");
      REQUIRE(lo <= hi);
      CHECK(lo <= h5);
      CHECK(l5 <= hi);
      CHECK(hi - lo < 1e-9);       // the proved bound is not vacuous
      CHECK(h5 - l5 <= 1e-12 * (1 + std::fabs(l5)));
    }
  }
}

TEST_CASE("certify: exact ties and near-ties are escalated or undecided, never guessed", "[model][certify]") {
  // Two decoder rows that differ yet give equal logits: the output projection's columns 0 and 1 are equal,
  // decoder rows 0 = e_0 and 1 = e_1, so logit 0 = out_0 = out_1 = logit 1 exactly.
  StateDict sd = baseline_sd(4, 3, 2, 2, 3, 8, 7);
  std::mt19937_64 rng(3);
  Tensor wo = ftensor({2, 4}, rng);
  for (std::size_t i = 0; i < 2; ++i) wo.f64[i * 4 + 1] = wo.f64[i * 4 + 0];
  Tensor dec;
  dec.dtype = DType::float32;
  dec.shape = {3, 4};
  dec.f64 = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  Tensor bias;
  bias.dtype = DType::float64;
  bias.shape = {3};
  bias.f64 = {100, 100, 0};
  sd = replaced(replaced(replaced(sd, "attention.Wo", wo), "decoder.weight", dec), "decoder.bias", bias);
  Mahdavi24Baseline m = mahdavi24_baseline_load(sd, "m.pt");
  Examples e = examples(6, 4, 3, 1, 11);  // every label 0
  CertifyOptions opts;
  opts.threads = 1;
  ModelVerdicts r = attention_readout_certify(m.net, e.ex, opts);
  for (std::size_t t = 0; t < 6; ++t) {
    CHECK(r.verdict[t] == ExampleVerdict::undecided);  // margin exactly 0: intervals cannot show <= 0
    CHECK(r.bits[t] == 0);
    CHECK(r.margin_lo[t] <= 0);
    CHECK(r.margin_hi[t] >= 0);
  }
  // Biases 2^-100 apart: margin exactly +-2^-100, beyond the double filter, decided by MPFR.
  for (double off : {0x1p-100, -0x1p-100}) {
    bias.f64 = {off > 0 ? off : 0.0, off > 0 ? 0.0 : -off, -1000};
    m = mahdavi24_baseline_load(replaced(sd, "decoder.bias", bias), "m.pt");
    r = attention_readout_certify(m.net, e.ex, opts);
    for (std::size_t t = 0; t < 6; ++t) {
      INFO("offset " << off << " example " << t);
      CHECK(r.verdict[t] == (off > 0 ? ExampleVerdict::correct : ExampleVerdict::wrong));
      CHECK(r.bits[t] >= 128);
    }
  }
  // Identical decoder rows: the margin is exactly 0, proved at once (wrong: a tie is not a correct prediction).
  dec.f64 = {1, 2, 3, 4, 1, 2, 3, 4, 0, 0, 0, 0};
  bias.f64 = {5, 5, 0};
  m = mahdavi24_baseline_load(replaced(replaced(sd, "decoder.weight", dec), "decoder.bias", bias), "m.pt");
  r = attention_readout_certify(m.net, e.ex, opts);
  for (std::size_t t = 0; t < 6; ++t) {
    CHECK(r.verdict[t] == ExampleVerdict::wrong);
    CHECK(r.margin_hi[t] == 0);
  }
}
