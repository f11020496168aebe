// Kind "model": certificates of a trained model's verdicts, checked against an independent second method.
// Each instance (model_fixture.hpp) has random weights and data; its examples' margins are computed by a
// plain 300-bit MPFR forward pass written straight from the architecture's definition, which decides the
// true verdicts. The certificate stating them is accepted; every altered verdict, weight, example,
// digest, bound, shape and index list is rejected with a reason; near-ties escalate to MPFR and exact ties
// are never accepted as correct.
#include "catch.hpp"

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "kinds/model/model_enclosure.hpp"
#include "memcert/data/matrix_io.hpp"
#include "model_fixture.hpp"
#include "portable_mode.hpp"
#include "support/cli_run.hpp"

using namespace model_fixture;
using nlohmann::json;
using memcert_checker::Verdict;

namespace {

bool has(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}
std::size_t count_of(const Verdict& v, const std::string& name) {
  for (const auto& [k, c] : v.counts)
    if (k == name) return c;
  return static_cast<std::size_t>(-1);
}
// At least one correct and one wrong example (the seeds below give both).
void require_mixed(const Instance& in) {
  std::size_t ok = 0;
  for (std::size_t t = 0; t < in.T(); ++t) ok += is_correct(in, t);
  REQUIRE(ok > 0);
  REQUIRE(ok < in.T());
}
std::vector<std::size_t> indices(const json& a) { return a.get<std::vector<std::size_t>>(); }

// Every single verdict altered: correct -> wrong rejected, correct -> undecided accepted, wrong -> correct
// rejected, wrong -> undecided accepted.
void every_altered_verdict(const Instance& in, const json& cert) {
  for (std::size_t t = 0; t < in.T(); ++t) {
    const bool ok = is_correct(in, t);
    json w = cert, u = cert;
    std::vector<std::size_t> wrong = indices(cert["wrong"]), und;
    if (ok) {
      wrong.push_back(t);
      std::sort(wrong.begin(), wrong.end());
      w["wrong"] = wrong;
      und.push_back(t);
      u["undecided"] = und;
    } else {
      wrong.erase(std::find(wrong.begin(), wrong.end(), t));
      w["wrong"] = wrong;
      if (!w.contains(in.regression ? "max_error" : "min_margin")) w[in.regression ? "max_error" : "min_margin"] = in.regression ? "1e9" : "-1e9";
      u["wrong"] = wrong;
      u["undecided"] = json::array({t});
    }
    INFO("example " << t << (ok ? " (correct)" : " (wrong)"));
    const Verdict vw = verify(in, w);
    CHECK_FALSE(vw.valid);
    CHECK(vw.reason.find("example " + std::to_string(t) + ":") == 0);
    const Verdict vu = verify(in, u);
    CHECK(vu.valid);
  }
}

}  // namespace

TEST_CASE("model: mahdavi24-baseline certificate of the true verdicts is accepted, every altered verdict rejected") {
  const Instance in = mahdavi(11);
  require_mixed(in);
  const json cert = certificate(in);
  const Verdict v = verify(in, cert);
  INFO(v.reason);
  REQUIRE(v.valid);
  CHECK(v.kind == "model");
  CHECK(count_of(v, "certified_wrong") == cert["wrong"].size());
  CHECK(count_of(v, "certified_correct") == in.T() - cert["wrong"].size());
  CHECK(count_of(v, "undecided") == 0);
  CHECK(has(v.not_checked, "float32_disagreements: 0 example(s)"));
  json f = cert;
  f["float32_disagreements"] = json::array({1, 4});
  CHECK(has(verify(in, f).not_checked, "float32_disagreements: 2 example(s)"));
  every_altered_verdict(in, cert);
}

