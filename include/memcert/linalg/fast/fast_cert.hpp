#pragma once
// JSON certificates for the fast path's results (formats of docs/CERTIFICATES.md, re-checked by
// memcert_checker):
//  rank with the multi-prime upper side: {"kind":"rank","claim":"rank","matrix":{...},"rank_lower":r,
//    "rank_upper":r,"rank":r,"lower":{"method":"minor-mod-p",...}|{"method":"trivial"},
//    "upper":{"method":"multi-prime","primes":[...]}|{"method":"trivial"}}
//  enclosure-rank-rump (tier "double-rump"): {"kind":"enclosure-rank-rump","claim":"rank-lower-enclosure",
//    "centre":{matrix},"radius":{matrix},"rows":[k],"mu":"q","rank_lower":k,"method":"double-rump"}
//    re-run by src/checker/kinds/enclosure/check_enclosure_rump.cpp in IEEE double with the same rigorous bounds;
//  other tiers are written as kind "enclosure-rank" (exact Gram + LDL^T in the checker).
#include <nlohmann/json.hpp>

#include "memcert/linalg/fast/exact.hpp"
#include "memcert/linalg/fast/rump.hpp"

namespace memcert {

nlohmann::json multimodular_rank_certificate_to_json(const QMatrix& a, const MultimodularRankCertificate& c);
nlohmann::json enclosure_rank_fast_certificate_to_json(const DMatrix& centre, const DMatrix& radius,
                                                       const EnclosureRankCertificate& c);

}  // namespace memcert
