#pragma once
// The independent certificate checker (the trusted kernel, in the spirit of DRAT-trim / Lean's kernel).
// It depends ONLY on GMP (incl. gmpxx) and MPFR and the C++ standard library: it includes no other
// memcert header and parses certificates with its own small JSON reader. Everything it accepts is
// re-derived with exact rationals, arithmetic modulo verified primes, and MPFR with directed rounding.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace memcert_checker {

// The cost a check may take. Each kind estimates its cost from the certificate's shapes BEFORE the
// work starts; a certificate over budget is answered "undecided" (Verdict::undecided), never checked
// partially. The estimate is in elementary operations, converted at kOpsPerSecond.
// Library default: no time limit (the engine checks what it just built), 4 GiB of memory; `memcert
// verify` passes its --max-seconds (default 60) and --max-memory (default 4096 MB).
struct Budget {
  double max_seconds = 1e300;
  double max_bytes = 4.0 * 1024 * 1024 * 1024;
  static constexpr double kOpsPerSecond = 2e8;
};

struct Verdict {
  bool valid = false;
  bool undecided = false;  // not checked: over budget (reason says which resource); valid is false
  bool malformed = false;  // rejected because it is not a well-typed certificate (not JSON, a field of the
                           // wrong type / syntax / length): bad input rather than a false claim
  std::string kind;    // the certificate's "kind"
  std::string claim;   // the certificate's "claim"
  std::string reason;  // why it was rejected or undecided (empty when valid)
  std::vector<std::string> applied;      // acceptance rules the checker applied (e.g. its label tolerance)
  std::vector<std::string> not_checked;  // recorded fields the verdict does not rest on, NOT re-established
  // Over budget (undecided): what the refused step estimated it needs, 0 when not known. A caller can
  // name the budget that would suffice.
  double needs_seconds = 0;
  double needs_bytes = 0;
  // Counts a valid certificate establishes, by name (kind "model": certified_correct, certified_wrong,
  // undecided); empty for other kinds.
  std::vector<std::pair<std::string, std::size_t>> counts;
};

// Portable mode: every kernel routine with a CPU-specific form (SHA-256 on the SHA instructions, the
// AVX-512 / AVX2 tiles of the Gram products, the vectorized mod-p elimination) takes its portable scalar
// twin instead, so an auditor can check a verdict with the plainest code. On when the environment has
// MEMCERT_CHECKER_PORTABLE=1 (read once); set_checker_portable overrides it (tests compare the routes).
// Verdicts never depend on it.
bool checker_portable();
void set_checker_portable(bool on);

// The checker's name of a certificate kind: "theorem1" for "mahdavi24" and "ks" for "ks25" (the papers'
// names, accepted as the same kinds), any other kind unchanged. Verdict::kind is the kind as written.
std::string kind_name(const std::string& kind);

// Verifies a certificate given as JSON text. Never throws: malformed input is a rejection.
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget = {});

// Reads the file and verifies its text. An unreadable file is a rejection whose reason starts with
// the path (callers wanting "bad input" semantics should check readability themselves). A file larger
// than budget.max_bytes / kTextBytesPerInputByte is undecided (over budget) without being read whole;
// one whose first byte after JSON whitespace is not '{' is malformed at once, however long it is.
Verdict verify_certificate_file(const std::string& path, const Budget& budget = {});

// `verify CERT --data DATA`: the data set the certificate must be about. The supplier is called with the
// certificate's kind once the certificate has parsed; it returns the data set as EXACT JSON in the layout
// of docs/CERTIFICATES.md ("Tying a certificate to a data set": every number an exact string or a JSON
// integer), or false with `error` set when it cannot (the verdict is then malformed with that reason).
// The checker compares the certificate's embedded data with it exactly (a difference rejects, naming the
// first differing position), then checks the certificate as usual. Kinds: theorem1, ks, dana24 (any
// other kind is malformed: "kind: --data is not supported for ...").
using DataSupplier = std::function<bool(const std::string& kind, std::string& data_json, std::string& error)>;
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const DataSupplier& data);
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const DataSupplier& data);

