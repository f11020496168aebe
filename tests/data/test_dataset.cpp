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
