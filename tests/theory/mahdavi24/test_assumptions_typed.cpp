// assumptions_report_typed (typed storage, engine kernels, separation sweep) against assumptions_report
// (every entry a GMP rational, exact routines): the whole JSON must agree on random float data, near-
// singular contexts, dependent queries, data whose Assumption 3 sums are not doubles, int64 data, and
// repeated tokens.
#include "catch.hpp"

#include <unistd.h>

#include <filesystem>
#include <random>

#include "memcert/linalg/fmat/numerical_rank.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;

namespace {

TypedAttentionDataset typed_of(const AttentionDataset& q) {
  TypedAttentionDataset ds;
  ds.T = q.T(), ds.n = q.n(), ds.d = q.d();
  QMatrix all(ds.T * ds.n, ds.d);
  for (std::size_t t = 0; t < ds.T; ++t)
    std::copy(q.contexts[t].data().begin(), q.contexts[t].data().end(), all.data().begin() + t * ds.n * ds.d);
  ds.contexts = typed_matrix_from_qmat(std::move(all));
  ds.queries = typed_matrix_from_qmat(q.queries);
  return ds;
}

AttentionDataset float_data(std::mt19937_64& g, std::size_t T, std::size_t n, std::size_t d) {
  std::normal_distribution<float> gauss;
  AttentionDataset ds;
  for (std::size_t t = 0; t < T; ++t) {
    QMatrix E(n, d);
    for (auto& x : E.data()) x = rational_from_double(gauss(g));
    ds.contexts.push_back(E);
  }
  ds.queries = QMatrix(T, d);
  for (auto& x : ds.queries.data()) x = rational_from_double(gauss(g));
  return ds;
}

void require_same(const AttentionDataset& q, std::uint64_t budget, Storage expect) {
  TypedAttentionDataset t = typed_of(q);
  REQUIRE(t.contexts.storage == expect);
  nlohmann::json a = assumptions_report(q, budget), b = assumptions_report_typed(t, budget, 1);
  INFO(a.dump() << "\n" << b.dump());
  REQUIRE(a == b);
}

}  // namespace

