// Attention and sequence data sets: JSON and .npz readers, JSON writers, shape errors.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/data/typed_dataset.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;
using fixtures::input_error_of;
using fixtures::write_file;

namespace {
// T = 2 examples, n = 2 tokens, d = 3.
const char* kAttention = R"({
  "contexts": [[["1", "0", "0"], ["0", "1/2", "0"]], [[0.1, 0, 1], [2, 2, "-3"]]],
  "queries": [["1", "1", "1"], ["0", "0", "7/3"]],
  "class_labels": [0, 3]})";

QMatrix mat(std::size_t r, std::size_t c, std::initializer_list<long> v) {
  QMatrix m(r, c);
  std::size_t k = 0;
  for (long x : v) m.data()[k++] = x;
  return m;
}
}  // namespace

TEST_CASE("attention data set from JSON", "[dataset]") {
  AttentionDataset ds = attention_dataset_read(write_file("a.json", kAttention));
  REQUIRE(ds.T() == 2);
  CHECK(ds.n() == 2);
  CHECK(ds.d() == 3);
  CHECK(ds.contexts[0](1, 1) == Rational(1, 2));
  CHECK(ds.contexts[1](0, 0) == rational_from_double(0.1));
  CHECK(ds.queries(1, 2) == Rational(7, 3));
  REQUIRE(ds.labels);
  CHECK(ds.class_labels);
  CHECK((*ds.labels)(1, 0) == 3);
}

TEST_CASE("attention data set JSON round trip (class and vector labels)", "[dataset]") {
  AttentionDataset ds = attention_dataset_read(write_file("b.json", kAttention));
  std::string path = (fixtures::scratch() / "b_out.json").string();
  attention_dataset_write_json(path, ds);
  AttentionDataset back = attention_dataset_read(path);
  CHECK(back.contexts == ds.contexts);
  CHECK(back.queries == ds.queries);
  CHECK(back.class_labels);
  CHECK(*back.labels == *ds.labels);
  ds.class_labels = false;
  ds.labels = mat(2, 2, {1, -1, 0, 5});
  attention_dataset_write_json(path, ds);
  back = attention_dataset_read(path);
  CHECK_FALSE(back.class_labels);
  CHECK(*back.labels == mat(2, 2, {1, -1, 0, 5}));
}

TEST_CASE("attention data set from npz (float and integer arrays)", "[dataset]") {
  using fixtures::npy;
  using fixtures::raw_all;
  std::vector<double> c{0.1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // (2, 2, 3)
  std::vector<double> q{1, 2, 3, 4, 5, 6};
  std::vector<std::int64_t> l{1, 0};
  std::string bytes = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                     {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                     {"class_labels.npy", npy("<i8", {2}, raw_all(l))}}, true);
  AttentionDataset ds = attention_dataset_read(write_file("a.npz", bytes));
  REQUIRE(ds.T() == 2);
  CHECK(ds.n() == 2);
  CHECK(ds.contexts[0](0, 0) == rational_from_double(0.1));
  CHECK(ds.contexts[1](1, 2) == 9);
  CHECK(ds.class_labels);
  CHECK((*ds.labels)(0, 0) == 1);

  // Real labels of shape (T,), as numpy writes a regression target: d_out = 1, taken exactly.
  std::vector<double> y{0.1, -2.5};
  ds = attention_dataset_read(write_file("r.npz", fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                                                  {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                                                  {"labels.npy", npy("<f8", {2}, raw_all(y))}})));
  CHECK_FALSE(ds.class_labels);
  REQUIRE(ds.labels->rows() == 2);
  CHECK(ds.labels->cols() == 1);
  CHECK((*ds.labels)(0, 0) == rational_from_double(0.1));
  CHECK((*ds.labels)(1, 0) == Rational(-5, 2));
  std::string both = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                    {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                    {"labels.npy", npy("<f8", {2}, raw_all(y))},
                                    {"class_labels.npy", npy("<i8", {2}, raw_all(l))}});
  CHECK(input_error_of([&] { attention_dataset_read(write_file("both.npz", both)); }) ==
        "both.npz: class_labels: expected either \"labels\" (real) or \"class_labels\" (integer classes), got both");

  std::string wrong = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                     {"queries.npy", npy("<f8", {3, 2}, raw_all(q))}});
  std::string m = input_error_of([&] { attention_dataset_read(write_file("w.npz", wrong)); });
  CHECK(m == "w.npz: queries: expected a non-empty array of shape (T, d) = (2, 3), got (3, 2)");
  std::string flat = fixtures::zip({{"contexts.npy", npy("<f8", {4, 3}, raw_all(c))}});
  m = input_error_of([&] { attention_dataset_read(write_file("f.npz", flat)); });
  CHECK(m == "f.npz: contexts: expected a 3-d array (T, n, d), got shape (4, 3)");
  std::string noq = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))}});
  m = input_error_of([&] { attention_dataset_read(write_file("q.npz", noq)); });
  CHECK(m == "q.npz: expected an array named \"queries\" of shape (T, d); it has 'contexts'");
  // The same message from the typed reader construct uses (contexts already taken out of the archive).
  m = input_error_of([&] { attention_dataset_read_backed(write_file("q.npz", noq)); });
  CHECK(m == "q.npz: expected an array named \"queries\" of shape (T, d); it has 'contexts'");
}