TEST_CASE("model: digests tie the certificate to the weights and the data") {
  const Instance in = mahdavi(12);
  const json cert = certificate(in);
  REQUIRE(verify(in, cert).valid);
  SECTION("a changed weight") {
    Instance bad = in;
    bad.model[3].values[2] += 0.25;
    const Verdict v = verify(bad, cert);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("model.digest") == 0);
  }
  SECTION("a changed example value") {
    Instance bad = in;
    bad.data[0].values_f32[5] = -bad.data[0].values_f32[5] + 0.5f;
    const Verdict v = verify(bad, cert);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("data.digest") == 0);
  }
  SECTION("a forged digest") {
    json c = cert;
    c["model"]["digest"] = "sha256:" + std::string(64, '0');
    CHECK(verify(in, c).reason.find("model.digest") == 0);
    c = cert;
    c["data"]["digest"] = "sha256:" + std::string(64, 'a');
    CHECK(verify(in, c).reason.find("data.digest") == 0);
  }
  SECTION("float32 storage of the same values has the same digest") {
    Instance wide = in;
    for (auto& a : wide.data)
      if (!a.values_f32.empty()) {
        a.values.assign(a.values_f32.begin(), a.values_f32.end());
        a.values_f32.clear();
      }
    CHECK(verify(wide, cert).valid);
  }
}

TEST_CASE("model: min_margin and max_error must hold for every correct example") {
  const Instance in = mahdavi(13);
  require_mixed(in);
  json cert = certificate(in);
  R best;
  bool first = true;
  for (std::size_t t = 0; t < in.T(); ++t)
    if (is_correct(in, t) && (first || in.margin[t] < best)) best = in.margin[t], first = false;
  json c = cert;
  c["min_margin"] = decimal(best * R(1.0001), false);  // above the true minimum
  Verdict v = verify(in, c);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("min_margin") != std::string::npos);
  c["min_margin"] = decimal(best * R(0.9999), true);
  CHECK(verify(in, c).valid);
  c.erase("min_margin");
  v = verify(in, c);
  CHECK_FALSE(v.valid);
  CHECK(v.malformed);

  MahdaviShape rs;
  rs.regression = true;
  const Instance reg = mahdavi(14, rs);
  require_mixed(reg);
  const json rc = certificate(reg);
  v = verify(reg, rc);
  INFO(v.reason);
  REQUIRE(v.valid);
  every_altered_verdict(reg, rc);
  R worst;
  first = true;
  for (std::size_t t = 0; t < reg.T(); ++t)
    if (is_correct(reg, t) && (first || worst < reg.margin[t])) worst = reg.margin[t], first = false;
  json r2 = rc;
  r2["max_error"] = decimal(worst * R(0.9999), true);  // below the true maximum
  v = verify(reg, r2);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("max_error") != std::string::npos);
}

TEST_CASE("model: shapes, names and index lists") {
  const Instance in = mahdavi(15);
  const json cert = certificate(in);
  auto with_digest = [](Instance& x) {
    json c = certificate(x);
    return c;
  };
  SECTION("a mis-shaped tensor is rejected naming the key") {
    Instance bad = in;
    find(bad.model, "attention.Wk")->shape = {2, 4, 6};  // 48 values either way
    const Verdict v = verify(bad, with_digest(bad));
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("\"attention.Wk\"") != std::string::npos);
  }
  SECTION("a missing tensor") {
    Instance bad = in;
    bad.model.erase(bad.model.begin() + 8);  // decoder.bias
    bad.margin = in.margin;
    const Verdict v = verify(bad, with_digest(bad));
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("\"decoder.bias\" is missing") != std::string::npos);
  }
  SECTION("an extra tensor") {
    Instance bad = in;
    bad.model.push_back(arr("extra.weight", {1}, {1.0}));
    const Verdict v = verify(bad, with_digest(bad));
    CHECK(v.reason.find("\"extra.weight\"") != std::string::npos);
  }
  SECTION("a data set of another T") {
    json c = cert;
    c["T"] = in.T() - 1;
    std::vector<std::size_t> w = indices(c["wrong"]);
    w.erase(std::remove(w.begin(), w.end(), in.T() - 1), w.end());
    c["wrong"] = w;
    CHECK(verify(in, c).reason.find("T:") == 0);
  }
  SECTION("out-of-range, repeated and unsorted indices") {
    json c = cert;
    c["undecided"] = json::array({in.T()});
    CHECK(verify(in, c).reason.find("undecided[0]") == 0);
    c["undecided"] = json::array({1, 1});
    CHECK(verify(in, c).reason.find("repeated") != std::string::npos);
    c["undecided"] = json::array({2, 1});
    CHECK(verify(in, c).reason.find("out of order") != std::string::npos);
    c = cert;
    std::vector<std::size_t> w = indices(c["wrong"]);
    REQUIRE(!w.empty());
    c["undecided"] = json::array({w[0]});
    CHECK(verify(in, c).reason.find("also listed as wrong") != std::string::npos);
  }
  SECTION("no supplier: malformed") {
    const Verdict v = memcert_checker::verify_certificate_text(cert.dump());
    CHECK(v.malformed);
  }
  SECTION("fields") {
    json c = cert;
    c["heads"] = 2;
    CHECK(verify(in, c).malformed);
    c = cert;
    c["claim"] = "something else";
    CHECK_FALSE(verify(in, c).valid);
    c = cert;
    c["arch"] = "gpt";
    CHECK(verify(in, c).malformed);
  }
}