TEST_CASE("assumptions_report_typed equals the rational report", "[mahdavi24][assumptions][typed]") {
  std::mt19937_64 g(20261125);
  SECTION("random float data, enumeration and sampling") {
    require_same(float_data(g, 6, 3, 5), 20'000'000, Storage::float64);
    require_same(float_data(g, 9, 4, 6), 10, Storage::float64);  // sampled Kruskal route
  }
  SECTION("fewer queries than dimensions: independent (one rank decides every level) or not") {
    AttentionDataset ds = float_data(g, 6, 3, 9);
    require_same(ds, 20'000'000, Storage::float64);
    for (std::size_t c = 0; c < 9; ++c) ds.queries(5, c) = ds.queries(1, c) - ds.queries(3, c) * 2;  // dependent 3-subset
    require_same(ds, 20'000'000, Storage::float64);
    for (std::size_t c = 0; c < 9; ++c) ds.queries(5, c) = ds.queries(1, c) + ds.queries(2, c) + ds.queries(3, c) + ds.queries(4, c);
    require_same(ds, 20'000'000, Storage::float64);  // dependent only as a 5-subset: Kruskal rank 4 >= n = 3
  }
  SECTION("near-singular contexts and dependent queries") {
    AttentionDataset ds = float_data(g, 7, 3, 5);
    for (std::size_t c = 0; c < 5; ++c) {
      ds.contexts[2](2, c) = ds.contexts[2](0, c) * 2 - ds.contexts[2](1, c);       // rank 2 context
      ds.queries(4, c) = ds.queries(0, c) + ds.queries(1, c) * 4 - ds.queries(2, c);  // dependent 4-subset
    }
    // a context whose rank is full only through a 2^-40 perturbation
    ds.contexts[5](1, 0) = ds.contexts[5](0, 0) + rational_from_double(0x1p-40);
    for (std::size_t c = 1; c < 5; ++c) ds.contexts[5](1, c) = ds.contexts[5](0, c);
    require_same(ds, 20'000'000, Storage::float64);
    require_same(ds, 10, Storage::float64);
  }
  SECTION("Assumption 3 sums that are not doubles, repeated tokens") {
    AttentionDataset ds = float_data(g, 5, 3, 4);
    ds.contexts[1](0, 0) = rational_from_double(0x1p-70);  // e + xbar needs more than 53 bits
    for (std::size_t c = 0; c < 4; ++c) ds.contexts[3](2, c) = ds.contexts[0](1, c);  // a repeated token
    require_same(ds, 20'000'000, Storage::float64);
    ds.contexts[2](1, 3) = rational_from_double(0x1p-200);  // beyond 128-bit fixed point: the GMP sums
    require_same(ds, 20'000'000, Storage::float64);
    ds.contexts[2](1, 3) = rational_from_double(-0x1p-90);  // 128-bit fixed point, negative, not a double
    ds.queries(4, 2) = rational_from_double(0x1p20);
    require_same(ds, 20'000'000, Storage::float64);
  }
  SECTION("Assumption 3 sums of 54 to 61 bits: the report's scaled integer rows, enumerated and sampled") {
    AttentionDataset ds = float_data(g, 9, 4, 6);
    ds.contexts[1](0, 0) = rational_from_double(0x1p-55);  // sums need ~60 bits: int64 after one scale 2^E
    ds.contexts[6](3, 2) = rational_from_double(-0x1p-50);
    require_same(ds, 20'000'000, Storage::float64);
    require_same(ds, 10, Storage::float64);
    ds.contexts[8] = ds.contexts[1];  // rows 1 and 8 of Assumption 3 equal: a dependency with coefficients
    for (std::size_t c = 0; c < 6; ++c) ds.queries(8, c) = ds.queries(1, c);
    require_same(ds, 20'000'000, Storage::float64);
    require_same(ds, 10, Storage::float64);
    // Row 7 = row 1 (a wide sum) + row 2 (a double sum): a dependency only if both kinds share one scale.
    ds.contexts[8] = float_data(g, 1, 4, 6).contexts[0];
    ds.contexts[2](0, 0) = 0;
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t c = 0; c < 6; ++c) ds.contexts[7](i, c) = ds.contexts[1](i, c) + ds.contexts[2](i, c);
    for (std::size_t c = 0; c < 6; ++c) ds.queries(7, c) = ds.queries(1, c) + ds.queries(2, c);
    require_same(ds, 20'000'000, Storage::float64);
    require_same(ds, 10, Storage::float64);
  }
  SECTION("int64 data and rational data") {
    std::uniform_int_distribution<int> v(-3, 3);
    AttentionDataset ds = float_data(g, 6, 2, 4);
    for (auto& E : ds.contexts)
      for (auto& x : E.data()) x = v(g);
    for (auto& x : ds.queries.data()) x = v(g);
    require_same(ds, 20'000'000, Storage::int64);
    ds.contexts[0](0, 0) = Rational(1, 3);  // the rational route
    require_same(ds, 20'000'000, Storage::rational);
  }
}

TEST_CASE("token_separation_doubles equals token_separation", "[mahdavi24][separation][typed]") {
  std::mt19937_64 g(20261126);
  AttentionDataset ds = float_data(g, 8, 20, 6);
  for (std::size_t c = 0; c < 6; ++c) ds.contexts[7](3, c) = ds.contexts[2](5, c);  // duplicate token
  std::vector<std::vector<double>> rows;
  for (auto& E : ds.contexts)
    for (std::size_t j = 0; j < E.rows(); ++j) {
      rows.emplace_back();
      for (std::size_t c = 0; c < 6; ++c) rows.back().push_back(E(j, c).get_d());
    }
  for (std::size_t t = 0; t < ds.T(); ++t) {
    rows.emplace_back();
    for (std::size_t c = 0; c < 6; ++c) rows.back().push_back(ds.queries(t, c).get_d());
  }
  std::vector<const double*> pts;
  for (auto& r : rows) pts.push_back(r.data());
  Separation a = token_separation(ds), b = token_separation_doubles(pts, 6);
  REQUIRE(a.r2 == b.r2);
  REQUIRE(a.delta2 == b.delta2);
  REQUIRE(b.delta2 > 0);
}

