// file_read_all / file_write_atomic: errors name the path; an atomic write leaves no temp file and
// never a half-written target.
#include <filesystem>

#include "memcert/data/matrix_io.hpp"
#include "npy_fixtures.hpp"

using namespace memcert;
using fixtures::input_error_of;

TEST_CASE("file_write_atomic replaces the target and leaves no temp file", "[file]") {
  auto dir = fixtures::scratch() / "atomic";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "out.json").string();
  file_write_atomic(path, "first");
  file_write_atomic(path, "second\n");
  CHECK(file_read_all(path) == "second\n");
  std::size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) { (void)e; ++files; }
  CHECK(files == 1);
}

TEST_CASE("file errors are one line naming the path", "[file][errors]") {
  std::string missing_dir = (fixtures::scratch() / "no" / "such" / "dir" / "x.json").string();
  std::string m = input_error_of([&] { file_write_atomic(missing_dir, "x"); });
  CHECK(m.find("no/such/dir/x.json: expected a writable path, got ") == 0);
  CHECK_FALSE(std::filesystem::exists(missing_dir));

  m = input_error_of([&] { file_read_all(missing_dir); });
  CHECK(m == "no/such/dir/x.json: expected a readable file, got No such file or directory");

  auto d = fixtures::scratch() / "adir.txt";
  std::filesystem::create_directories(d);
  m = input_error_of([&] { matrix_read(d.string()); });
  CHECK(m == "adir.txt: expected a readable file, got a directory");
}