TEST_CASE("model: near-ties escalate to MPFR and are decided correctly; exact ties are never correct") {
  Instance in = mahdavi(16);
  // Example 0's bias moved so that its margin is within a rounding of zero: logit[y] shifted by -m0,
  // rounded to a double, leaves a margin of about 1e-17 (either sign), below the double pass's bound.
  const std::size_t y0 = static_cast<std::size_t>(find(in.data, "y")->value(0));
  NamedArray& bd = *find(in.model, "decoder.bias");
  bd.values[y0] = (R(bd.values[y0]) - in.margin[0]).d();
  mahdavi_reference(in);
  REQUIRE(std::fabs(in.margin[0].d()) < 1e-14);
  REQUIRE(in.margin[0].sign() != 0);
  json cert = certificate(in);
  Verdict v = verify(in, cert);
  INFO(v.reason);
  REQUIRE(v.valid);
  CHECK(has(v.applied, "by MPFR at 128 bits"));
  // the near-tie's verdict altered: rejected
  json alt = cert;
  std::vector<std::size_t> w = indices(cert["wrong"]);
  if (is_correct(in, 0)) {
    w.insert(w.begin(), 0);
  } else {
    w.erase(w.begin());
    alt["min_margin"] = "0";
  }
  alt["wrong"] = w;
  CHECK_FALSE(verify(in, alt).valid);

  // Exact ties: decoder rows 0 and 1 identical (and their biases), both far above the others, so every
  // example of class 0 or 1 has margin exactly 0.
  Instance tie = mahdavi(17);
  NamedArray& W = *find(tie.model, "decoder.weight");
  const std::size_t dO = W.shape[1];
  for (std::size_t i = 0; i < dO; ++i) W.values[dO + i] = W.values[i];
  NamedArray& b = *find(tie.model, "decoder.bias");
  b.values[0] = b.values[1] = 100;
  mahdavi_reference(tie);
  std::vector<std::size_t> tied;
  for (std::size_t t = 0; t < tie.T(); ++t)
    if (find(tie.data, "y")->value(t) < 2) {
      REQUIRE(tie.margin[t].sign() == 0);
      tied.push_back(t);
    }
  REQUIRE(!tied.empty());
  cert = certificate(tie);  // ties listed as wrong (margin 0 is not a correct prediction)
  v = verify(tie, cert);
  INFO(v.reason);
  CHECK(v.valid);
  for (std::size_t t : tied) {
    json c = cert;
    std::vector<std::size_t> ww = indices(c["wrong"]);
    ww.erase(std::find(ww.begin(), ww.end(), t));
    c["wrong"] = ww;
    c["min_margin"] = "-1";
    CHECK_FALSE(verify(tie, c).valid);
  }
}

TEST_CASE("model: a tolerance within 1e-60 of an example's error is decided at 256 bits") {
  MahdaviShape rs;
  rs.regression = true;
  for (const double sign : {1.0, -1.0}) {
    Instance in = mahdavi(18, rs);
    // tolerance = example 0's error (300-bit reference) +- 1e-60, written with 75 significant digits
    R tol = in.margin[0] + R(sign) * R(1e-60);
    char* text = nullptr;
    mpfr_asprintf(&text, "%.75Re", tol.v);
    in.tolerance = text;
    mpfr_free_str(text);
    const json cert = certificate(in);
    REQUIRE(is_correct(in, 0) == (sign > 0));
    const Verdict v = verify(in, cert);
    INFO(v.reason);
    REQUIRE(v.valid);
    CHECK(has(v.applied, "by MPFR at 256 bits"));
    json alt = cert;  // example 0's verdict flipped
    std::vector<std::size_t> w = indices(cert["wrong"]);
    if (sign > 0) w.insert(w.begin(), 0);
    else w.erase(w.begin()), alt["max_error"] = "1e9";
    alt["wrong"] = w;
    CHECK_FALSE(verify(in, alt).valid);
  }
}

