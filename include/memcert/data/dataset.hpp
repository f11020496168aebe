#pragma once
// Data sets (docs/CLI.md): attention examples (mahdavi24) and token sequences (ks25).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert {

struct TypedAttentionDataset;  // typed_dataset.hpp

// T examples: context E^(t) (n x d), query e^(t) (row t of `queries`, T x d), optional labels: real
// labels (T x d_out, regression as in Theorem 1) or integer classes (T x 1 with `class_labels` = true).
struct AttentionDataset {
  std::vector<QMatrix> contexts;
  QMatrix queries;
  std::optional<QMatrix> labels;
  bool class_labels = false;  // labels are integer classes in [0, C) ("class_labels" in files)
  // "labels" stored in an .npz with an integer (or bool) dtype: read as REAL labels all the same, which
  // commands say in a note (attention_labels_note), since integer classes belong under "class_labels".
  bool labels_integer_dtype = false;
  // Typed backing (attention_dataset_read_backed): when set, `contexts` is empty and example t's context
  // is rows t n .. t n + n - 1 of typed's contexts, every value exactly a double (float32 as stored,
  // float64, or int64 of magnitude <= 2^53): 4-8 bytes per entry instead of a GMP rational. Only the
  // first typed_T examples belong to this data set (typed may hold more).
  std::shared_ptr<const TypedAttentionDataset> typed;
  std::size_t typed_T = 0, typed_n = 0;
  std::size_t T() const { return typed ? typed_T : contexts.size(); }
  std::size_t n() const { return typed ? typed_n : contexts.empty() ? 0 : contexts[0].rows(); }
  std::size_t d() const { return queries.cols(); }
};

// .json {"contexts","queries","labels"? | "class_labels"?} or .npz (contexts (T,n,d), queries (T,d),
// labels (T,)|(T,d_out) or class_labels (T,)). Checks shapes (ragged, mismatched T or d) and throws
// InputError naming file and position. "labels" are REAL numbers: [T] means d_out = 1, [T][d_out] is
// general. "class_labels" [T] are non-negative integers. Both keys present is bad input.
AttentionDataset attention_dataset_read(const std::string& path);
// The note a command that uses the labels prints (human "note:" line, JSON "notes") when `labels` were
// stored with an integer dtype: "labels: stored with an integer dtype and read as REAL labels (regression,
// ...); integer classes for arg-max memorization go under \"class_labels\"".
std::string attention_labels_note();
// The same data set from arrays already in memory, named as in a .npz ("contexts" (T, n, d), "queries"
// (T, d), optional "labels" (T,) | (T, d_out)), with the .npz reader's checks and one-line messages
// (`file` names the source in them). The Python module hands numpy arrays in through this.
AttentionDataset attention_dataset_from_arrays(const std::map<std::string, NdArray>& arrays, const std::string& file);
void attention_dataset_write_json(const std::string& path, const AttentionDataset& ds);
// The data set of `path` with its contexts in typed storage when they can be (a .npz whose contexts are
// float32, float64 or int64 of magnitude <= 2^53: ds.typed set, ds.contexts empty); queries and labels
// are rationals either way (T x d, small next to the contexts). Same checks and messages as
// attention_dataset_read; any other file or dtype is read by attention_dataset_read.
AttentionDataset attention_dataset_read_backed(const std::string& path);
// Context t as exact rationals (a copy; from the typed backing when there is one).
QMatrix attention_context(const AttentionDataset& ds, std::size_t t);
// Context t's values as doubles (n d, row-major) when ds has a typed backing (exact); false otherwise.
bool attention_context_doubles(const AttentionDataset& ds, std::size_t t, std::vector<double>& out);
// Replaces a typed backing by rational contexts (the exact routes that need every entry as a rational).
void attention_dataset_materialize(AttentionDataset& ds);
// Writers: real labels as "labels" (T x d_out), classes as "class_labels" [T].
// .npz of float64 arrays (class labels as a float64 (T,) array "class_labels"), for generated float data: every number
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
// A .npz may instead hold the compact layout of the same data set: token_ids (N,n) of an integer dtype
// and embedding (V,d), token k of sequence i being row token_ids[i][k] of embedding (rows of equal values
// are one token); both layouts in one file, an index outside [0, V) or a float index is bad input. Only the
// members named here are read (others are skipped unread), and every member's header is checked before any
// values are read.
SequenceDataset sequence_dataset_read(const std::string& path);
// The same data set with each distinct token stored once: `tokens` (first-occurrence order, V x d) and
// ids (N n, row-major: token k of sequence i is tokens[ids[i n + k]]). Read from a .npz without a
// rational per entry (rows compared by their stored values, -0.0 as 0.0); a .json is read by
// sequence_dataset_read and compacted. Same checks and messages as sequence_dataset_read.
struct TokenSequenceDataset {
  std::size_t N = 0, n = 0, d = 0;
  std::vector<QVector> tokens;
  std::vector<std::uint32_t> ids;
  std::vector<long> labels;
  std::vector<std::vector<long>> token_labels;
};
TokenSequenceDataset sequence_dataset_read_tokens(const std::string& path);
// ds compacted; sequences of unequal shapes (or no token, no coordinate) are bad input naming `file` and
// the first offending sequence.
TokenSequenceDataset sequence_dataset_tokens(SequenceDataset&& ds, const std::string& file);
// The inverse: every sequence spelled out as its n x d matrix of the table's rows.
SequenceDataset sequence_dataset_expand(TokenSequenceDataset&& t);
// Writes the data set of sequence_dataset_write without expanding it to rationals (.npz: float64 arrays,
// every token coordinate must be exactly a double; .json: streamed).
void sequence_dataset_write_tokens(const std::string& path, const TokenSequenceDataset& ds);
// The compact .npz layout of the same data set (sequence_dataset_read reads it back equal): token_ids
// (N, n) uint16 when the table has at most 65,536 tokens, else int32; embedding (V, d) float64 (the token
// table: every coordinate must be exactly a double, else std::invalid_argument, nothing written); labels
// int64 with sequence_dataset_write's keys. Streamed (memory O(V d), not O(N n d)). A path not ending in
// .npz is bad input (InputError) before anything is written.
void sequence_dataset_write_token_ids(const std::string& path, const TokenSequenceDataset& ds);

// Writers chosen by the file's suffix, as a user names the output: ".npz" -> the float64 .npz writer (loads
// with numpy.load), ".json" or anything else -> JSON; ".npy" holds ONE array, not a data set: InputError
// (exit 2) before anything is written.
void attention_dataset_write(const std::string& path, const AttentionDataset& ds);
void sequence_dataset_write(const std::string& path, const SequenceDataset& ds);
void sequence_dataset_write_json(const std::string& path, const SequenceDataset& ds);
void sequence_dataset_write_npz(const std::string& path, const SequenceDataset& ds);

}  // namespace memcert
