#pragma once
// What a check reports besides valid / invalid: the acceptance rule it applied (printed by `verify`),
// the recorded fields it did NOT re-establish (printed as "not checked"), and the cost budget it must
// stay within. One context per verify_certificate_text call, on the calling thread.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "kernel/json.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert_checker {

struct CheckContext {
  Budget budget;
  std::vector<std::string> applied;      // e.g. "labels: |y_hat - y| <= 2^-20 max(1, |y|)"
  std::vector<std::string> not_checked;  // e.g. "hypotheses (recorded, not needed for the verdict)"
  bool over_budget = false;
  double needs_seconds = 0, needs_bytes = 0;  // the refused step's estimate (Verdict::needs_*)
  bool malformed = false;  // a field could not be read as its type (set by the readers in read.hpp)
  const ArraysSupplier* arrays = nullptr;  // the supplier of data referenced by file (null: none given)
  const KsArraysSupplier* ks_arrays = nullptr;  // kind "ks": the supplier of its referenced sequence file
  const TensorsSupplier* tensors = nullptr;  // kind "model": the supplier of its model / data tensors (null: none)
  std::vector<std::pair<std::string, std::size_t>> counts;  // copied to Verdict::counts
  // `verify --data`: the certificate's embedded examples were compared with DATA's rows (match_data.hpp),
  // which ties its "examples" field.
  bool data_matched = false;
  // `verify --data` on a certificate that references its data file: DATA stands in for the file, and the
  // certificate must cover all of DATA (as an embedded one must), not only its first T rows.
  bool data_replaces_file = false;
  // kind "rank": matrix.data read by the parser straight into machine integers (json::parse's capture);
  // null or absent when the tree holds the entries.
  json::IntMatrix* int_matrix = nullptr;
};

// The context of the check running on this thread (a fresh one per verify_certificate_text).
CheckContext& check_context();

// Records the rule a check applied / a recorded field it did not re-establish.
void note_applied(const std::string& rule);
void note_not_checked(const std::string& field);

// Admission control BEFORE the work starts: `ops` elementary operations (a multiply-add of word-size
// numbers ~ 1; callers estimate from the certificate's shapes) and `bytes` of working memory. Over the
// budget: marks the verdict undecided, sets `why` ("over budget: <what> needs ...") and returns false.
bool within_budget(double ops, double bytes, const std::string& what, std::string& why);

}  // namespace memcert_checker
