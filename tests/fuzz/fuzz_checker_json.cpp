// libFuzzer: the checker's own JSON reader (src/checker/kernel/json.cpp) on arbitrary bytes. It must never
// throw, crash or recurse without bound; a parse either succeeds or names an offset. Packed arrays read as
// the tree of the same text: the same answer, the same error, the same values through the accessors.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/checker/kernel/json.hpp"

namespace {
using memcert_checker::json::Item;
using memcert_checker::json::Type;
using memcert_checker::json::Value;

bool same(const Value& a, const Value& b) {
  if (a.type != b.type || a.text != b.text || a.boolean != b.boolean || a.size() != b.size() ||
      a.members.size() != b.members.size())
    return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const Item x = a.at(k), y = b.at(k);
    if (!same(*x, *y)) return false;
  }
  for (std::size_t k = 0; k < a.members.size(); ++k)
    if (a.members[k].first != b.members[k].first || !same(a.members[k].second, b.members[k].second)) return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Value v, tree;
  std::string error, tree_error;
  bool over = false;
  const bool ok = memcert_checker::json::parse(text, v, error);
  if (!ok && error.empty()) std::abort();  // a failure always says where
  const bool tree_ok = memcert_checker::json::parse_within(text, tree, tree_error, nullptr, 1e300, over, false);
  if (ok != tree_ok || error != tree_error || (ok && !same(v, tree))) std::abort();
  return 0;
}
