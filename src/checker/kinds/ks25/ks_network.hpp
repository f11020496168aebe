#pragma once
// ks25's token-wise networks f1, f2 (layer lists: ReLU after every layer but the last), read from a
// certificate with their exact weights, and evaluated exactly.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/read.hpp"

namespace memcert_checker {

// A dyadic number m 2^-e (e >= 0, normalized: m odd or e = 0); in `M` when m does not fit 64 bits.
struct KsDy {
  std::int64_t m = 0;
  long e = 0;
  bool big = false;
  mpz_class M;
};
struct KsTerm {
  std::size_t col;
  mpq_class w;
  KsDy dw;  // w as a dyadic (when the layer is dyadic)
};
struct KsLayer {
  std::size_t in = 0, out = 0;
  std::vector<std::vector<KsTerm>> rows;  // non-zero terms
  QRow bias;
  std::vector<KsDy> dbias;
  bool dyadic = true;  // every weight and bias is p / 2^k
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
// The network applied to x, exactly: dyadic layers on dyadic values in machine integers (64-bit values,
// 128-bit sums, every product, shift and sum checked for overflow; a row that would overflow in GMP
// integers), everything else in GMP rationals (ks_eval_rational).
QRow ks_eval(const KsNet& net, const QRow& x);
QRow ks_eval_rational(const KsNet& net, const QRow& x);
// ks_eval on count points at once, layer by layer (the layer's weights stay in cache across the block);
// with first > 0, xs are the values after layer first - 1 and the layers from `first` on are applied.
void ks_eval_block(const KsNet& net, const QRow* const* xs, std::size_t count, QRow* out, std::size_t first = 0);
// ks_eval_block over all of xs in blocks of 64 on `threads` threads (the reference route).
void ks_eval_many(const KsNet& net, const std::vector<const QRow*>& xs, std::vector<QRow>& out, std::size_t first,
                  unsigned threads);
// The network on every point of xs, exactly, sharing the work between points (ks_shared.cpp): equal to
// ks_eval on each point. When every row of the first layer is a multiple of one vector g, the network is
// evaluated as a function of t = g . x with every neuron's values over the points sorted by t kept as
// pieces a t + b (dyadic), ReLUs split at exact sign changes; otherwise, from a layer that is not dyadic,
// or once a layer's pieces outnumber 3 per point, point by point (ks_eval_many). With threads > 1 the sorted
// points are cut into up to 2 * threads contiguous ranges of at least min_range points, each evaluated on
// its own on the threads (parallel_for): the values do not depend on the cut (every one is exact).
struct KsSharedStats {
  bool shared = false;             // the pieces route ran (from layer 0)
  std::size_t points = 0;          // distinct t
  std::size_t max_pieces = 0;      // the most pieces of one layer (in one range)
  std::size_t pointwise_from = 0;  // the first layer evaluated point by point (in any range; the depth when none)
};
std::vector<QRow> ks_eval_shared(const KsNet& net, const std::vector<const QRow*>& xs, unsigned threads,
                                 KsSharedStats* stats = nullptr, std::size_t min_range = 1024);
// A certificate's "data": {"file", "digest"} (ks_data.cpp): the referenced file's N sequences of n tokens
// (as indices into the certificate's tokens `tok`, matched by value; N x n, row-major) and labels (N, or N x n for
// seq-to-seq, each in [0, C)), read through the context's KsArraysSupplier; its digest recomputed.
bool ks_read_referenced(const Value& data, std::size_t N, std::size_t n, std::size_t d, bool s2s, std::size_t C,
                        const std::vector<QRow>& tok, std::vector<std::uint32_t>& seq,
                        std::vector<std::size_t>& label, std::string& why);
// min over pairs a < b of |rows[a] - rows[b]|^2 (rows.size() >= 2, each of length d), exactly, on `threads`
// threads (ks_separation.cpp): in machine integers over the rows' common denominator when every step fits,
// else as ks_min_sq_distance_rational (GMP rationals, pair by pair). Both return the same number;
// machine_integers, when given, says which route ran.
mpq_class ks_min_sq_distance(const std::vector<QRow>& rows, std::size_t d, unsigned threads,
                             bool* machine_integers = nullptr);
mpq_class ks_min_sq_distance_rational(const std::vector<QRow>& rows, std::size_t d, unsigned threads);
// q as a dyadic when its denominator is a power of two.
bool ks_dyadic(const mpq_class& q, KsDy& out);

}  // namespace memcert_checker
