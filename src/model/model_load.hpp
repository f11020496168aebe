#pragma once
// Reading an architecture's tensors from a state_dict: every missing, extra, mis-shaped, non-float or
// non-finite tensor is InputError (exit 2) naming the file, the key and the expected shape.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "memcert/model/state_dict.hpp"

namespace memcert::model_load {

// "(64, 32)" / "()" for a scalar.
std::string shape_text(const std::vector<std::size_t>& shape);

// The float tensor `key` with exactly `shape` (a dimension of kAny matches any size), its values (finite).
inline constexpr std::size_t kAny = static_cast<std::size_t>(-1);
const Tensor& tensor(const StateDict& sd, const std::string& file, const std::string& key,
                     const std::vector<std::size_t>& shape, const std::string& meaning);
// Its values as doubles (checked finite), after tensor().
std::vector<double> values(const StateDict& sd, const std::string& file, const std::string& key,
                           const std::vector<std::size_t>& shape, const std::string& meaning);
// A key not in `known` is bad input naming it.
void no_extra(const StateDict& sd, const std::string& file, const std::set<std::string>& known,
              const std::string& arch);

}  // namespace memcert::model_load
