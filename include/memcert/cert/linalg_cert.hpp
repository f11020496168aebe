#pragma once
// JSON certificates for exact linear algebra (docs/THEORY.md section 7), re-checked by memcert_checker.
// Exact numbers are JSON strings ("3", "-7/12"); indices and sizes are JSON integers; primes are strings.
//
//  rank:    {"kind":"rank","claim":"rank","matrix":{"rows","cols","data"},"rank_lower":k,"rank_upper":u,
//            "lower":{"method":"minor-mod-p","prime":"p","rows":[k],"cols":[k]},
//            "upper":{"method":"kernel","kernel":[n-u vectors of length n],"free_rows":[n-u]}
//                  | {"method":"trivial"} (u = min(m, n))}
//  kruskal: {"kind":"kruskal","claim":"kruskal-rank","vectors":{matrix},"kruskal_lower":k,
//            "lower":{"method":"exhaustive-mod-p","prime":"p"},"kruskal_upper":u,
//            "upper":{"method":"dependent-subset","subset":[u+1],"coefficients":[u+1 strings]}
//                  | {"method":"trivial"} (u = min(count, dim))}
//  enclosure-rank: {"kind":"enclosure-rank","claim":"rank-lower-enclosure","centre":{matrix},
//            "radius":{matrix},"rows":[k],"mu":"q","rank_lower":k}
//  rank with the multi-prime upper side: {"kind":"rank","claim":"rank","matrix":{...},"rank_lower":r,
//    "rank_upper":r,"rank":r,"lower":{"method":"minor-mod-p",...}|{"method":"trivial"},
//    "upper":{"method":"multi-prime","primes":[...]}|{"method":"trivial"}}
//  enclosure-rank-rump (tier "double-rump"): {"kind":"enclosure-rank-rump","claim":"rank-lower-enclosure",
//    "centre":{matrix},"radius":{matrix},"rows":[k],"mu":"q","rank_lower":k,"method":"double-rump"}
//    re-run by the checker in IEEE double with the same rigorous bounds; the other tiers of
//    enclosure_rank_lower_fast are written as kind "enclosure-rank" (exact Gram + LDL^T in the checker).
#include <nlohmann/json.hpp>

#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/qmat/qmat.hpp"

namespace memcert {

// The two-sided rank certificate `c` of `a` (qmat_rank_certified or rank_certified). The upper side is
// "trivial" when rank = min(rows, cols), else the kernel basis (the columns of c.kernel, written as
// vectors) or the primes of a multi-prime certificate.
nlohmann::json rank_certificate_to_json(const QMatrix& a, const RankCertificate& c);

// The rank certificate of rank_certified(a) as JSON text (one line, newline-terminated): the "trivial" or
// "multi-prime" upper side above, or the kernel form above. The matrix is written straight
// from its typed storage (no JSON tree of millions of strings): int64 as integers, doubles as their
// exact dyadic value "m/2^k", both as strings like every exact number.
std::string rank_certificate_text(const TypedMatrix& a, const RankCertificate& c);
// {"rows":m,"cols":n,"data":[[...],...]} of exact strings, from typed storage.
std::string typed_matrix_json_text(const TypedMatrix& a);

// Kruskal-rank bounds of the rows of `vectors` (r = qmat_kruskal_rank(vectors) or a refinement of it).
// Throws std::invalid_argument when r.upper < min(count, dim) comes without its dependent subset.
nlohmann::json kruskal_certificate_to_json(const QMatrix& vectors, const KruskalResult& r);

// Lemma 5: rank A >= |c.rows| for every A in [centre - radius, centre + radius].
nlohmann::json enclosure_rank_certificate_to_json(const QMatrix& centre, const QMatrix& radius,
                                                  const EnclosureRankCertificate& c);

nlohmann::json multimodular_rank_certificate_to_json(const QMatrix& a, const RankCertificate& c);
nlohmann::json enclosure_rank_fast_certificate_to_json(const DMatrix& centre, const DMatrix& radius,
                                                       const EnclosureRankCertificate& c);

}  // namespace memcert
