// tensors_digest (kind "model"'s digest of a state_dict or data set by value): known answers computed
// independently (Python's hashlib over the byte string docs/CERTIFICATES.md defines), and the properties a
// reference by digest relies on.
#include "catch.hpp"

#include <limits>

#include "memcert/checker/checker.hpp"

using memcert_checker::NamedArray;
using memcert_checker::tensors_digest;

namespace {
NamedArray array(std::string name, std::vector<std::size_t> shape, std::vector<double> v) {
  NamedArray a;
  a.name = std::move(name);
  a.shape = std::move(shape);
  a.values = std::move(v);
  return a;
}
}  // namespace

TEST_CASE("tensors_digest: known answers (hashlib over the defined byte string)") {
  // hashlib.sha256(b"memcert-tensors-v1 2\nb\n0\n" + pack('<d', 0.0) + b"w\n2 2 2\n" + pack('<4d', 1, -.5, .25, 3))
  CHECK(tensors_digest({array("w", {2, 2}, {1.0, -0.5, 0.25, 3.0}), array("b", {}, {-0.0})}) ==
        "sha256:4a0e2294c31c118476b2bea376b877bcb7dab6fef67cfbe9c8b1ffe0d604fcfe");
  CHECK(tensors_digest({array("Z", {0}, {})}) ==
        "sha256:ada248cb2e2af2b57a4f68bfa510c6f9a45f87fb2df0b05c11bc162c7ee90652");
}

TEST_CASE("tensors_digest: a digest of values, names and shapes") {
  const auto base = tensors_digest({array("a", {3}, {1.5, 2, -7}), array("b", {1}, {0.1})});
  // Order of the list does not matter; float32 storage of the same values agrees.
  CHECK(tensors_digest({array("b", {1}, {0.1}), array("a", {3}, {1.5, 2, -7})}) == base);
  NamedArray f = array("a", {3}, {});
  f.values_f32 = {1.5f, 2.0f, -7.0f};
  CHECK(tensors_digest({f, array("b", {1}, {0.1})}) == base);
  // Any value, name or shape change changes it.
  CHECK(tensors_digest({array("a", {3}, {1.5, 2, -7}), array("b", {1}, {0.1000000000000001})}) != base);
  CHECK(tensors_digest({array("a", {3}, {1.5, 2, -7}), array("c", {1}, {0.1})}) != base);
  CHECK(tensors_digest({array("a", {3, 1}, {1.5, 2, -7}), array("b", {1}, {0.1})}) != base);
  CHECK(tensors_digest({array("a", {1, 3}, {1.5, 2, -7}), array("b", {1}, {0.1})}) !=
        tensors_digest({array("a", {3, 1}, {1.5, 2, -7}), array("b", {1}, {0.1})}));
  // A value moved from one array to the next is not the same data.
  CHECK(tensors_digest({array("a", {2}, {1, 2}), array("b", {1}, {3})}) !=
        tensors_digest({array("a", {1}, {1}), array("b", {2}, {2, 3})}));
}

TEST_CASE("tensors_digest: no digest for what cannot be referenced") {
  CHECK(tensors_digest({array("a", {1}, {std::numeric_limits<double>::quiet_NaN()})}).empty());
  CHECK(tensors_digest({array("a", {1}, {std::numeric_limits<double>::infinity()})}).empty());
  CHECK(tensors_digest({array("a", {1}, {1}), array("a", {1}, {1})}).empty());  // duplicate names
  CHECK(tensors_digest({array("a\nb", {1}, {1})}).empty());                     // a name that could forge a header
  CHECK(tensors_digest({array("a", {2, 2}, {1, 2, 3})}).empty());               // shape and values disagree
}
