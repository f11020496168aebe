// Kind "model": finding and shape-checking the supplied tensors by name.
#include <algorithm>

#include "kinds/model/model_arch.hpp"

namespace memcert_checker::model_kind {

const NamedArray* model_find(const std::vector<NamedArray>& a, const std::string& name) {
  for (const NamedArray& x : a)
    if (x.name == name) return &x;
  return nullptr;
}

std::string shape_text(const std::vector<std::size_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + (s[i] == 0 ? std::string("*") : std::to_string(s[i]));
  return t + (s.size() == 1 ? ",)" : ")");
}

bool model_need(const std::vector<NamedArray>& a, const std::string& role, const std::string& name,
                const std::vector<std::size_t>& shape, std::vector<std::size_t>& got, std::string& why) {
  const NamedArray* x = model_find(a, name);
  if (!x) {
    why = role + ": tensor \"" + name + "\" is missing (expected shape " + shape_text(shape) + ")";
    return false;
  }
  std::size_t numel = 1;
  bool overflow = false;
  for (std::size_t k : x->shape) overflow |= __builtin_mul_overflow(numel, k, &numel);
  bool ok = !overflow && x->shape.size() == shape.size() && numel == x->size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = x->shape[i] > 0 && (shape[i] == 0 || shape[i] == x->shape[i]);
  if (!ok) {
    std::vector<std::size_t> s = x->shape;
    std::string have = "(";
    for (std::size_t i = 0; i < s.size(); ++i) have += (i ? ", " : "") + std::to_string(s[i]);
    have += s.size() == 1 ? ",)" : ")";
    why = role + ": tensor \"" + name + "\" has shape " + have + ", expected " + shape_text(shape);
    return false;
  }
  got = x->shape;
  return true;
}

std::vector<double> model_values(const NamedArray& a) {
  std::vector<double> v(a.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = a.value(i);
  return v;
}

bool model_no_extra(const std::vector<NamedArray>& a, const std::string& role, const std::vector<std::string>& known,
                    std::string& why) {
  for (const NamedArray& x : a)
    if (std::find(known.begin(), known.end(), x.name) == known.end()) {
      why = role + ": unexpected tensor \"" + x.name + "\" for this architecture";
      return false;
    }
  return true;
}

}  // namespace memcert_checker::model_kind
