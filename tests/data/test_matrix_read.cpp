// matrix_read for .txt / .json / .npy / .npz, exact JSON numbers, and their one-line errors.
#include <nlohmann/json.hpp>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;
using fixtures::input_error_of;
using fixtures::write_file;

TEST_CASE("txt matrices: exact numbers, comments, CRLF", "[txt]") {
  QMatrix a = matrix_read(write_file("a.txt", "# header\n1 -7/12  0.125\r\n\n1e-3\t+4 -2.5E+4\n"));
  REQUIRE(a.rows() == 2);
  REQUIRE(a.cols() == 3);
  CHECK(a(0, 1) == Rational(-7, 12));
  CHECK(a(0, 2) == Rational(1, 8));
  CHECK(a(1, 0) == Rational(1, 1000));  // exact, not the double 0.001
  CHECK(a(1, 2) == -25000);
}

TEST_CASE("txt round trip through matrix_write_txt", "[txt]") {
  QMatrix a(2, 2);
  a(0, 0) = Rational(1, 3);
  a(0, 1) = Rational(-22, 7);
  a(1, 0) = rational_from_double(0.1);
  a(1, 1) = 0;
  std::string path = (fixtures::scratch() / "w.txt").string();
  matrix_write_txt(path, a);
  CHECK(matrix_read(path) == a);
}

TEST_CASE("txt bad input", "[txt][errors]") {
  std::string m = input_error_of([] { matrix_read(write_file("m.txt", "1 2 3\n4 5 6\n7 8 9\n1 abc 3\n")); });
  CHECK(m == "m.txt: line 4, column 2: expected an exact number, got a token of 3 bytes that is not one");
  m = input_error_of([] { matrix_read(write_file("r.txt", "1 2 3\n\n4 5\n")); });
  CHECK(m == "r.txt: line 3: expected 3 numbers (as in line 1), got 2");
  m = input_error_of([] { matrix_read(write_file("e.txt", "")); });
  CHECK(m == "e.txt: expected rows of numbers, got an empty file");
  m = input_error_of([] { matrix_read(write_file("w.txt", "  \n# only a comment\n")); });
  CHECK(m == "w.txt: expected rows of numbers, got no numbers");
  m = input_error_of([] { matrix_read(write_file("n.txt", "1 nan\n")); });
  CHECK(m == "n.txt: line 1, column 2: expected an exact number, got a token of 3 bytes that is not one");
  m = input_error_of([] { matrix_read(write_file("z.txt", "1/0\n")); });
  CHECK(m == "z.txt: line 1, column 1: expected an exact number, got a token of 3 bytes that is not one");
}

TEST_CASE("json matrices: strings exact, numbers as their double", "[json]") {
  QMatrix a = matrix_read(write_file("a.json", R"({"rows": 2, "cols": 2, "data": [["1/3", 0.1], [-4, "1e-3"]]})"));
  CHECK(a(0, 0) == Rational(1, 3));
  CHECK(a(0, 1) == rational_from_double(0.1));
  CHECK(a(0, 1) != Rational(1, 10));
  CHECK(a(1, 0) == -4);
  CHECK(a(1, 1) == Rational(1, 1000));
  CHECK(json_to_rational(nlohmann::json(18446744073709551615ULL), "f", "x") == Rational(Integer("18446744073709551615")));
  CHECK(json_to_rational(nlohmann::json(std::int64_t(-9223372036854775807LL - 1)), "f", "x") ==
        Rational(Integer("-9223372036854775808")));
}

TEST_CASE("json matrix writer/reader round trip", "[json]") {
  QMatrix a(1, 3);
  a(0, 0) = Rational(-7, 12);
  a(0, 1) = rational_from_double(1e-300);
  a(0, 2) = Rational(Integer("123456789012345678901234567890"));
  nlohmann::json j = qmat_to_json_matrix(a);
  CHECK(j["rows"] == 1);
  CHECK(j["data"][0][0] == "-7/12");
  CHECK(json_matrix_to_qmat(nlohmann::json::parse(j.dump()), "f", "") == a);
}

