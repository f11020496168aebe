#pragma once
// Data sets (docs/CLI.md): attention examples (mahdavi24) and token sequences (ks25).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert {

// T examples: context E^(t) (n x d), query e^(t) (row t of `queries`, T x d), optional labels
// (T x d_out; class labels are stored as T x 1 with `class_labels` = true).
struct AttentionDataset {
  std::vector<QMatrix> contexts;
  QMatrix queries;
  std::optional<QMatrix> labels;
  bool class_labels = false;  // labels given as a flat [T] list of integers
  std::size_t T() const { return contexts.size(); }
  std::size_t n() const { return contexts.empty() ? 0 : contexts[0].rows(); }
  std::size_t d() const { return queries.cols(); }
};

// .json {"contexts","queries","labels"?} or .npz (contexts (T,n,d), queries (T,d), labels (T,)|(T,d_out)).
// Checks shapes (ragged, mismatched T or d) and throws InputError naming file and position.
// Flat labels [T] must be integers (class labels); [T][d_out] labels are exact numbers.
AttentionDataset attention_dataset_read(const std::string& path);
// The same data set from arrays already in memory, named as in a .npz ("contexts" (T, n, d), "queries"
// (T, d), optional "labels" (T,) | (T, d_out)), with the .npz reader's checks and one-line messages
// (`file` names the source in them). The Python module hands numpy arrays in through this.
AttentionDataset attention_dataset_from_arrays(const std::map<std::string, NdArray>& arrays, const std::string& file);
void attention_dataset_write_json(const std::string& path, const AttentionDataset& ds);
// .npz of float64 arrays (class labels as a float64 (T,) array), for generated float data: every number
// must be exactly a double, else std::invalid_argument (nothing is rounded, nothing written).
void attention_dataset_write_npz(const std::string& path, const AttentionDataset& ds);

// N sequences X^(i) with n tokens in R^d (token k of sequence i = row k of sequences[i], n x d) and class
// labels in [0, C). Seq-to-seq data carries per-token labels (N x n).
struct SequenceDataset {
  std::vector<QMatrix> sequences;
  std::vector<long> labels;                      // next-token labels (size N), or empty
  std::vector<std::vector<long>> token_labels;   // seq-to-seq labels (N x n), or empty
  std::size_t N() const { return sequences.size(); }
  std::size_t n() const { return sequences.empty() ? 0 : sequences[0].rows(); }
  std::size_t d() const { return sequences.empty() ? 0 : sequences[0].cols(); }
};
// .json {"sequences": [N][n][d], "labels": [N] | [N][n], "token_labels"?: [N][n]} or .npz (sequences
// (N,n,d), labels (N,) | (N,n), token_labels (N,n)). Labels must be non-negative integers; the upper
// bound C is checked by the construction that uses them. The writer emits "labels" [N] and, when both
// kinds are present, "token_labels" [N][n] (per-token labels alone go to "labels").
SequenceDataset sequence_dataset_read(const std::string& path);
void sequence_dataset_write_json(const std::string& path, const SequenceDataset& ds);
void sequence_dataset_write_npz(const std::string& path, const SequenceDataset& ds);

}  // namespace memcert