TEST_CASE("model: dana24-aot, with and without compression and MLP") {
  DanaShape shapes[3];
  shapes[1].d = 6;  // linear_compress / linear_decompress in use
  shapes[2].width = 5;
  shapes[2].L = 1;
  std::uint64_t seed = 21;
  for (const DanaShape& s : shapes) {
    Instance in = dana(seed++, s);
    const json cert = certificate(in);
    const Verdict v = verify(in, cert);
    INFO(v.reason);
    REQUIRE(v.valid);
    every_altered_verdict(in, cert);
  }
  Instance in = dana(30);
  const json cert = certificate(in);
  json c = cert;
  c["heads"] = 3;  // does not divide d_head = 4
  CHECK(verify(in, c).reason.find("heads") == 0);
  Instance bad = in;
  find(bad.model, "attn_mask")->values[1] = 0;  // not causal
  CHECK(verify(bad, certificate(bad)).reason.find("\"attn_mask\"") != std::string::npos);
  bad = in;
  find(bad.data, "next")->values[0] = 99;  // not a token
  CHECK(verify(bad, certificate(bad)).reason.find("next") != std::string::npos);
  bad = in;  // sequences one token shorter than the 4 x 4 attn_mask: not an input of the model's forward
  {
    NamedArray& q = *find(bad.data, "sequences");
    const std::size_t T = q.shape[0], S = q.shape[1];
    std::vector<double> v;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j + 1 < S; ++j) v.push_back(q.values[t * S + j]);
    q.values = v;
    q.shape = {T, S - 1};
  }
  CHECK(verify(bad, certificate(bad)).reason ==
        "data: sequences of 3 tokens, expected exactly 4 (the model's attn_mask is 4 x 4; its forward refuses any other length)");
}

TEST_CASE("model: mha, classification and regression") {
  MhaShape s;
  Instance in = mha(41, s);
  require_mixed(in);
  json cert = certificate(in);
  Verdict v = verify(in, cert);
  INFO(v.reason);
  REQUIRE(v.valid);
  every_altered_verdict(in, cert);
  Instance bad = in;
  bad.att.queries[0] += 0.5;
  CHECK(verify(bad, cert).reason.find("data.digest") == 0);

  s.regression = true;
  s.biases = false;
  Instance reg = mha(42, s);
  require_mixed(reg);
  cert = certificate(reg);
  v = verify(reg, cert);
  INFO(v.reason);
  REQUIRE(v.valid);
  every_altered_verdict(reg, cert);
}

// The command line: `memcert verify CERT` reads the files a model certificate names (relative names next to
// CERT), and says how many examples each verdict covers.
TEST_CASE("model: memcert verify reads the model and data files the certificate names") {
  const char* bin = std::getenv("MEMCERT_BIN");
  if (!bin) { WARN("MEMCERT_BIN not set (run through ctest): skipped"); return; }
  const std::string dir = memcert_test::scratch_dir("checker_model");
  const Instance in = mahdavi(91);
  auto npz = [](const std::string& path, const std::vector<NamedArray>& arrays) {
    std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>> m;
    for (const auto& a : arrays) {
      std::vector<double> v(a.size());
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = a.value(i);
      m[a.name] = {a.shape, v};
    }
    memcert::npz_write_float64(path, m);
  };
  npz(dir + "/model.npz", in.model);
  npz(dir + "/data.npz", in.data);
  json cert = certificate(in);
  cert["model"]["file"] = "model.npz";
  auto verify_cli = [&](const json& c, json& out) {
    std::ofstream(dir + "/cert.json") << c.dump();
    const int s = std::system((std::string(bin) + " verify " + dir + "/cert.json --json >" + dir + "/out.json 2>" + dir + "/err.txt").c_str());
    std::ifstream f(dir + "/out.json");
    std::stringstream ss;
    ss << f.rdbuf();
    out = ss.str().empty() ? json() : json::parse(ss.str());
    return WEXITSTATUS(s);
  };
  json out;
  CHECK(verify_cli(cert, out) == 0);
  CHECK(out["valid"] == true);
  CHECK(out["certified_wrong"] == cert["wrong"].size());
  CHECK(out["certified_correct"] == in.T() - cert["wrong"].size());
  CHECK(out["undecided"] == 0);
  json alt = cert;
  alt["wrong"] = json::array();
  alt["min_margin"] = "0";
  CHECK(verify_cli(alt, out) == 1);
  CHECK(out["valid"] == false);
  alt = cert;
  alt["model"]["file"] = "missing.npz";
  CHECK(verify_cli(alt, out) == 2);
}