TEST_CASE("one attention data set type: the storage chosen by the reader, the same values", "[dataset]") {
  using fixtures::npy;
  using fixtures::raw_all;
  using S = AttentionReadOptions::Storage;
  // int64 contexts, one of them beyond 2^53 (not a double), next to float64 queries.
  const std::int64_t big = (std::int64_t(1) << 53) + 1;
  std::vector<std::int64_t> c{1, 0, 0, 0, 1, 0, big, 2, 3, 4, 5, 6};  // (2, 2, 3)
  std::vector<double> q{1, 2, 3, 4, 5, 0.1};
  std::vector<std::int64_t> l{1, 0};
  const std::string path = write_file("one.npz", fixtures::zip({{"contexts.npy", npy("<i8", {2, 2, 3}, raw_all(c))},
                                                                {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                                                {"class_labels.npy", npy("<i8", {2}, raw_all(l))}}));
  const AttentionDataset r = attention_dataset_read(path);
  REQUIRE(attention_storage(r) == AttentionStorage::rational);
  REQUIRE(r.contexts[1](0, 0) == Rational(big));
  AttentionReadOptions o;
  for (S s : {S::rational, S::automatic, S::typed}) {
    o.storage = s;
    const AttentionDataset ds = attention_dataset_read(path, o);
    INFO(static_cast<int>(s));
    // automatic keeps rationals here: a context value is not a double.
    REQUIRE(attention_storage(ds) == (s == S::typed ? AttentionStorage::typed : AttentionStorage::rational));
    REQUIRE((ds.T() == 2 && ds.n() == 2 && ds.d() == 3));
    for (std::size_t t = 0; t < 2; ++t) REQUIRE(attention_context(ds, t) == r.contexts[t]);
    REQUIRE(ds.queries == r.queries);
    REQUIRE(ds.class_labels);
    REQUIRE(*ds.labels == *r.labels);
    // A context of the typed storage is handed out as doubles only when every value is one.
    std::vector<double> v;
    if (s == S::typed) {
      REQUIRE_FALSE(ds.typed->labels);  // the labels held once, in ds.labels
      REQUIRE(attention_context_doubles(ds, 0, v));
      REQUIRE(v == std::vector<double>{1, 0, 0, 0, 1, 0});
      REQUIRE_FALSE(attention_context_doubles(ds, 1, v));  // 2^53 + 1 has no double
      AttentionDataset m = ds;
      attention_dataset_materialize(m);
      REQUIRE(attention_storage(m) == AttentionStorage::rational);
      REQUIRE(m.contexts == r.contexts);
    }
  }
  o.storage = S::typed;
  o.with_labels = false;
  REQUIRE_FALSE(attention_dataset_read(path, o).labels);
  // The queries left in the typed storage: no rationals until materialized, then the same ones.
  o.rational_queries = false;
  AttentionDataset lazy = attention_dataset_read(path, o);
  REQUIRE((lazy.queries.rows() == 0 && lazy.T() == 2 && lazy.d() == 3));
  attention_dataset_materialize(lazy);
  REQUIRE(lazy.queries == r.queries);
  REQUIRE(lazy.contexts == r.contexts);
  // Every storage gives the rational reader's message on bad input.
  const std::string noq = write_file("noq.npz", fixtures::zip({{"contexts.npy", npy("<i8", {2, 2, 3}, raw_all(c))}}));
  for (S s : {S::rational, S::automatic, S::typed}) {
    o.storage = s;
    CHECK(input_error_of([&] { attention_dataset_read(noq, o); }) ==
          "noq.npz: expected an array named \"queries\" of shape (T, d); it has 'contexts'");
  }
}

TEST_CASE("integer-dtype labels are real labels, flagged for a note; labels can be left unread", "[dataset]") {
  using fixtures::npy;
  using fixtures::raw_all;
  const std::vector<double> c{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0}, q{1, 2, 0, 0, 1, 3};
  auto npy_i8 = [](std::vector<std::size_t> shape, const std::vector<std::int64_t>& v) {
    return npy("<i8", shape, raw_all(v));
  };
  std::string ints = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                    {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                    {"labels.npy", npy_i8({2}, {3, 1})}});
  const std::string path = write_file("ints.npz", ints);
  for (const AttentionDataset& ds : {attention_dataset_read(path), attention_dataset_read_backed(path)}) {
    REQUIRE(ds.labels);
    CHECK(!ds.class_labels);
    CHECK(ds.labels_integer_dtype);
    CHECK((*ds.labels)(0, 0) == Rational(3));
    CHECK((*ds.labels)(1, 0) == Rational(1));
  }
  TypedAttentionDataset ty = attention_dataset_read_typed(path, true);
  CHECK(ty.labels_integer_dtype);
  CHECK(!ty.class_labels);
  // Labels of the wrong length stop a reader that uses them, never one that does not read them.
  std::string bad = fixtures::zip({{"contexts.npy", npy("<f8", {2, 2, 3}, raw_all(c))},
                                   {"queries.npy", npy("<f8", {2, 3}, raw_all(q))},
                                   {"labels.npy", npy_i8({3}, {3, 1, 2})}});
  const std::string bad_path = write_file("bad.npz", bad);
  CHECK(!input_error_of([&] { attention_dataset_read_typed(bad_path, true); }).empty());
  TypedAttentionDataset unlabelled = attention_dataset_read_typed(bad_path, true, /*with_labels=*/false);
  CHECK(unlabelled.T == 2);
  CHECK(!unlabelled.labels);
}