// Data by reference (docs/CERTIFICATES.md "Data by reference"): a theorem1 certificate may name its data
// file and a digest instead of embedding the contexts and queries. The checker then asks for the arrays
// (the exact values, every one a double; contexts row-major (T, n, d), queries (T, d)), recomputes the
// digest of the first T examples itself and checks everything from those values.
struct AttentionArrays {
  std::size_t T = 0, n = 0, d = 0;
  std::vector<double> contexts, queries;
  // The contexts as float32 instead (their exact values; `contexts` is then empty): half the memory, and
  // no widened copy of a float32 file.
  std::vector<float> contexts_f32;
  std::size_t context_values() const { return contexts_f32.empty() ? contexts.size() : contexts_f32.size(); }
  double context_value(std::size_t i) const { return contexts_f32.empty() ? contexts[i] : double(contexts_f32[i]); }
  // The labels the file holds, for all T examples: none, real (T x d_out, row-major, each an exact
  // rational in lowest terms as text, "p" or "p/q") or integer classes. The checker compares them with
  // the certificate's labels and digests them (a certificate's labels are tied to the file, not trusted).
  enum class Labels { none, real, classes };
  Labels label_kind = Labels::none;
  std::size_t d_out = 0;                 // real labels: columns
  std::vector<std::string> labels;       // real labels: T d_out exact rationals
  std::vector<std::uint64_t> classes;    // class labels: T
};
// `file`: the certificate's "data.file"; fills `out` or returns false with `error` set (a file that
// cannot be read is bad input: the verdict is then malformed with that reason).
using ArraysSupplier = std::function<bool(const std::string& file, AttentionArrays& out, std::string& error)>;
// "sha256:" + the SHA-256 (hex) of "memcert-attention-v2 T n d" followed by the IEEE-754 binary64 bit
// patterns (little-endian) of the first T examples' context entries, then of their queries, then their
// labels (attention_labels_digest_text): a digest of the VALUES (a float32 and a float64 file of the same
// numbers agree) covering everything a theorem1 claim is about. Requires T <= a.T.
std::string attention_arrays_digest(const AttentionArrays& a, std::size_t T);
// The digest written before labels were covered ("memcert-attention-v1 T n d", contexts and queries
// only); the checker still recognizes it, and then ties the labels by comparing them with the file's.
std::string attention_arrays_digest_v1(const AttentionArrays& a, std::size_t T);
// The labels part of the v2 digest for the first T examples: "labels none", "labels classes" followed by
// " c" per example, or "labels real d_out" followed by " p/q" per entry (row-major, lowest terms).
std::string attention_labels_digest_text(const AttentionArrays& a, std::size_t T);
// The same digest fed piecewise: the T n d context values in order, then the T d query values, then
// (v2) add_text(attention_labels_digest_text(...)), then finish() (once). Lets a caller digest data it
// holds in another form without copying it. version: 2 (current) or 1 (contexts and queries only).
class Sha256;
class AttentionDigest {
 public:
  AttentionDigest(std::size_t T, std::size_t n, std::size_t d, int version = 2);
  ~AttentionDigest();
  AttentionDigest(const AttentionDigest&) = delete;
  AttentionDigest& operator=(const AttentionDigest&) = delete;
  void add(const double* v, std::size_t count);
  void add(const float* v, std::size_t count);  // widened exactly
  void add_text(const std::string& text);        // bytes as they are (the labels part)
  std::string finish();