TEST_CASE("model: the double exp enclosure contains exp(x) and is tight") {
  std::mt19937_64 g(81);
  std::uniform_real_distribution<double> u(-800, 720);
  mpfr_t e;
  mpfr_init2(e, 200);
  for (int i = 0; i < 20000; ++i) {
    const double x = i < 10 ? std::vector<double>{0, -0.0, 1e-300, -1e-300, 0.3465, -0.3466, 709, -708, -708.5, -745}[i]
                            : (i % 2 ? u(g) : u(g) / 100);
    double lo, hi;
    if (!memcert_checker::model_kind::exp_bounds(x, lo, hi)) {
      CHECK(x > 709);
      continue;
    }
    mpfr_set_d(e, x, MPFR_RNDN);
    mpfr_exp(e, e, MPFR_RNDN);
    INFO("x = " << x);
    CHECK(mpfr_cmp_d(e, lo) >= 0);
    CHECK(mpfr_cmp_d(e, hi) <= 0);
    if (x > -700) CHECK(hi - lo <= (1e-13 + 1e-15 * std::fabs(x)) * hi);  // r known to a few ulps of x
  }
  mpfr_clear(e);
}

TEST_CASE("model: the portable mode gives the same verdicts") {
  const Instance in = mahdavi(51);
  const json cert = certificate(in);
  json alt = cert;
  alt["wrong"] = json::array();
  alt["min_margin"] = "0";
  const Verdict a = verify(in, cert), b = verify(in, alt);
  PortableMode on(true);
  const Verdict pa = verify(in, cert), pb = verify(in, alt);
  CHECK(a.valid == pa.valid);
  CHECK(b.valid == pb.valid);
  CHECK(b.reason == pb.reason);
  CHECK(a.valid);
}

TEST_CASE("model: the budget answers undecided before the work") {
  const Instance in = mahdavi(52);
  memcert_checker::Budget b;
  b.max_seconds = 1e-9;
  const Verdict v = verify(in, certificate(in), b);
  CHECK(v.undecided);
  CHECK_FALSE(v.valid);
}

// Paper scale (mahdavi24-baseline T = 20,000, n = 32, d = 64, H = 20): regression with a huge tolerance,
// so every example is claimed correct and checked. Run by hand: test_checker "[model-paper-scale]".
TEST_CASE("model: paper-scale mahdavi24-baseline within verify's default budget", "[.][model-paper-scale]") {
  std::mt19937_64 g(7);
  const std::size_t T = 20000, n = 32, d = 64, H = 20;
  Instance in;
  in.arch = "mahdavi24-baseline";
  in.regression = true;
  in.tolerance = "1e9";
  in.model = {arr("embedding.weight", {d, d}, rnd(g, d * d, 0.2), true), arr("embedding.bias", {d}, rnd(g, d, 0.1), true),
              arr("pos_enc.pe", {64, d}, rnd(g, 64 * d), true), arr("attention.Wq", {H, d, d}, rnd(g, H * d * d, 0.2), true),
              arr("attention.Wk", {H, d, d}, rnd(g, H * d * d, 0.2), true), arr("attention.Wv", {H, d, 1}, rnd(g, H * d), true),
              arr("attention.Wo", {H, d}, rnd(g, H * d), true), arr("decoder.weight", {1, d}, rnd(g, d), true),
              arr("decoder.bias", {1}, rnd(g, 1), true)};
  in.data = {arr("X", {T, n + 1, d}, rnd(g, T * (n + 1) * d), true), arr("y", {T}, rnd(g, T))};
  in.margin.assign(T, R());
  json cert = certificate(in);
  cert["wrong"] = json::array();
  cert["max_error"] = "1e9";
  memcert_checker::Budget b;
  b.max_seconds = 60;
  b.max_bytes = 4096.0 * 1024 * 1024;
  const auto start = std::chrono::steady_clock::now();
  const Verdict v = verify(in, cert, b);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(v.reason);
  CHECK(v.valid);
  WARN("paper scale: " << secs << " s");
}