TEST_CASE("flat labels [T] are real labels with d_out = 1", "[dataset]") {
  AttentionDataset ds = attention_dataset_read(
      write_file("real.json", R"({"contexts": [[[1,2,3]], [[0,1,0]]], "queries": [[1,2,3], [0,0,1]], "labels": [0.25, "-7/3"]})"));
  CHECK_FALSE(ds.class_labels);
  REQUIRE(ds.labels);
  CHECK(ds.labels->rows() == 2);
  CHECK(ds.labels->cols() == 1);
  CHECK((*ds.labels)(0, 0) == Rational(1, 4));
  CHECK((*ds.labels)(1, 0) == Rational(-7, 3));
  // Written back as a T x 1 matrix of exact strings and read to the same numbers.
  std::string path = (fixtures::scratch() / "real_out.json").string();
  attention_dataset_write_json(path, ds);
  AttentionDataset back = attention_dataset_read(path);
  CHECK_FALSE(back.class_labels);
  CHECK(*back.labels == *ds.labels);
  std::string m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]], [[1,1,1]]], "queries": [[1,2,3], [1,1,1]], "labels": [1, [2]]})"));
  });
  CHECK(m == "data.json: labels[1]: expected a number (as labels[0]), got a list");
}

TEST_CASE("attention data set JSON errors name the position", "[dataset][errors]") {
  std::string m = input_error_of([] {
    attention_dataset_read(write_file("data.json",
        R"({"contexts": [[[1,2,3],[4,5,6]], [[1,2,3],[4,5]]], "queries": [[1,2,3],[1,2,3]]})"));
  });
  CHECK(m == "data.json: contexts[1][1]: expected 3 numbers (d = 3), got 2");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json",
        R"({"contexts": [[[1,2,3],[4,5,6]], [[1,2,3]]], "queries": [[1,2,3],[1,2,3]]})"));
  });
  CHECK(m == "data.json: contexts[1]: expected 2 tokens (n = 2), got 1");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]]], "queries": [[1,2,3],[1,2,3]]})"));
  });
  CHECK(m == "data.json: queries: expected 1 queries (T = 1), got 2");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]]], "queries": [[1,2]]})"));
  });
  CHECK(m == "data.json: queries[0]: expected 3 numbers (d = 3), got 2");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]]], "queries": [[1,2,3]], "class_labels": ["1/2"]})"));
  });
  CHECK(m == "data.json: class_labels[0]: expected a non-negative integer class label, got 1/2");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]]], "queries": [[1,2,3]], "labels": [1], "class_labels": [0]})"));
  });
  CHECK(m == "data.json: class_labels: expected either \"labels\" (real) or \"class_labels\" (integer classes), got both");
  m = input_error_of([] {
    attention_dataset_read(write_file("data.json", R"({"contexts": [[[1,2,3]]], "queries": [[1,2,3]], "labels": [1, 2]})"));
  });
  CHECK(m == "data.json: labels: expected 1 labels (T = 1), got 2");
  m = input_error_of([] { attention_dataset_read(write_file("data.json", R"({"queries": [[1]]})")); });
  CHECK(m == "data.json: expected a key \"contexts\"");
  m = input_error_of([] { attention_dataset_read(write_file("data.json", R"({"contexts": [], "queries": []})")); });
  CHECK(m == "data.json: contexts: expected a non-empty list of contexts, got []");
  m = input_error_of([] { attention_dataset_read(write_file("data.json", R"({"contexts": [[[1, "x"]]], "queries": [[1, 2]]})")); });
  CHECK(m == "data.json: contexts[0][0][1]: expected an exact number, got a string of 1 byte that is not one");
  m = input_error_of([] { attention_dataset_read(write_file("data.json", R"({"contexts": [[1, 2]], "queries": [[1, 2]]})")); });
  CHECK(m == "data.json: contexts[0][0]: expected a list of numbers, got a number");
}

