#pragma once
// Attention data sets in exact typed storage (typed_matrix.hpp) for the engine's fast certified routes.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "memcert/data/dataset.hpp"
#include "memcert/data/float32_array.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert {

// The contexts and queries of an attention data set: .npz arrays of integer and float dtypes stay int64 /
// float64 (8 bytes per entry instead of a GMP rational each). contexts is (T n) x d: example t is rows
// t n .. t n + n - 1.
struct TypedAttentionDataset {
  std::size_t T = 0, n = 0, d = 0;
  TypedMatrix contexts;  // 0 x 0 when contexts_f32 holds the contexts
  // float32 contexts kept as stored ((T n) x d, row-major; half the memory of double): only from
  // attention_dataset_read_typed(path, true) on a .npz whose contexts are float32.
  // Read in place from the file when it is a large stored .npz member (Float32Array::mapped).
  Float32Array contexts_f32;
  TypedMatrix queries;
  // The labels, exactly as attention_dataset_read gives them: real (T x d_out) or integer classes (T x 1
  // with class_labels); none when the file has none.
  std::optional<QMatrix> labels;
  bool class_labels = false;
  bool labels_integer_dtype = false;  // as AttentionDataset's
};
// Same files, checks and error messages as attention_dataset_read (labels read as it reads them); JSON
// data are read as rationals and then narrowed (typed_matrix_from_qmat). keep_float32: float32 contexts
// stay float32 (contexts_f32) instead of being widened to double; queries are widened either way (T x d
// is small next to the T n x d contexts).
// with_labels = false: the labels are not read at all (commands that do not use them ignore them: a file's
// labels, even malformed ones, never stop such a command).
TypedAttentionDataset attention_dataset_read_typed(const std::string& path, bool keep_float32 = false,
                                                   bool with_labels = true);
// Context t (n x d) as a typed matrix of its own (a copy; float32 widened exactly to float64).
TypedMatrix typed_dataset_context(const TypedAttentionDataset& ds, std::size_t t);
// The rational form (for the exact routes and witnesses).
AttentionDataset attention_dataset_from_typed(const TypedAttentionDataset& ds);

}  // namespace memcert