TEST_CASE("assumption3_rows_typed: exact sums on every route", "[mahdavi24][assumptions][typed]") {
  // Each row value against the sum in GMP rationals, on data whose sums are doubles, need 128-bit fixed
  // point (float tokens down to 2^-90, large queries, negative values), or exceed it (2^-200).
  std::mt19937_64 g(20261127);
  std::normal_distribution<float> gauss;
  const std::size_t T = 4, n = 5, d = 3;
  for (double tiny : {0.0, -0x1p-90, 0x1p-60, 0x1p-200, 0x1p60, 0x1p-1070}) {
    std::vector<double> ctx(T * n * d), qry(T * d);
    for (double& x : ctx) x = gauss(g);
    for (double& x : qry) x = gauss(g);
    if (tiny == 0x1p60) {  // partial sums that round although the final sums are doubles: the exact route
      ctx[0] = tiny, ctx[3] = 1, ctx[6] = -tiny;
    } else if (tiny == 0x1p-1070) {  // a query near underflow (the product check declines it)
      qry[4] = tiny;
    } else if (tiny != 0) ctx[7] = tiny, ctx[20] = -tiny * 3, qry[5] = 0x1p20 + 1;
    TypedMatrix r = assumption3_rows_typed(ctx.data(), qry.data(), T, n, d, 2);
    TypedMatrix r1 = assumption3_rows_typed(ctx.data(), qry.data(), T, n, d, 1);  // examples in parallel or not
    REQUIRE(r1.storage == r.storage);
    REQUIRE(typed_matrix_to_qmat(r1) == typed_matrix_to_qmat(r));
    REQUIRE(r.rows == T);
    REQUIRE(r.cols == d);
    if (tiny == 0 || tiny == 0x1p60) REQUIRE(r.storage == Storage::float64);  // the sums fit in 53 bits
    else if (tiny != 0x1p-1070) REQUIRE(r.storage == Storage::rational);
    QMatrix q = typed_matrix_to_qmat(r);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < d; ++c) {
        Rational s = Rational(static_cast<long>(n)) * rational_from_double(qry[t * d + c]);
        for (std::size_t j = 0; j < n; ++j) s += rational_from_double(ctx[(t * n + j) * d + c]);
        INFO("tiny " << tiny << " t " << t << " c " << c);
        REQUIRE(q(t, c) == s);
      }
  }
}

TEST_CASE("token separation: auto, on and off", "[mahdavi24][separation][typed]") {
  // The same exact delta^2 whenever it is computed (auto on a small data set, on), r^2 always, null
  // delta^2 with "computed": false otherwise; the automatic budget decides from the count alone.
  std::mt19937_64 g(20261128);
  AttentionDataset q = float_data(g, 5, 4, 6);
  for (std::size_t c = 0; c < 6; ++c) q.contexts[3](1, c) = q.contexts[1](2, c);  // two equal tokens
  TypedAttentionDataset t = typed_of(q);
  const Separation brute = token_separation(q);
  for (SeparationMode mode : {SeparationMode::automatic, SeparationMode::on, SeparationMode::off}) {
    for (bool typed : {true, false}) {
      nlohmann::json j = typed ? assumptions_report_typed(t, 20'000'000, 1, mode) : assumptions_report(q, 20'000'000, mode);
      const nlohmann::json& s = j["separation"];
      INFO(s.dump());
      REQUIRE(s["r2"] == rational_to_string(brute.r2));
      REQUIRE(s["pairs"] == 25 * 24 / 2);  // T n + T = 25 tokens, the repeated one included
      REQUIRE(s["mode"] == separation_mode_name(mode));
      if (mode == SeparationMode::off) {
        REQUIRE(s["computed"] == false);
        REQUIRE(s["delta2"].is_null());
      } else {
        REQUIRE(s["computed"] == true);
        REQUIRE(s["delta2"] == rational_to_string(brute.delta2));
        REQUIRE(brute.delta2 > 0);  // the equal tokens are one token
      }
    }
  }
  REQUIRE(separation_decide(SeparationMode::automatic, 1000, 768));
  REQUIRE_FALSE(separation_decide(SeparationMode::automatic, 39800, 768));  // 200 ViT-B examples
  REQUIRE(separation_decide(SeparationMode::on, 39800, 768));
  REQUIRE_FALSE(separation_decide(SeparationMode::off, 2, 1));
  SeparationMode m = SeparationMode::on;
  REQUIRE(separation_mode_parse("auto", m));
  REQUIRE(m == SeparationMode::automatic);
  REQUIRE_FALSE(separation_mode_parse("maybe", m));
}

