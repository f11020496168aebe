// dana24 Corollary 2 (docs/papers/dana24.md, "Corollary 2's accuracy curve"): under Assumption 1 and a uniform
// prior, an AoT reaches accuracy >= 1/N + (1 - 1/N)(H d_h + d)/T_0 (T_0 here = all N^S sequences). The paper
// gives no proof; it holds in expectation over uniformly random labels of the sequences the model does
// not memorize. memcert's instance: all 100 bigrams of N = 10 with uniform labels, d = d_h = 2, H = 1..49.
// The construction memorizes k = 2H + 2 of them (chosen at random); its predictions on ALL 100 are then
// certified strict arg-maxes (kind "dana24" certificate over the 100 sequences with next = the prediction).
// The other 100 - k predictions do not depend on those sequences' labels (the construction never saw
// them), so over uniform labels each is right with probability exactly 1/N and the expected accuracy is
// (k + (100 - k)/N)/100, the bound with equality. The realized accuracy on the drawn labels is reported:
// it can fall below the bound (the worst case is unproven).
#include <algorithm>
#include <random>

#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_corollary_2 {
using namespace dana24_detail;

// Instance i: H = 1, 7, 13, ..., 49 first (the default 9), then the other H in 1..49.
std::size_t corollary2_heads(std::size_t index) {
  std::vector<std::size_t> order;
  for (std::size_t h = 1; h <= 49; h += 6) order.push_back(h);
  for (std::size_t h = 1; h <= 49; ++h)
    if ((h - 1) % 6 != 0) order.push_back(h);
  return order[index % order.size()];
}

struct Corollary2Instance {
  std::size_t H;
  dana24::AssocData all;     // the 100 bigrams with their labels
  dana24::AssocData subset;  // the k = 2H + 2 the construction memorizes
  std::uint64_t seed;
};

Instance generate(std::uint64_t seed, std::size_t index) {
  const std::size_t H = corollary2_heads(index), k = 2 * H + 2;
  Corollary2Instance in{H, dana24::assoc_data_generate(10, 2, 0, seed, true), {}, seed};
  std::mt19937_64 rng(seed * 1000003 + H);
  std::vector<std::size_t> idx(in.all.T());
  for (std::size_t t = 0; t < idx.size(); ++t) idx[t] = t;
  do {  // the construction needs two distinct last tokens (n_last >= d = 2)
    std::shuffle(idx.begin(), idx.end(), rng);
    in.subset = dana24::AssocData{};
    in.subset.N = 10, in.subset.S = 2;
    std::vector<std::size_t> pick(idx.begin(), idx.begin() + static_cast<long>(k));
    std::sort(pick.begin(), pick.end());
    for (std::size_t t : pick) in.subset.sequences.push_back(in.all.sequences[t]), in.subset.next.push_back(in.all.next[t]);
  } while (dana24::assoc_distinct_last_tokens(in.subset) < 2);
  Instance inst;
  inst.params = {{"N", 10}, {"S", 2}, {"d", 2}, {"dh", 2}, {"H", H}, {"T", 100}, {"memorized", k}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const Corollary2Instance&>(inst.data);
  const std::size_t k = in.subset.T(), T = in.all.T(), N = in.all.N;
  dana24::Dana24Options o;
  o.H = in.H, o.dh = 2, o.d = 2, o.seed = in.seed;
  dana24::Dana24Result r = dana24::dana24_construct(in.subset, o);
  InstanceResult out;
  if (!r.memorized) {
    out.outcome = Outcome::undecided;
    out.summary = "the construction did not certify the k = " + std::to_string(k) + " memorized sequences";
    return out;
  }
  // The model's prediction on every sequence (interval midpoints), then certified as strict arg-maxes.
  dana24::AssocData pred = in.all;
  for (std::size_t t = 0; t < T; ++t) {
    const auto E = dana24::dana24_encoder_enclosure(r.model, in.all.sequences[t]);
    double best = 0;
    for (std::size_t j = 0; j < N; ++j) {
      double l = 0;
      for (std::size_t i = 0; i < E.size(); ++i) l += r.model.WU(j, i) * 0.5 * (E[i].first + E[i].second);
      if (j == 0 || l > best) best = l, pred.next[t] = static_cast<std::uint32_t>(j);
    }
  }
  const dana24::ArgmaxCertificate cert = dana24::dana24_certify_argmax(r.model, pred);
  std::size_t right = 0;
  for (std::size_t t = 0; t < T; ++t) right += pred.next[t] == in.all.next[t];
  const double bound = 1.0 / N + (1.0 - 1.0 / N) * static_cast<double>(k) / static_cast<double>(T);
  const double expected = (static_cast<double>(k) + static_cast<double>(T - k) / N) / static_cast<double>(T);
  out.figures = {{"H", in.H},
                 {"memorized", k},
                 {"bound", bound},
                 {"expected_accuracy", expected},
                 {"certified_accuracy", static_cast<double>(right) / static_cast<double>(T)},
                 {"predictions_certified", cert.certified},
                 {"previous_bound_mahdavi24", 1.0 / N + (1.0 - 1.0 / N) * static_cast<double>(in.H + 1) / T}};
  if (cert.certified != T) {
    out.outcome = Outcome::undecided;
    out.summary = "a prediction outside the memorized set is not a certified strict arg-max (" +
                  std::to_string(cert.certified) + "/" + std::to_string(T) + ")";
    return out;
  }
  dana24::Dana24Result whole = r;
  whole.argmax = cert;
  whole.M = DMatrix();  // the read-out statement covers the k memorized sequences only
  whole.features_centre = DMatrix();
  out.certificate = dana24::dana24_certificate_json(pred, whole, "dana24/corollary-1");
  out.outcome = Outcome::confirmed;
  out.summary = "H = " + std::to_string(in.H) + ": " + std::to_string(k) + " memorized, all 100 predictions certified; "
                "accuracy on these labels " + std::to_string(right) + "/100, expected over random labels " +
                std::to_string(expected).substr(0, 5) + " = bound " + std::to_string(bound).substr(0, 5);
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/corollary-2",
    "Under Assumption 1 and a uniform prior, an AoT (d = d_h = 2, H heads) reaches expected accuracy "
    ">= 1/N + (1 - 1/N)(H d_h + d)/T_0 over random labels (N = 10, all 100 bigrams).",
    "the construction memorizes 2H + 2 random bigrams; every prediction on all 100 is a certified strict "
    "arg-max (kind \"dana24\" over the 100 sequences); the expectation over the other labels is exact; the "
    "worst case over labels is unproven and not claimed",
    Expect::holds, "", 9, generate, check}};

}  // namespace dana24_corollary_2
}  // namespace memcert::proofs
