#pragma once
// Theorem 1's check as stages over one typed certificate (check_theorem1.cpp runs them in order):
//   read_theorem1_sizes, read_theorem1_data, read_theorem1_weights, read_theorem1_trace  -- the certificate
//     read once, every field typed and range-checked, the trace's claims that are functions of the
//     weights (W_K[:, k] = c g, W_Q[:, k] = w) checked as they are read;
//   check_forward_pass   -- steps 1, 2, 4 example by example: exact logits (Claim 1's targets), Lemma 3's
//     saturation data and Lemma 4's scale, softmax and mixing enclosures (rows of Z), the read-out and labels;
//   check_lemma5_sigma   -- each head's sigma_lower (or B.2 rank) re-certified by Rump's test;
//   check_rank_Z         -- rank(Z) >= T for every matrix of the enclosure.
// Each stage returns false with `why` set at the first failure; later stages read what earlier ones filled.
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "kernel/interval.hpp"
#include "kinds/mahdavi24/theorem1_arith.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert_checker::theorem1 {

// One head's trace entry (docs/THEORY.md section 4): its group R_h, target logits, and the saturator.
struct HeadTrace {
  std::vector<std::size_t> group;
  std::vector<json::Item> targets;
  bool sat = false, direct = false, chain = true;
  mpq_class c = 0, eps = 0, gap = 0, spread = 0, sigma = 0;
  QRow g, w;
  Scaled gs, ws;
  SmallInts gd;       // gs as doubles when small
  Interval log_term;  // ln(2(n-1)/eps), enclosed
  std::size_t old = 0, rank_target = 0;
  std::size_t reference = 0;  // sigma_reference_heads: which heads' Gram matrix to try first (a hint)
};

// The referenced data and their digest, recomputed beside the check (SHA-256 is sequential: on its own
// thread it costs no wall time while the examples are checked). The verdict waits for it
// (check_theorem1_on): a mismatch rejects whatever the check found, so the reason stays the digest's.
struct DataDigestJob {
  AttentionArrays arrays;            // must outlive `running` (declared first: destroyed last)
  std::string expected;              // the certificate's data.digest
  std::size_t T = 0;                 // the examples it covers
  std::future<std::string> running;  // the digest of the supplied values (not started: computed in line)
};

// The certificate as the stages read it, and what the forward pass computes for the later stages.
struct Theorem1 {
  bool generic = false;  // method "generic": weights beyond the theorem, no trace
  std::size_t H = 0, n = 0, d = 0, dh = 0, dv = 0, dout = 0, T = 0, rankZ = 0;
  std::size_t r = 0;  // min(n, d_h)
  bool skip = false;
  // data: embedded (E, Q) or referenced (arrays, Q)
  bool by_file = false;
  std::vector<QMat> E;
  QMat Q;
  const AttentionArrays* arrays = nullptr;
  bool class_labels = false;
  QMat Y;
  std::vector<std::size_t> cls;
  // weights, exact and in the forms the products use
  std::vector<Scaled> WK, WQ;
  std::vector<QMat> WKq, WQq, WV;
  QMat WO, WD;
  std::deque<SparseIv> WVs;
  std::unique_ptr<SparseIv> WOs, WDs;
  std::vector<mpz_class> den_kq;  // W_K W_Q^T's common denominator per head
  std::vector<SmallInts> WKd;     // W_K's numerators as doubles when they are small
  std::vector<ColumnGcd> WQg;     // W_Q's columns over their gcds, for W_Q^T e
  // the trace
  std::vector<HeadTrace> ht;
  std::vector<std::size_t> grp;                         // example -> its group's head (H: none)
  std::vector<std::vector<const Value*>> target_of;     // [h][t]: the target logits to compare, or null
  // rows of Z as double centres and radii (T x m, m = H d), and Lemma 5's limit tokens
  std::size_t m = 0;
  std::vector<double> C, R;
  bool tok_by_head = false;  // limit tokens stored per (example, head) (H < n), else every token
  std::vector<double> TokM, TokR;
  std::vector<std::uint32_t> jstar;  // [h * T + t]: the unique maximum of s for an earlier example
  // the lower triangle of sum over heads g < acc_heads of fl(C_g C_g^T) (Lemma 5, completed for rank(Z))
  std::vector<double> acc, Ch;
  std::size_t acc_heads = 0;
};

// ---- data by reference (theorem1_data.cpp) ----
bool digest_matches(const AttentionArrays& arrays, std::size_t T, const std::string& mine, const std::string& named,
                    std::string& why);
bool read_referenced_data(const Value& data, std::size_t T, std::size_t n, std::size_t d, DataDigestJob& job,
                          QMat& Q, std::string& why, unsigned threads);
bool bind_file_labels(const AttentionArrays& arrays, std::size_t T, bool class_labels, const QMat& Y,
                      const std::vector<std::size_t>& cls, std::string& why);
bool check_examples_field(const Value& cert, std::size_t T, bool by_file, std::string& why);

// ---- the stages ----
bool read_theorem1_sizes(const Value& cert, Theorem1& k, std::string& why);                  // theorem1_read.cpp
bool read_theorem1_data(const Value& cert, Theorem1& k, DataDigestJob& job, unsigned threads, std::string& why);
bool read_theorem1_weights(const Value& cert, Theorem1& k, unsigned threads, std::string& why);
bool read_theorem1_trace(const Value& cert, Theorem1& k, std::string& why);                  // theorem1_trace.cpp
bool check_forward_pass(Theorem1& k, unsigned threads, std::string& why);                   // theorem1_forward.cpp
bool check_lemma5_sigma(Theorem1& k, unsigned threads, std::string& why);                   // theorem1_gram.cpp
bool check_rank_Z(Theorem1& k, unsigned threads, std::string& why);                         // theorem1_gram.cpp

}  // namespace memcert_checker::theorem1