TEST_CASE("sequence data sets: next-token and per-token labels", "[dataset]") {
  SequenceDataset ds = sequence_dataset_read(write_file("s.json",
      R"({"sequences": [[[1, 0], [0, 1], ["1/2", "1/2"]], [[0, 0], [1, 1], [2, 2]]], "labels": [2, 0]})"));
  REQUIRE(ds.N() == 2);
  CHECK(ds.n() == 3);
  CHECK(ds.d() == 2);
  CHECK(ds.sequences[0](2, 0) == Rational(1, 2));
  CHECK(ds.labels == std::vector<long>{2, 0});
  CHECK(ds.token_labels.empty());

  std::string path = (fixtures::scratch() / "s_out.json").string();
  sequence_dataset_write_json(path, ds);
  SequenceDataset back = sequence_dataset_read(path);
  CHECK(back.sequences == ds.sequences);
  CHECK(back.labels == ds.labels);

  ds.labels.clear();
  ds.token_labels = {{0, 1, 2}, {2, 1, 0}};
  sequence_dataset_write_json(path, ds);
  back = sequence_dataset_read(path);
  CHECK(back.labels.empty());
  CHECK(back.token_labels == ds.token_labels);

  std::string m = input_error_of([] {
    sequence_dataset_read(write_file("s.json", R"({"sequences": [[[1, 0]], [[0, 1]]], "labels": [1, -1]})"));
  });
  CHECK(m == "s.json: labels[1]: expected a non-negative integer class label, got -1");
  m = input_error_of([] {
    sequence_dataset_read(write_file("s.json", R"({"sequences": [[[1, 0], [1, 1]]], "labels": [[1, 2, 3]]})"));
  });
  CHECK(m == "s.json: labels[0]: expected 2 labels (n = 2), got 3");
}

TEST_CASE("sequence data set from npz", "[dataset]") {
  using fixtures::npy;
  using fixtures::raw_all;
  std::vector<std::int32_t> s{1, 0, 0, 1, 1, 1, 2, 2};  // (2, 2, 2)
  std::vector<double> l{1, 0};
  SequenceDataset ds = sequence_dataset_read(write_file("s.npz", fixtures::zip(
      {{"sequences.npy", npy("<i4", {2, 2, 2}, raw_all(s))}, {"labels.npy", npy("<f8", {2}, raw_all(l))}})));
  CHECK(ds.N() == 2);
  CHECK(ds.sequences[1](1, 0) == 2);
  CHECK(ds.labels == std::vector<long>{1, 0});
  std::vector<double> bad{1.5, 0};
  std::string m = input_error_of([&] {
    sequence_dataset_read(write_file("b.npz", fixtures::zip(
        {{"sequences.npy", npy("<i4", {2, 2, 2}, raw_all(s))}, {"labels.npy", npy("<f8", {2}, raw_all(bad))}})));
  });
  CHECK(m == "b.npz: labels[0]: expected a non-negative integer class label, got 3/2");
}

TEST_CASE("sequence per-token labels given twice are rejected", "[dataset][errors]") {
  std::string m = input_error_of([] {
    sequence_dataset_read(write_file("twice.json",
        R"({"sequences": [[[1], [2]]], "labels": [[0, 1]], "token_labels": [[1, 0]]})"));
  });
  CHECK(m.find("twice.json: token_labels: expected per-token labels only once") == 0);
}

TEST_CASE("float64 npz writers round-trip exactly-representable data and refuse to round", "[dataset]") {
  AttentionDataset ds = attention_dataset_read(write_file("c.json", kAttention));
  // kAttention holds 1/2, 0.1 (a double) and 7/3 (not a double).
  std::string path = (fixtures::scratch() / "c.npz").string();
  CHECK_THROWS_AS(attention_dataset_write_npz(path, ds), std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(path));
  ds.queries(1, 2) = Rational(7, 4);
  attention_dataset_write_npz(path, ds);
  AttentionDataset back = attention_dataset_read(path);
  CHECK(back.contexts == ds.contexts);
  CHECK(back.queries == ds.queries);
  CHECK(back.class_labels);
  CHECK(*back.labels == *ds.labels);

  SequenceDataset s;
  s.sequences = {mat(2, 1, {1, 2}), mat(2, 1, {3, -4})};
  s.labels = {1, 0};
  s.token_labels = {{0, 1}, {1, 1}};
  std::string spath = (fixtures::scratch() / "s.npz").string();
  sequence_dataset_write_npz(spath, s);
  SequenceDataset sback = sequence_dataset_read(spath);
  CHECK(sback.sequences == s.sequences);
  CHECK(sback.labels == s.labels);
  CHECK(sback.token_labels == s.token_labels);
}

