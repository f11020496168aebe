#pragma once
// Token association sets for dana24 (docs/papers/dana24.md section 1): T distinct sequences of S tokens from a
// vocabulary [0, N), each with its next token. JSON {"vocab": N, "sequences": [T][S], "next": [T]} or
// .npz with the same keys (integer or integral float arrays; "vocab" a 0-d or 1-element array).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memcert::dana24 {

struct AssocData {
  std::size_t N = 0;                              // vocabulary size
  std::size_t S = 0;                              // context length
  std::vector<std::vector<std::uint32_t>> sequences;  // T x S tokens in [0, N)
  std::vector<std::uint32_t> next;                // T next tokens in [0, N)
  std::size_t T() const { return sequences.size(); }
};

// Reads and validates: every token and next token in [0, N), all sequences of length S >= 1, T >= 1,
// sequences pairwise distinct. InputError (exit 2) with ONE line "file: position: expected ...". A repeated
// sequence is reported as such, naming both indices and saying whether the next tokens differ.
AssocData assoc_data_read(const std::string& path);
// Same checks on data built in memory (`file` names it in messages).
void assoc_data_validate(const AssocData& a, const std::string& file);
// Writes JSON, or .npz (int64-valued float64 arrays) when `path` ends in .npz; atomic.
void assoc_data_write(const std::string& path, const AssocData& a);

// `T` distinct sequences drawn uniformly from [0, N)^S (all N^S in lexicographic order when `all`), next
// tokens uniform in [0, N). Throws InputError when T > N^S or a size is 0.
AssocData assoc_data_generate(std::size_t N, std::size_t S, std::size_t T, std::uint64_t seed, bool all);

// Number of distinct last tokens t_S among the sequences (n_last, docs/papers/dana24.md section 5).
std::size_t assoc_distinct_last_tokens(const AssocData& a);

}  // namespace memcert::dana24