TEST_CASE("float32 contexts kept as float32 give the rational report", "[mahdavi24][assumptions][typed]") {
  // contexts_f32 (the reader's keep_float32 form): Assumption 2 from float32 without widening the data,
  // Assumption 3 sums from floats, r^2 from floats; against the exact rational route, on random data, a
  // rank-deficient context hidden among 50 full-rank ones, a context full rank only through a float32
  // perturbation, and equal tokens.
  std::mt19937_64 g(20261129);
  std::normal_distribution<float> gauss;
  const std::size_t T = 51, n = 3, d = 4;
  std::vector<float> ctx(T * n * d);
  for (float& x : ctx) x = gauss(g);
  for (std::size_t c = 0; c < d; ++c) {
    ctx[(37 * n + 2) * d + c] = 2 * ctx[(37 * n + 0) * d + c];  // rank 2 (doubling is exact in float)
    ctx[(12 * n + 1) * d + c] = ctx[(12 * n + 0) * d + c];                              // full rank only via 2^-20
    ctx[(20 * n + 0) * d + c] = ctx[(5 * n + 2) * d + c];                               // equal tokens
  }
  ctx[(12 * n + 1) * d + 3] += 0x1p-20f;
  TypedAttentionDataset t;
  t.T = T, t.n = n, t.d = d;
  t.contexts_f32 = ctx;
  std::vector<double> qv(T * d);
  for (double& x : qv) x = gauss(g);
  t.queries = typed_matrix_from_f64(T, d, qv);
  const AttentionDataset q = attention_dataset_from_typed(t);
  REQUIRE(q.contexts[37](2, 0) == q.contexts[37](0, 0) * 2);
  for (SeparationMode mode : {SeparationMode::on, SeparationMode::off}) {
    nlohmann::json a = assumptions_report(q, 20'000'000, mode), b = assumptions_report_typed(t, 20'000'000, 2, mode);
    INFO(a.dump() << "\n" << b.dump());
    REQUIRE(a == b);
    REQUIRE(b["assumption2"]["failing"] == nlohmann::json::array({37}));
  }
  // With numpy's numerical ranks: the same exact verdicts (Assumption 2 reuses the proofs of full rank),
  // and the ranks those of numerical_rank (the SVD at this size) on every context and the queries.
  for (std::optional<double> tol : {std::optional<double>{}, std::optional<double>{1e-3}, std::optional<double>{0.0}}) {
    const NumericalRanksOption opt{tol};
    nlohmann::json with = assumptions_report_typed(t, 20'000'000, 2, SeparationMode::off, &opt);
    nlohmann::json without = assumptions_report_typed(t, 20'000'000, 2, SeparationMode::off);
    nlohmann::json below = nlohmann::json::array();
    for (std::size_t i = 0; i < T; ++i)
      if (numerical_rank(typed_dataset_context(t, i), tol).rank < n) below.push_back(i);
    REQUIRE(with["numerical"]["contexts_rank_below_n"] == below);
    REQUIRE(with["numerical"]["queries_rank"] == numerical_rank(t.queries, tol).rank);
    with.erase("numerical");
    REQUIRE(with == without);
    if (!tol) REQUIRE(below.size() >= 1);  // context 37 at least
  }
  // The typed dataset's context accessor widens exactly.
  const TypedMatrix e = typed_dataset_context(t, 12);
  REQUIRE(e.storage == Storage::float64);
  REQUIRE(e.f64[1 * d + 3] == static_cast<double>(ctx[(12 * n + 1) * d + 3]));
}