namespace {
// Integers as .npy data of dtype `descr` ("|u1", "<i2", ">i4", "<u8", ...): each value's two's-complement
// bytes, little- or big-endian.
std::string int_data(const std::string& descr, const std::vector<long long>& values) {
  const std::size_t width = static_cast<std::size_t>(descr[2] - '0');
  std::string out;
  for (long long v : values) {
    std::string b;
    for (std::size_t k = 0; k < width; ++k) b += static_cast<char>((static_cast<unsigned long long>(v) >> (8 * k)) & 0xff);
    if (descr[0] == '>') std::reverse(b.begin(), b.end());
    out += b;
  }
  return out;
}

// N = 3 sequences of n = 2 tokens in R^2, over a table of V = 5 rows: row 3 repeats row 0, row 4 is row 1
// with -0.0 for 0.0, row 2 is never used. The same data set spelled out ("sequences").
const std::vector<double> kEmbedding{1, 0.5, -0.0, 2, 7, 7, 1, 0.5, 0.0, 2};
const std::vector<long long> kIds{3, 1, 4, 0, 0, 4};
const std::vector<double> kSpelled{1, 0.5, -0.0, 2, 0.0, 2, 1, 0.5, 1, 0.5, 0.0, 2};
const std::vector<std::int64_t> kSeqLabels{2, 0, 1};

std::string compact_npz(const std::string& ids_descr, const std::vector<long long>& ids,
                        std::vector<std::pair<std::string, std::string>> extra = {}, bool deflated = false) {
  using fixtures::npy;
  std::vector<std::pair<std::string, std::string>> m{
      {"token_ids.npy", npy(ids_descr, {3, 2}, int_data(ids_descr, ids))},
      {"embedding.npy", npy("<f8", {5, 2}, fixtures::raw_all(kEmbedding))}};
  for (auto& e : extra) m.push_back(std::move(e));
  return fixtures::zip(m, deflated);
}
}  // namespace

TEST_CASE("compact ks25 layout: token_ids + embedding read as the same sequences", "[dataset][ks]") {
  using fixtures::npy;
  using fixtures::raw_all;
  const std::string labels = npy("<i8", {3}, raw_all(kSeqLabels));
  const std::string spelled = write_file("spelled.npz", fixtures::zip({{"sequences.npy", npy("<f8", {3, 2, 2}, raw_all(kSpelled))},
                                                                        {"labels.npy", labels}}));
  const TokenSequenceDataset want = sequence_dataset_read_tokens(spelled);
  // Independently: the distinct vectors in order of first use, (1, 1/2) then (0, 2).
  REQUIRE(want.tokens.size() == 2);
  CHECK(want.tokens[0] == QVector{Rational(1), Rational(1, 2)});
  CHECK(want.tokens[1] == QVector{Rational(0), Rational(2)});
  CHECK(want.ids == std::vector<std::uint32_t>{0, 1, 1, 0, 0, 1});
  const SequenceDataset want_seq = sequence_dataset_read(spelled);
  for (const char* descr : {"|u1", "|i1", "<u2", "<i2", "<i4", "<u4", "<i8", "<u8", ">i4", ">u2"}) {
    for (const bool deflated : {false, true}) {
      INFO(descr << (deflated ? " deflated" : " stored"));
      const std::string path = write_file("compact.npz", compact_npz(descr, kIds, {{"labels.npy", labels}}, deflated));
      const TokenSequenceDataset got = sequence_dataset_read_tokens(path);
      CHECK(got.N == 3);
      CHECK(got.n == 2);
      CHECK(got.d == 2);
      CHECK(got.tokens == want.tokens);
      CHECK(got.ids == want.ids);
      CHECK(got.labels == want.labels);
      CHECK(got.token_labels.empty());
      const SequenceDataset seq = sequence_dataset_read(path);  // the rational reader: the same sequences
      CHECK(seq.sequences == want_seq.sequences);
      CHECK(seq.labels == want_seq.labels);
    }
  }
  // An integer embedding, float labels and per-token labels: the values, not the dtypes, make the data set.
  const std::vector<std::int64_t> int_emb{4, -1, 0, 3, 4, -1};
  const std::vector<double> token_labels{0, 1, 2, 2, 1, 0};
  const std::string ids = npy("<i4", {3, 2}, int_data("<i4", {2, 1, 0, 0, 1, 2}));
  const TokenSequenceDataset a = sequence_dataset_read_tokens(write_file("ie.npz", fixtures::zip(
      {{"token_ids.npy", ids}, {"embedding.npy", npy("<i8", {3, 2}, raw_all(int_emb))},
       {"labels.npy", npy("<f8", {3, 2}, raw_all(token_labels))}})));
  const std::vector<double> spelled_i{4, -1, 0, 3, 4, -1, 4, -1, 0, 3, 4, -1};
  const TokenSequenceDataset b = sequence_dataset_read_tokens(write_file("is.npz", fixtures::zip(
      {{"sequences.npy", npy("<f8", {3, 2, 2}, raw_all(spelled_i))},
       {"labels.npy", npy("<f8", {3, 2}, raw_all(token_labels))}})));
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens.size() == 2);
  CHECK(a.ids == b.ids);
  CHECK(a.ids == std::vector<std::uint32_t>{0, 1, 0, 0, 1, 0});
  CHECK(a.labels.empty());
  CHECK(a.token_labels == b.token_labels);
  CHECK(a.token_labels == std::vector<std::vector<long>>{{0, 1}, {2, 2}, {1, 0}});
}