 private:
  std::unique_ptr<Sha256> sha_;
};
// Data by reference for kind "ks" (docs/CERTIFICATES.md "Data by reference (ks)"): a ks certificate may
// name its sequence file and a digest instead of embedding "sequences" and "labels". The checker asks for
// the file's sequences (its token table and indices) and labels, recomputes the digest and checks
// everything from those values, each sequence's tokens found among the certificate's "tokens" by value.
struct KsArrays {
  std::size_t N = 0, n = 0, d = 0;
  std::vector<std::string> tokens;  // the file's token table, row-major (V x d): exact rationals as text
  std::vector<std::uint32_t> ids;   // N x n indices into the table
  enum class Labels { none, sequence, token };
  Labels label_kind = Labels::none;
  std::vector<std::int64_t> labels;  // N (sequence) or N x n (token)
};
// `file`: the certificate's "data.file"; fills `out` or returns false with `error` set (a file that cannot
// be read is bad input: the verdict is then malformed with that reason).
using KsArraysSupplier = std::function<bool(const std::string& file, KsArrays& out, std::string& error)>;
// "sha256:" + the SHA-256 (hex) of the canonical content: "memcert-ks-v1 N n d\n"; the distinct token vectors
// in order of first use (sequence by sequence, position by position), each as its d exact numbers in lowest
// terms ("p" or "p/q") separated by spaces and ended by "\n"; "ids\n" and the N n indices into that list as
// 4-byte little-endian integers; then "labels none", "labels sequence" followed by " c" per sequence or
// "labels token" followed by " c" per token. The table's order, repeated rows and unused rows do not change
// it. "" when the arrays are malformed (sizes, an index past the table, a number that is not exact).
std::string ks_arrays_digest(const KsArrays& a);
// Tensors by reference (kind "model", docs/CERTIFICATES.md): a trained model's state_dict and its data set
// are named by file and digest. The checker asks for the arrays, recomputes the digest itself and checks
// every verdict from those values. A NamedArray holds one array's exact values (every one a double).
struct NamedArray {
  std::string name;
  std::vector<std::size_t> shape;     // C order; empty for a scalar
  std::vector<double> values;         // the values, or
  std::vector<float> values_f32;      // their exact float32 form (values then empty): half the memory
  std::size_t size() const { return values_f32.empty() ? values.size() : values_f32.size(); }
  double value(std::size_t i) const { return values_f32.empty() ? values[i] : double(values_f32[i]); }
};
// role "model": every tensor of the model file as read (state_dict keys); role "data": the arrays the
// architecture `arch` reads from the data file (docs/CERTIFICATES.md, kind "model"). Fills `out` or returns
// false with `error` set (an unreadable file is bad input: the verdict is then malformed with that reason).
using TensorsSupplier = std::function<bool(const std::string& file, const std::string& role, const std::string& arch,
                                           std::vector<NamedArray>& out, std::string& error)>;
// "sha256:" + the SHA-256 (hex) of "memcert-tensors-v1 K\n" (K arrays) followed, for each array in increasing
// byte order of names, by "<name>\n<ndim>[ <dim>]...\n" and the IEEE-754 binary64 bit patterns (little-endian,
// -0 as +0) of its values in C order: a digest of the VALUES (float16/32/64 storage of the same numbers
// agree). Names must be distinct and free of '\n'; every value finite (else "" is returned).
std::string tensors_digest(const std::vector<NamedArray>& arrays);
// Kind "model": the certificate's model and data files are asked of `tensors` (an "mha" certificate's
// attention data set of `arrays`, when given). Other kinds are checked as by the functions above.
// `ks`: the supplier of a ks certificate's referenced sequence file (null: none).
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const TensorsSupplier& tensors,
                                const ArraysSupplier* arrays = nullptr, const KsArraysSupplier* ks = nullptr);
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const TensorsSupplier& tensors,
                                const ArraysSupplier* arrays = nullptr, const KsArraysSupplier* ks = nullptr);
// As the functions above, with the supplier of referenced data (data may be null: no --data).
Verdict verify_certificate_file(const std::string& path, const Budget& budget, const DataSupplier* data,
                                const ArraysSupplier& arrays, const KsArraysSupplier* ks = nullptr);
Verdict verify_certificate_text(const std::string& json_text, const Budget& budget, const DataSupplier* data,
                                const ArraysSupplier& arrays, const KsArraysSupplier* ks = nullptr);
// Parsed JSON takes this many bytes of memory per byte of text at most (numbers kept as text in a
// tree of values); the memory estimate a data set read for `--data` starts from.
inline constexpr double kBytesPerInputByte = 48;
// A certificate's text may take up to the memory budget / kTextBytesPerInputByte: the text is held once and
// a matrix the reader takes straight into machine integers needs at most twice its text again. The tree
// of the rest is charged as it is built and stops the parse past the budget (over budget: undecided).
inline constexpr double kTextBytesPerInputByte = 4;

// Worker threads of the checker's kernels (0: the default, the hardware concurrency capped at 8).
// Verdicts never depend on it.
void verify_set_threads(unsigned k);

}  // namespace memcert_checker
