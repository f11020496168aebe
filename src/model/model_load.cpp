// Tensor look-ups with one-line errors (model_load.hpp).
#include "model_load.hpp"

#include <cmath>

#include "memcert/util/error.hpp"

namespace memcert::model_load {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == kAny ? std::string("*") : std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

const Tensor& tensor(const StateDict& sd, const std::string& file, const std::string& key,
                     const std::vector<std::size_t>& shape, const std::string& meaning) {
  const std::string want = "a float tensor of shape " + shape_text(shape) + (meaning.empty() ? "" : " (" + meaning + ")");
  const Tensor* t = sd.find(key);
  if (!t) throw input_error(file, key, "missing: expected " + want);
  if (!dtype_is_float(t->dtype))
    throw input_error(file, key, "expected " + want + ", got dtype " + dtype_name(t->dtype));
  bool ok = t->shape.size() == shape.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] == kAny ? t->shape[i] > 0 : t->shape[i] == shape[i];
  if (!ok) throw input_error(file, key, "expected " + want + ", got shape " + shape_text(t->shape));
  for (std::size_t i = 0; i < t->f64.size(); ++i)
    if (!std::isfinite(t->f64[i]))
      throw input_error(file, key, "expected finite values, got " + std::string(std::isnan(t->f64[i]) ? "NaN" : "an infinity") +
                                       " at flat index " + std::to_string(i));
  return *t;
}

std::vector<double> values(const StateDict& sd, const std::string& file, const std::string& key,
                           const std::vector<std::size_t>& shape, const std::string& meaning) {
  return tensor(sd, file, key, shape, meaning).f64;
}

namespace {
// A key as shown in a message: printable ASCII only, cut at 100 characters.
std::string shown(const std::string& key) {
  std::string s;
  for (unsigned char c : key.substr(0, 100)) s += (c >= 32 && c < 127) ? char(c) : '?';
  return key.size() > 100 ? s + "..." : s;
}
}  // namespace

void no_extra(const StateDict& sd, const std::string& file, const std::set<std::string>& known, const std::string& arch) {
  for (const auto& [key, t] : sd.entries())
    if (!known.count(key))
      throw input_error(file, shown(key), "unexpected tensor for --arch " + arch + " (expected only the keys of docs/MODELS.md)");
}

}  // namespace memcert::model_load