TEST_CASE("compact ks25 layout: members not used are skipped unread, headers screened first", "[dataset][ks][errors]") {
  using fixtures::npy;
  using fixtures::raw_all;
  // A member that is not a .npy at all: never read (the data set does not use it).
  const std::string labels = npy("<i8", {3}, raw_all(kSeqLabels));
  for (const bool compact : {true, false}) {
    const std::string path = write_file(
        "junk.npz", compact ? compact_npz("<u2", kIds, {{"labels.npy", labels}, {"notes.npy", "not an array"}})
                            : fixtures::zip({{"sequences.npy", npy("<f8", {3, 2, 2}, raw_all(kSpelled))},
                                             {"labels.npy", labels},
                                             {"notes.npy", "not an array"}}));
    CHECK(sequence_dataset_read_tokens(path).ids == std::vector<std::uint32_t>{0, 1, 1, 0, 0, 1});
    CHECK(sequence_dataset_read(path).labels == std::vector<long>{2, 0, 1});
  }
  // Labels of the wrong length beside a token_ids member whose values are corrupt (CRC): the shapes are
  // screened from the headers before any values are read, so the shape is what is reported.
  std::string bytes = compact_npz("<u2", kIds, {{"labels.npy", npy("<i8", {4}, raw_all(std::vector<std::int64_t>{0, 0, 0, 0}))}});
  const std::string ids_npy = npy("<u2", {3, 2}, int_data("<u2", kIds));
  const std::size_t at = bytes.find(ids_npy) + ids_npy.size() - 1;  // token_ids' last value byte
  REQUIRE(at < bytes.size());
  bytes[at] = static_cast<char>(bytes[at] ^ 0x40);
  std::string m = input_error_of([&] { sequence_dataset_read_tokens(write_file("crc.npz", bytes)); });
  CHECK(m == "crc.npz: labels: expected a non-empty array of shape (N,) = (3,), got (4,)");
}

