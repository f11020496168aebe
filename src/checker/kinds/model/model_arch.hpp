#pragma once
// Kind "model": one architecture's forward pass over the supplied tensors (docs/CERTIFICATES.md, kind
// "model"). Built from the model's tensors and the data set after their shapes have been checked (a
// missing, extra or mis-shaped tensor is a rejection naming the key and the expected shape); then
// evaluate(t, bits) encloses example t's margin (classification: logit[y] - max_{c != y} logit[c]) or
// error (regression: max over outputs |f(x_t) - y_t|) in doubles with a rigorous bound (bits 53) or in
// MPFR intervals at `bits` bits.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kinds/model/model_enclosure.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert_checker::model_kind {

class ModelArch {
 public:
  virtual ~ModelArch() = default;
  virtual std::size_t examples() const = 0;
  // Cost of one example: double pass in multiply-adds, MPFR pass in interval products.
  virtual double ops_double() const = 0;
  virtual double ops_mpfr() const = 0;
  // Working memory of the double pass's precomputation, in bytes.
  virtual double bytes() const = 0;
  virtual bool prepare() = 0;  // the double pass's precomputation (false: a value is not finite)
  virtual bool evaluate(std::size_t t, long bits, Bounds& out) const = 0;
};

// Tensor access for the architectures.
const NamedArray* model_find(const std::vector<NamedArray>& a, const std::string& name);
// `name` present with exactly `shape` (0 in `shape`: any size, reported in `got`); else `why` names it.
bool model_need(const std::vector<NamedArray>& a, const std::string& role, const std::string& name,
                const std::vector<std::size_t>& shape, std::vector<std::size_t>& got, std::string& why);
std::string shape_text(const std::vector<std::size_t>& s);
std::vector<double> model_values(const NamedArray& a);
// Every name of `a` must be in `known` (role "model" / "data"); else `why` names the first other one.
bool model_no_extra(const std::vector<NamedArray>& a, const std::string& role, const std::vector<std::string>& known,
                    std::string& why);

std::unique_ptr<ModelArch> make_mahdavi24_baseline(const std::vector<NamedArray>& model, const std::vector<NamedArray>& data,
                                                   bool regression, std::string& why);
std::unique_ptr<ModelArch> make_dana24_aot(const std::vector<NamedArray>& model, const std::vector<NamedArray>& data,
                                           std::size_t heads, std::string& why);
std::unique_ptr<ModelArch> make_mha(const std::vector<NamedArray>& model, const AttentionArrays& data, std::size_t heads,
                                    bool regression, std::string& why);

}  // namespace memcert_checker::model_kind