TEST_CASE("json bad input", "[json][errors]") {
  std::string m = input_error_of([] { matrix_read(write_file("r.json", R"({"rows":2,"cols":2,"data":[[1,2],[3]]})")); });
  CHECK(m == "r.json: data[1]: expected 2 numbers (as in data[0]), got 1");
  m = input_error_of([] { matrix_read(write_file("s.json", R"({"rows":1,"cols":2,"data":[[1,"abc"]]})")); });
  CHECK(m == "s.json: data[0][1]: expected an exact number, got a string of 3 bytes that is not one");
  m = input_error_of([] { matrix_read(write_file("c.json", R"({"rows":3,"cols":2,"data":[[1,2],[3,4]]})")); });
  CHECK(m == "c.json: data: expected 3 rows (\"rows\": 3), got 2");
  m = input_error_of([] { matrix_read(write_file("k.json", R"({"rows":1,"data":[[1]]})")); });
  CHECK(m.find("k.json: expected a matrix") == 0);
  CHECK(m.find("\"cols\"") != std::string::npos);
  m = input_error_of([] { matrix_read(write_file("t.json", R"({"rows":1,"cols":1,"data":[[true]]})")); });
  CHECK(m == "t.json: data[0][0]: expected a number or an exact-number string, got a boolean");
  m = input_error_of([] { matrix_read(write_file("p.json", "{\"rows\": 1,\n \"cols\": oops}")); });
  CHECK(m.find("p.json: line 2, column ") == 0);
  CHECK(m.find("expected valid JSON") != std::string::npos);
  m = input_error_of([] { matrix_read(write_file("e.json", "\n")); });
  CHECK(m == "e.json: expected JSON, got an empty file");
  m = input_error_of([] { matrix_read(write_file("z.json", R"({"rows":0,"cols":0,"data":[]})")); });
  CHECK(m == "z.json: expected a non-empty matrix, got 0 x 0");
  // A NUL byte: JSON readers that stop there would take the text before it for the whole file.
  m = input_error_of([] {
    matrix_read(write_file("n.json", std::string("{\"rows\":1,\"cols\":1,\"data\":[[1]]}\0{\"x\":-1+2}", 42)));
  });
  CHECK(m == "n.json: byte 32: expected JSON text, got a NUL byte");
}

TEST_CASE("npy and npz matrices; wrong ndim and unknown extensions", "[npy][errors]") {
  std::vector<std::int64_t> v{1, 2, 3, 4, 5, 6};
  QMatrix a = matrix_read(write_file("m.npy", fixtures::npy("<i8", {2, 3}, fixtures::raw_all(v))));
  CHECK(a.rows() == 2);
  CHECK(a(1, 2) == 6);
  QMatrix b = matrix_read(write_file("m.npz", fixtures::zip({{"arr_0.npy", fixtures::npy("<i8", {3, 2}, fixtures::raw_all(v))}})));
  CHECK(b(2, 1) == 6);
  std::string m = input_error_of([&] { matrix_read(write_file("v.npy", fixtures::npy("<i8", {6}, fixtures::raw_all(v)))); });
  CHECK(m == "v.npy: shape: expected a 2-d array (a matrix), got shape (6,)");
  m = input_error_of([] { matrix_read(write_file("m.csv", "1,2\n")); });
  CHECK(m.find("m.csv: expected a matrix file ending in") == 0);
  m = input_error_of([] { matrix_read((fixtures::scratch() / "nope.txt").string()); });
  CHECK(m.find("nope.txt: expected a readable file, got ") != std::string::npos);
  m = input_error_of([] { matrix_read(fixtures::scratch().string() + "/.txt"); });
  CHECK(m.find("expected a readable file") != std::string::npos);
}

TEST_CASE("json integer literals beyond 64 bits are refused, not rounded", "[json][errors]") {
  QMatrix a = matrix_read(write_file("i.json",
      R"({"rows":1,"cols":4,"data":[[18446744073709551615, -9223372036854775808, "123456789012345678901234567890", 1e30]]})"));
  CHECK(a(0, 0) == Rational(Integer("18446744073709551615")));
  CHECK(a(0, 1) == Rational(Integer("-9223372036854775808")));
  CHECK(a(0, 2) == Rational(Integer("123456789012345678901234567890")));
  CHECK(a(0, 3) == rational_from_double(1e30));  // a float literal: the double it parses to
  std::string m = input_error_of([] {
    matrix_read(write_file("big.json", "{\"rows\":1,\"cols\":2,\n\"data\":[[1, 18446744073709551616]]}"));
  });
  CHECK(m == "big.json: line 2, column 13: expected an integer within 64 bits (write larger ones as strings, e.g. "
             "\"123\"), got one of 20 digits");
  m = input_error_of([] { matrix_read(write_file("neg.json", R"({"rows":1,"cols":1,"data":[[-9223372036854775809]]})")); });
  CHECK(m.find("neg.json: line 1, column 29: expected an integer within 64 bits") == 0);
}