TEST_CASE("compact ks25 layout: hostile files are one-line bad input", "[dataset][ks][errors]") {
  using fixtures::npy;
  using fixtures::raw_all;
  auto err = [](const std::string& bytes) {
    const std::string path = write_file("ids.npz", bytes);
    const std::string a = input_error_of([&] { sequence_dataset_read_tokens(path); });
    const std::string b = input_error_of([&] { sequence_dataset_read(path); });
    CHECK(a == b);  // both readers, the same message
    return a;
  };
  const std::string range = "expected a token index in [0, 5) (V = 5 rows of \"embedding\"), got ";
  CHECK(err(compact_npz("<u2", {3, 1, 4, 0, 0, 5})) == "ids.npz: token_ids[2][1]: " + range + "5");
  CHECK(err(compact_npz("|i1", {3, 1, -1, 0, 0, 4})) == "ids.npz: token_ids[1][0]: " + range + "-1");
  CHECK(err(compact_npz("<i8", {3, 1, 4, 0, (1LL << 40), 4})) == "ids.npz: token_ids[2][0]: " + range + "1099511627776");
  CHECK(err(compact_npz("<u8", {3, 1, 4, 0, 0, -1})) == "ids.npz: token_ids[2][1]: " + range + "18446744073709551615");
  // Float or bool indices: refused from the header, whatever the values.
  const std::string emb = npy("<f8", {5, 2}, raw_all(kEmbedding));
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<f8", {3, 2}, raw_all(std::vector<double>{0, 1, 0, 1, 0, 1}))}, {"embedding.npy", emb}})) ==
        "ids.npz: token_ids: expected token indices of an integer dtype (int8 to int64, uint8 to uint64), got float64");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<f4", {3, 2}, raw_all(std::vector<float>{0, 1, 0, 1, 0, 1}))}, {"embedding.npy", emb}})) ==
        "ids.npz: token_ids: expected token indices of an integer dtype (int8 to int64, uint8 to uint64), got float32");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("|b1", {3, 2}, std::string(6, '\1'))}, {"embedding.npy", emb}})) ==
        "ids.npz: token_ids: expected token indices of an integer dtype (int8 to int64, uint8 to uint64), got bool");
  // Shapes.
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<u2", {6}, int_data("<u2", kIds))}, {"embedding.npy", emb}})) ==
        "ids.npz: token_ids: expected a 2-d array (N, n), got shape (6,)");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<u2", {3, 2}, int_data("<u2", kIds))},
                           {"embedding.npy", npy("<f8", {5, 2, 1}, raw_all(kEmbedding))}})) ==
        "ids.npz: embedding: expected a 2-d array (V, d), got shape (5, 2, 1)");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<u2", {3, 2}, int_data("<u2", kIds))}, {"embedding.npy", npy("<f8", {0, 2}, "")}})) ==
        "ids.npz: embedding: expected a non-empty array of shape (V, d) = (*, *), got (0, 2)");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<u2", {3, 0}, "")}, {"embedding.npy", emb}})) ==
        "ids.npz: token_ids: expected a non-empty array of shape (N, n) = (*, *), got (3, 0)");
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", npy("<i8", {2}, raw_all(std::vector<std::int64_t>{0, 1}))}})) ==
        "ids.npz: labels: expected a non-empty array of shape (N,) = (3,), got (2,)");
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", npy("<i8", {3, 3}, raw_all(std::vector<std::int64_t>(9, 0)))}})) ==
        "ids.npz: labels: expected a non-empty array of shape (N, n) = (3, 2), got (3, 3)");
  CHECK(err(compact_npz("<u2", kIds, {{"token_labels.npy", npy("<i8", {3}, raw_all(kSeqLabels))}})) ==
        "ids.npz: token_labels: expected a 2-d array (N, n), got shape (3,)");
  // Labels: non-negative integers, as in the other layout.
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", npy("<i8", {3}, raw_all(std::vector<std::int64_t>{0, -4, 1}))}})) ==
        "ids.npz: labels[1]: expected a non-negative integer class label, got -4");
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", npy("<f8", {3}, raw_all(std::vector<double>{0, 1, 1.5}))}})) ==
        "ids.npz: labels[2]: expected a non-negative integer class label, got 3/2");
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", npy("<f8", {3}, raw_all(std::vector<double>{0, 9.3e18, 1}))}})) ==
        "ids.npz: labels[1]: expected a non-negative integer class label, got 9300000000000000000");
  // Per-token labels twice.
  const std::string two = npy("<i8", {3, 2}, raw_all(std::vector<std::int64_t>(6, 1)));
  CHECK(err(compact_npz("<u2", kIds, {{"labels.npy", two}, {"token_labels.npy", two}})) ==
        "ids.npz: token_labels: expected per-token labels only once, got them in \"labels\" and \"token_labels\"");
  // Both layouts; a missing embedding; neither.
  CHECK(err(compact_npz("<u2", kIds, {{"sequences.npy", npy("<f8", {3, 2, 2}, raw_all(kSpelled))}})) ==
        "ids.npz: token_ids: expected either \"sequences\" (N, n, d) or \"token_ids\" (N, n) with \"embedding\" (V, d), got both");
  CHECK(err(fixtures::zip({{"token_ids.npy", npy("<u2", {3, 2}, int_data("<u2", kIds))},
                           {"labels.npy", npy("<i8", {3}, raw_all(kSeqLabels))}})) ==
        "ids.npz: expected an array named \"embedding\" of shape (V, d) with \"token_ids\"; it has 'labels', 'token_ids'");
  CHECK(err(fixtures::zip({{"embedding.npy", emb}})) ==
        "ids.npz: expected an array named \"sequences\" of shape (N, n, d), or \"token_ids\" of shape (N, n) with "
        "\"embedding\" of shape (V, d); it has 'embedding'");
}

