#pragma once
// ks25's token-wise networks f1, f2 (layer lists: ReLU after every layer but the last), read from a
// certificate with their exact weights, and evaluated exactly.
#include <cstddef>
#include <string>
#include <vector>

#include "kernel/read.hpp"

namespace memcert_checker {

struct KsTerm {
  std::size_t col;
  mpq_class w;
};
struct KsLayer {
  std::size_t in = 0, out = 0;
  std::vector<std::vector<KsTerm>> rows;  // non-zero terms
  QRow bias;
};
struct KsNet {
  std::vector<KsLayer> layers;
  std::size_t parameters = 0, nonzero = 0, width = 0, bits = 0;
};

// The larger of the bit sizes of q's numerator and denominator (0 for 0 and for integers' denominators).
std::size_t ks_qbits(const mpq_class& q);
// "where[i]".
std::string ks_at(const std::string& where, std::size_t i);
// Reads a layer list with input dimension `in` (named `where` in messages); accumulates the certificate's
// checksum sum_p p * value with the running position `pos` over W (row-major) then b, layer by layer.
bool ks_read_net(const Value& v, const std::string& where, std::size_t in, KsNet& net, mpq_class& checksum,
                 unsigned long& pos, std::string& why);
// The output dimension (`in` for an empty list).
std::size_t ks_net_out(const KsNet& n, std::size_t in);
// The network applied to x, exactly.
QRow ks_eval(const KsNet& net, const QRow& x);

}  // namespace memcert_checker
