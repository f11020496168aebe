#pragma once
// Attention data sets in exact typed storage (typed_matrix.hpp) for the engine's fast certified routes.
#include <cstddef>
#include <string>

#include "memcert/data/dataset.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert {

// The contexts and queries of an attention data set: .npz arrays of integer and float dtypes stay int64 /
// float64 (8 bytes per entry instead of a GMP rational each). contexts is (T n) x d: example t is rows
// t n .. t n + n - 1.
struct TypedAttentionDataset {
  std::size_t T = 0, n = 0, d = 0;
  TypedMatrix contexts;
  TypedMatrix queries;
};
// Same files, checks and error messages as attention_dataset_read (labels are checked, not kept); JSON
// data are read as rationals and then narrowed (typed_matrix_from_qmat).
TypedAttentionDataset attention_dataset_read_typed(const std::string& path);
// The rational form (for the exact routes and witnesses).
AttentionDataset attention_dataset_from_typed(const TypedAttentionDataset& ds);

}  // namespace memcert