TEST_CASE("compact ks25 layout: written and read back; the index dtype follows the table's size", "[dataset][ks]") {
  TokenSequenceDataset ds;
  ds.N = 3, ds.n = 2, ds.d = 2;
  ds.tokens = {{Rational(1), Rational(1, 2)}, {Rational(0), Rational(-3, 4)}, {Rational(5), Rational(5)}};
  ds.ids = {0, 1, 2, 0, 1, 1};
  ds.labels = {2, 0, 7};
  const std::string a = (fixtures::scratch() / "w_ids.npz").string(), b = (fixtures::scratch() / "w_seq.npz").string();
  sequence_dataset_write_token_ids(a, ds);
  sequence_dataset_write_tokens(b, ds);
  const TokenSequenceDataset ra = sequence_dataset_read_tokens(a), rb = sequence_dataset_read_tokens(b);
  CHECK(ra.tokens == ds.tokens);
  CHECK(ra.ids == ds.ids);
  CHECK(ra.labels == ds.labels);
  CHECK(rb.tokens == ra.tokens);
  CHECK(rb.ids == ra.ids);
  auto dtypes = [](const std::string& path) {
    std::map<std::string, std::string> out;
    for (const NpzMemberHeader& h : npz_read_headers(path)) {
      std::string dtype = std::to_string(h.itemsize);
      dtype.insert(dtype.begin(), h.kind);
      out[h.key] = dtype;
    }
    return out;
  };
  CHECK(dtypes(a) == std::map<std::string, std::string>{{"embedding", "f8"}, {"labels", "i8"}, {"token_ids", "u2"}});
  // Per-token labels go to "labels" (N, n) alone, to "token_labels" beside sequence labels.
  ds.token_labels = {{0, 1}, {1, 1}, {2, 0}};
  sequence_dataset_write_token_ids(a, ds);
  CHECK(sequence_dataset_read_tokens(a).token_labels == ds.token_labels);
  CHECK(dtypes(a).count("token_labels") == 1);
  ds.labels.clear();
  sequence_dataset_write_token_ids(a, ds);
  CHECK(sequence_dataset_read_tokens(a).token_labels == ds.token_labels);
  CHECK(dtypes(a).count("token_labels") == 0);
  // 65,537 tokens: int32 indices.
  TokenSequenceDataset big;
  big.N = 65537, big.n = 1, big.d = 1;
  for (std::uint32_t t = 0; t < 65537; ++t) {
    big.tokens.push_back({Rational(static_cast<long>(t))});
    big.ids.push_back(65536 - t);
  }
  sequence_dataset_write_token_ids(a, big);
  CHECK(dtypes(a).at("token_ids") == "i4");
  const TokenSequenceDataset rbig = sequence_dataset_read_tokens(a);
  REQUIRE(rbig.tokens.size() == 65537);
  CHECK(rbig.tokens[0][0] == 65536);  // first use: row 65536 of the table
  CHECK(rbig.ids[65536] == 65536);
  // Not a .npz: bad input before anything is written; a token that is not a double: nothing written.
  const std::string j = (fixtures::scratch() / "w_ids.json").string();
  CHECK(input_error_of([&] { sequence_dataset_write_token_ids(j, ds); }).find("w_ids.json: expected a file name ending in .npz") == 0);
  CHECK_FALSE(std::filesystem::exists(j));
  ds.tokens[1][1] = Rational(1, 3);
  const std::string c = (fixtures::scratch() / "w_third.npz").string();
  CHECK_THROWS_AS(sequence_dataset_write_token_ids(c, ds), std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(c));
}

TEST_CASE("compact ks25 layout: read without the (N, n, d) array", "[dataset][ks]") {
  // N = 60,000 sequences of n = 16 tokens in R^64 over V = 8 rows: spelled out, 491 MB of float64; the
  // compact file holds 1.9 MB of indices.
  const std::size_t N = 60000, n = 16, d = 64, V = 8;
  std::vector<double> emb(V * d);
  for (std::size_t k = 0; k < emb.size(); ++k) emb[k] = double(k % 13) / 4;
  std::vector<long long> ids(N * n);
  for (std::size_t r = 0; r < ids.size(); ++r) ids[r] = static_cast<long long>((r * 7 + r / 5) % V);
  const std::string path = write_file("large.npz", fixtures::zip(
      {{"token_ids.npy", fixtures::npy("<u2", {N, n}, int_data("<u2", ids))},
       {"embedding.npy", fixtures::npy("<f8", {V, d}, fixtures::raw_all(emb))}}));
  ids = {};
  const long before = fixtures::peak_rss_kb();
  const TokenSequenceDataset t = sequence_dataset_read_tokens(path);
  const long after = fixtures::peak_rss_kb();
  CHECK(t.N == N);
  CHECK(t.tokens.size() == V);
  if (before > 0 && after > 0) CHECK(after - before < 100 * 1024);  // far below the 491 MB spelled out
}
