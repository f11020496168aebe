// dana24 Proposition 2, the failing side: for d < N - 1 some full-support pi is not exactly representable
// by a d-dimensional sequence encoder. Exact form (docs/papers/dana24.md section 3): with rational logits z_c,
// no encoder reproduces them iff rank(P Z*) > d, P = I - 11^T/N; certified by a non-zero (d+1)-minor.
#include "dana24_instances.hpp"
#include "memcert/linalg/rank.hpp"

namespace memcert::proofs {
namespace dana24_proposition_2 {
using namespace dana24_detail;

struct Prop2Instance {
  std::size_t N, d, C;
  QMatrix Z;  // C x N rational logits
};

Instance generate(std::uint64_t seed, std::size_t index) {
  static const std::size_t sz[][3] = {{4, 2, 3}, {5, 2, 4}, {6, 3, 5}};  // N, d, contexts
  const auto& s = sz[index % 3];
  detail::Rng rng(seed);
  Prop2Instance in{s[0], s[1], s[2], QMatrix(s[2], s[0])};
  for (auto& x : in.Z.data()) x = rng.rational(9, 4);
  Instance inst;
  inst.params = {{"N", in.N}, {"d", in.d}, {"contexts", in.C}};
  inst.data = std::move(in);
  return inst;
}

// `claims search` families (index % 4): 0 integer lattice logits in {-1, 0, 1}; 1 near-uniform
// conditionals (logits k/4096, |k| <= 3); 2 P Z* of rank exactly d + 1 (contexts d+2.. are combinations
// of the first d+1); 3 the smallest N with d < N - 1 (N = d + 2) and N contexts.
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"lattice", "near-uniform", "rank-exactly-d-plus-1", "boundary-N-equals-d-plus-2"};
  static const std::size_t sz[][3] = {{4, 2, 3}, {5, 2, 4}, {6, 3, 6}, {5, 3, 5}};  // N, d, contexts
  const std::size_t fam = index % 4;
  const auto& s = sz[fam];
  detail::Rng rng(seed);
  Prop2Instance in{s[0], s[1], s[2], QMatrix(s[2], s[0])};
  for (std::size_t c = 0; c < in.C; ++c)
    for (std::size_t j = 0; j < in.N; ++j) {
      if (fam == 0) in.Z(c, j) = rng.integer(-1, 1);
      else if (fam == 1) in.Z(c, j) = Rational(rng.integer(-3, 3), 4096);
      else if (fam == 2 && c > in.d) {
        Rational v = 0;
        for (std::size_t k = 0; k <= in.d; ++k) v += Rational(rng.integer(-2, 2)) * in.Z(k, j);
        in.Z(c, j) = v;
      } else in.Z(c, j) = rng.rational(9, 4);
    }
  Instance inst;
  inst.params = {{"family", names[fam]}, {"N", in.N}, {"d", in.d}, {"contexts", in.C}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const Prop2Instance&>(inst.data);
  // P Z* (N x C): column c = z_c - mean(z_c) 1.
  QMatrix PZ(in.N, in.C);
  for (std::size_t c = 0; c < in.C; ++c) {
    Rational mean = 0;
    for (std::size_t j = 0; j < in.N; ++j) mean += in.Z(c, j);
    mean /= in.N;
    for (std::size_t j = 0; j < in.N; ++j) PZ(j, c) = in.Z(c, j) - mean;
  }
  const RankCertificate rc = rank_certified(typed_matrix_from_qmat(PZ));
  InstanceResult out;
  out.figures = {{"rank_PZ", rc.rank}, {"d", in.d}};
  if (rc.rank <= in.d) {
    out.outcome = Outcome::undecided;
    out.summary = "rank(P Z*) <= d for this draw: no witness";
    return out;
  }
  nlohmann::json c{{"kind", "dana24-claim"}, {"claim", "dana24/proposition-2"}, {"verdict", "confirmed"},
                   {"N", in.N}, {"d", in.d}, {"contexts", in.C}, {"logits", qmat_to_json(in.Z)}};
  // A non-zero (d+1)-minor. The first d+1 rows and columns of the rank certificate's non-singular
  // rank x rank minor need not be one (rank > d+1): its first d+1 rows are independent, so d+1 independent
  // columns among the minor's are taken from their own rank certificate.
  const std::size_t k = in.d + 1;
  std::vector<std::size_t> rows(rc.minor_rows.begin(), rc.minor_rows.begin() + k), cols;
  QMatrix sub(k, rc.rank);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < rc.rank; ++j) sub(i, j) = PZ(rows[i], rc.minor_cols[j]);
  const RankCertificate rs = rank_certified(typed_matrix_from_qmat(sub));
  if (rs.rank != k) throw std::logic_error("proposition-2: the rank certificate's rows are not independent");
  for (std::size_t j = 0; j < k; ++j) cols.push_back(rc.minor_cols[rs.minor_cols[j]]);
  c["minor_rows"] = rows;
  c["minor_cols"] = cols;
  out.certificate = c;
  out.outcome = Outcome::confirmed;
  out.summary = "rank(P Z*) = " + std::to_string(rc.rank) + " > d = " + std::to_string(in.d) +
                ": these conditionals are not exactly representable in dimension d";
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/proposition-2",
    "If d < N - 1 there is a distribution pi with d_KL(pi, L(N,S,d)) > 0 (the d >= N - 1 half is an exact "
    "identity).",
    "exact: a non-zero (d+1)-minor of the centered logit matrix P Z*; checker kind \"dana24-claim\"",
    Expect::holds, "", 3, generate, check, search}};

}  // namespace
}  // namespace memcert::proofs