TEST_CASE("one data set type: the report and Assumption 2 on either storage", "[mahdavi24][assumptions][typed]") {
  // attention_dataset_read(path, {typed}) (what `memcert assumptions` reads) against the rational storage
  // of the same file: the same values, the same report (the rational storage's through the exact GMP
  // routines), and assumption2_check on the typed storage (its filtered route for a prefix, context by
  // context otherwise) agreeing with the exact route and giving a witness y != 0 with y^T E = 0.
  std::mt19937_64 g(20261128);
  AttentionDataset q = float_data(g, 7, 3, 5);
  for (std::size_t c = 0; c < 5; ++c) q.contexts[4](2, c) = q.contexts[4](0, c) + q.contexts[4](1, c) * 2;  // rank 2
  const auto dir = std::filesystem::temp_directory_path() / ("memcert_one_type_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"d.npz", "d.json"}) {
    const std::string path = (dir / name).string();
    attention_dataset_write(path, q);
    AttentionReadOptions typed;
    typed.storage = AttentionReadOptions::Storage::typed;
    typed.keep_float32 = true;
    const AttentionDataset t = attention_dataset_read(path, typed), r = attention_dataset_read(path);
    INFO(path);
    REQUIRE(attention_storage(t) == AttentionStorage::typed);
    REQUIRE(attention_storage(r) == AttentionStorage::rational);
    REQUIRE((t.T() == 7 && t.n() == 3 && t.d() == 5));
    for (std::size_t e = 0; e < 7; ++e) REQUIRE(attention_context(t, e) == q.contexts[e]);
    REQUIRE(t.queries == q.queries);
    const NumericalRanksOption numerical{std::nullopt};
    nlohmann::json a = assumptions_report(r, 20'000'000, 1, SeparationMode::on, &numerical);
    nlohmann::json b = assumptions_report(t, 20'000'000, 1, SeparationMode::on, &numerical);
    INFO(a.dump() << "\n" << b.dump());
    REQUIRE(a == b);
    REQUIRE(b["assumption2"]["failing"] == nlohmann::json::array({4}));
    REQUIRE(b["numerical"]["contexts_rank_below_n"] == nlohmann::json::array({4}));
    typed.rational_queries = false;  // as `memcert assumptions` reads: the queries in the typed storage alone
    REQUIRE(assumptions_report(attention_dataset_read(path, typed), 20'000'000, 1, SeparationMode::on, &numerical) == b);
    nlohmann::json exact = assumptions_report(q, 20'000'000);  // the rational route on the data in memory
    b.erase("numerical");
    REQUIRE(exact == b);
    for (const std::vector<std::size_t>& which : {std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}, {6, 4, 1}}) {
      const Assumption2Result at = assumption2_check(t, which), ar = assumption2_check(q, which);
      REQUIRE_FALSE(at.holds);
      REQUIRE(at.failing == std::vector<std::size_t>{4});
      REQUIRE(at.failing == ar.failing);
      const QMatrix& E = q.contexts[4];
      REQUIRE(at.witness.size() == E.rows());
      bool nonzero = false;
      for (const auto& y : at.witness) nonzero = nonzero || y != 0;
      REQUIRE(nonzero);
      for (std::size_t c = 0; c < E.cols(); ++c) {
        Rational s = 0;
        for (std::size_t i = 0; i < E.rows(); ++i) s += at.witness[i] * E(i, c);
        REQUIRE(s == 0);
      }
    }
  }
  std::filesystem::remove_all(dir);
}
