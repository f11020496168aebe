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

// AttentionDataset is the one attention data set type; its storage is chosen inside: rational contexts
// (`contexts`), or a typed storage (`typed`, below) from which a context's rationals are made on demand
// (attention_context) or all at once (attention_dataset_materialize). Every function that takes an
// AttentionDataset reads either storage (mahdavi24::assumptions_report and assumption2_check pick the
// typed kernels for the typed one).
enum class AttentionStorage { rational, typed };
inline AttentionStorage attention_storage(const AttentionDataset& ds) {
  return ds.typed ? AttentionStorage::typed : AttentionStorage::rational;
}

// How attention_dataset_read stores what it reads.
struct AttentionReadOptions {
  enum class Storage {
    rational,   // every value a rational (attention_dataset_read(path))
    automatic,  // typed when every context value of a .npz is exactly a double (float32 as stored, float64,
                // int64 up to 2^53), else rational (the storage of construct theorem1)
    typed,      // typed always: .npz arrays in their dtype's exact storage, JSON data narrowed
                // (typed_matrix_from_qmat); the storage of `memcert assumptions`
  };
  Storage storage = Storage::rational;
  bool keep_float32 = false;  // typed: float32 contexts stay float32 (automatic always keeps them)
  bool with_labels = true;    // typed: false = the labels are not read at all (a command that does not use
                              // them is never stopped by a file's labels, even malformed ones)
  bool rational_queries = true;  // typed: false = ds.queries is left 0 x d, the queries staying in the typed
                                 // storage alone until attention_dataset_materialize (for routes that read
                                 // only the typed storage, as assumptions_report does: no GMP rational
                                 // per query entry)
};
// The one reader: the same files, checks and messages under every storage. Typed storage: ds.typed holds
// the contexts and the queries in their typed storage; ds.queries holds the queries as rationals as well
// (T x d, small next to the T n x d contexts; only with rational_queries), ds.labels the labels (not
// ds.typed->labels, which stays empty). Read with
// Storage::typed, the typed storage may hold values that are not doubles (JSON rationals, int64 beyond
// 2^53), which attention_context_doubles then declines; Storage::automatic never gives such a storage.
AttentionDataset attention_dataset_read(const std::string& path, const AttentionReadOptions& options);

// AttentionDataset's typed storage: .npz arrays of integer and float dtypes stay int64 / float64 (8 bytes
// per entry instead of a GMP rational each). contexts is (T n) x d: example t is rows t n .. t n + n - 1.
// Also usable on its own (attention_dataset_read_typed) by code that reads the typed arrays directly.
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
// The typed storage alone: *attention_dataset_read(path, {typed, keep_float32, with_labels}).typed without
// the rational queries and labels beside it. keep_float32: float32 contexts stay float32 (contexts_f32)
// instead of being widened to double; queries are widened either way.
TypedAttentionDataset attention_dataset_read_typed(const std::string& path, bool keep_float32 = false,
                                                   bool with_labels = true);
// Context t (n x d) as a typed matrix of its own (a copy; float32 widened exactly to float64).
TypedMatrix typed_dataset_context(const TypedAttentionDataset& ds, std::size_t t);
// The rational form (for the exact routes and witnesses): an AttentionDataset of rational storage with
// the contexts and queries (not the labels).
AttentionDataset attention_dataset_from_typed(const TypedAttentionDataset& ds);

}  // namespace memcert
