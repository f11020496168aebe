// kind "claim", claims "ks25/theorem-4.1-inconsistent-labels", "ks25/corollary-4.1-inconsistent-labels",
// "ks25/theorem-D.1-inconsistent-labels": consistent labelling is necessary. The certificate holds two
// sequences ([n][d] exact tokens each), the positions read ("positions": [k_i, k_j]) and the two labels.
// The checker re-derives, exactly: the sequences have the same length and are permutations of each other
// (rows sorted and compared), the tokens at the read positions are equal (next-token: both positions are
// the last one; seq-to-seq: any positions; multiset: not needed), and the labels differ. Why that refutes
// memorization: the networks of ks25 eq. (4) have no positional encoding, so a permutation of the input
// permutes the outputs (token-wise maps commute with permutations, uniform attention averages over all
// tokens); equal multisets therefore give equal outputs at positions holding equal tokens, and deep sets
// rho(sum phi) give equal outputs on equal multisets.
#include <algorithm>

#include "kernel/context.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

bool check_claim_ks_consistency(const Value& c, const std::string& claim, std::string& why) {
  std::string verdict, setting;
  if (!read_string(c, "certificate", "verdict", verdict, why) || !read_string(c, "certificate", "setting", setting, why)) return false;
  if (verdict != "counterexample") { why = "verdict: expected \"counterexample\""; return false; }
  const char* want = claim == "ks25/theorem-4.1-inconsistent-labels"     ? "next-token"
                     : claim == "ks25/corollary-4.1-inconsistent-labels" ? "seq-to-seq"
                                                                         : "multiset";
  if (setting != want) { why = "setting: expected \"" + std::string(want) + "\" for " + claim; return false; }
  const Value* sv = member(c, "certificate", "sequences", json::Type::Array, why);
  const Value* pv = sv ? member(c, "certificate", "positions", json::Type::Array, why) : nullptr;
  const Value* lv = pv ? member(c, "certificate", "labels", json::Type::Array, why) : nullptr;
  if (!lv) return false;
  if (sv->size() != 2 || pv->size() != 2 || lv->size() != 2) { why = "sequences/positions/labels: expected two each"; return false; }
  std::vector<QMat> seq(2);
  for (std::size_t s = 0; s < 2; ++s) {
    const json::Item m_item = sv->at(s);
    const Value& m = *m_item;
    const std::string where = "sequences[" + std::to_string(s) + "]";
    if (m.type != json::Type::Array || m.empty() || m.size() > 4096) { why = where + ": expected 1..4096 tokens"; return false; }
    const std::size_t d = m.at(0)->type == json::Type::Array ? m.at(0)->size() : 0;
    if (d == 0 || d > 4096) { why = where + ": expected tokens of dimension 1..4096"; return false; }
    seq[s].resize(m.size());
    for (std::size_t k = 0; k < m.size(); ++k)
      if (!read_rational_vector(*m.at(k), where + "[" + std::to_string(k) + "]", d, seq[s][k], why)) return false;
  }
  const std::size_t n = seq[0].size();
  if (seq[1].size() != n || seq[1][0].size() != seq[0][0].size()) { why = "sequences: lengths or dimensions differ"; return false; }
  std::size_t pos[2];
  for (std::size_t s = 0; s < 2; ++s)
    if (!read_size(*pv->at(s), "positions[" + std::to_string(s) + "]", n - 1, pos[s], why)) return false;
  std::size_t label[2];
  for (std::size_t s = 0; s < 2; ++s)
    if (!read_size(*lv->at(s), "labels[" + std::to_string(s) + "]", std::size_t{1} << 40, label[s], why)) return false;
  if (label[0] == label[1]) { why = "labels: equal (no conflict)"; return false; }
  QMat a = seq[0], b = seq[1];
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) { why = "sequences: not permutations of each other (the multisets differ)"; return false; }
  if (setting == "next-token" && (pos[0] != n - 1 || pos[1] != n - 1)) { why = "positions: next-token reads the last token"; return false; }
  if (setting != "multiset" && seq[0][pos[0]] != seq[1][pos[1]]) { why = "positions: the tokens read differ"; return false; }
  note_applied("consistency: equal multisets (and equal read tokens) with different labels; eq. (4) is permutation-equivariant");
  return true;
}

}  // namespace memcert_checker
