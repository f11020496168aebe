#pragma once
// Exact-rational ReLU networks (ks25): the layer list of docs/CLI.md ("each layer ReLU except the last,
// which is affine"), an exact evaluator, complexity counting, and a small builder that lets each lemma
// append its layers while other live values are carried alongside.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/numeric/rational.hpp"

namespace memcert::ks25 {

// h -> W h + b (then ReLU, except for the last layer of a network).
struct ReluLayer {
  QMatrix W;  // out x in
  QVector b;  // out
};

struct ReluNet {
  std::size_t in_dim = 0;
  std::vector<ReluLayer> layers;  // empty = identity on R^in_dim
  std::size_t out_dim() const { return layers.empty() ? in_dim : layers.back().W.rows(); }
  std::size_t depth() const { return layers.size(); }
};

// Exact evaluation: ReLU after every layer but the last.
QVector relunet_eval(const ReluNet& net, const QVector& x);

// The same network with only its non-zero entries, for fast repeated exact evaluation.
class ReluNetSparse {
 public:
  explicit ReluNetSparse(const ReluNet& net);
  // Exact. A layer whose weights are all dyadic (p / 2^k) is evaluated on dyadic values m 2^-e in machine
  // integers (64-bit values, 128-bit accumulation, every product, shift and sum checked for overflow),
  // a row that would overflow in GMP integers (never rationals: no gcd); other layers, and inputs with a
  // non-dyadic coordinate, in GMP rationals until the values are dyadic again.
  QVector eval(const QVector& x) const;
  // The plain GMP-rational evaluation (the reference the dyadic route is tested against).
  QVector eval_rational(const QVector& x) const;
  // Evaluates every point (optionally on `threads` threads; GMP objects are not shared between them).
  // Point by point, layer by layer: the reference route for eval_all_shared.
  std::vector<QVector> eval_all(const std::vector<QVector>& xs, unsigned threads = 2) const;
  // What eval_all_shared did (for tests and figures).
  struct SharedStats {
    std::size_t classes = 0;     // classes of points evaluated (the first ones and every split)
    std::size_t class_rows = 0;  // (class, row) evaluations
    std::size_t point_rows = 0;  // (point, row) evaluations of per-point values
    std::size_t exact_rows = 0;  // of those, evaluated in GMP integers (a machine-integer check failed)
  };
  // The same values as eval_all, exactly, with the work of points that agree shared. Points are kept in
  // classes; within a class every unit is either one value common to all its points (evaluated once per
  // class) or a vector of per-point values m_p 2^-e in 128-bit integers, |m_p| < 2^125 (evaluated per
  // point, 128-bit sums, every bound checked). A unit that is the same for every point of a class (a ReLU that is 0 on
  // all of them, a carried value that does not depend on the point) becomes common. A per-point value
  // that does not fit the machine route is computed in GMP integers and its points are split off into
  // classes of equal values, where it is common again. Nothing about the network is assumed: a row's
  // value is a function of the values its weights read, so points that agree on those values get the
  // same result. Layers before the first all-dyadic stretch (and inputs that are not dyadic) go through
  // eval_rational's layers point by point. Classes at the same layer go through the layers together in
  // batches (a layer's weights read once per batch); the order of the work never changes a value.
  std::vector<QVector> eval_all_shared(const std::vector<QVector>& xs, unsigned threads = 2,
                                       SharedStats* stats = nullptr) const;
  // Dyadic value m 2^-e (e >= 0; normalized: m odd or e = 0); in `M` when it does not fit 64 bits.
  struct Dy {
    std::int64_t m = 0;
    long e = 0;
    bool big = false;
    Integer M;
  };

 private:
  struct Term {
    std::uint32_t col;
    int small;  // +1 / -1 when the weight is that, else 0 (then `w` holds it)
    Rational w;
    Dy dw;      // the weight as a dyadic (when the layer is dyadic)
  };
  struct Row {
    std::vector<Term> terms;
    Rational bias;
    Dy db;
  };
  struct Shared;  // the engine of eval_all_shared (relu_net.cpp)
  void eval_block(const QVector* xs, std::size_t count, QVector* out) const;
  void layer_rational(std::size_t l, const QVector& h, QVector& o) const;
  void layer_dyadic(std::size_t l, const std::vector<Dy>& h, std::vector<Dy>& o) const;
  std::size_t in_dim_ = 0;
  std::vector<std::vector<Row>> layers_;
  std::vector<char> dyadic_;  // per layer: every weight and bias dyadic
};
// q as a dyadic when its denominator is a power of two.
bool dyadic_from_rational(const Rational& q, ReluNetSparse::Dy& out);
Rational dyadic_to_rational(const ReluNetSparse::Dy& v);

// Model complexity as Theorem 4.1 counts it. parameters = every entry of every W and b (zeros too).
struct NetComplexity {
  std::size_t parameters = 0;
  std::size_t nonzero_parameters = 0;
  std::size_t depth = 0;          // number of layers
  std::size_t width = 0;          // largest layer output dimension
  std::size_t bit_complexity = 0; // max over entries p/q of max(bitlen|p|, bitlen q)
};
NetComplexity relunet_complexity(const ReluNet& net);
std::size_t rational_bits(const Rational& q);
// Combines complexities of networks run one after another (depths add, the rest max / add).
NetComplexity complexity_sequential(const NetComplexity& a, const NetComplexity& b);

// ---- builder -------------------------------------------------------------------------------------
// An affine function of the units of the layer built last (or of the network input before the first
// layer): sum_j c_j h_j + bias.
struct Lin {
  std::map<std::size_t, Rational> c;
  Rational bias = 0;

  static Lin constant(const Rational& v) {
    Lin l;
    l.bias = v;
    return l;
  }
  static Lin var(std::size_t j) {
    Lin l;
    l.c[j] = 1;
    return l;
  }
  bool is_constant() const { return c.empty(); }
  Lin& operator+=(const Lin& o);
  Lin& operator-=(const Lin& o);
  Lin& operator*=(const Rational& s);
  friend Lin operator+(Lin a, const Lin& b) { return a += b; }
  friend Lin operator-(Lin a, const Lin& b) { return a -= b; }
  friend Lin operator*(const Rational& s, Lin a) { return a *= s; }
  friend Lin operator+(Lin a, const Rational& v) {
    a.bias += v;
    return a;
  }
  friend Lin operator-(Lin a, const Rational& v) {
    a.bias -= v;
    return a;
  }
};

class NetBuilder {
 public:
  explicit NetBuilder(std::size_t in_dim);
  // The i-th network input (only meaningful before the first layer is added).
  Lin input(std::size_t i) const { return Lin::var(i); }
  std::vector<Lin> inputs() const;
  // Appends a ReLU layer with units ReLU(pre[i]); every non-constant Lin in `carry` becomes a unit
  // ReLU(*l) too and is rewritten as that unit. A carried value passes unchanged only where it is >= 0:
  // callers carry only quantities that are non-negative on the inputs the construction is proved for.
  std::vector<Lin> relu(const std::vector<Lin>& pre, const std::vector<Lin*>& carry = {});
  // The final affine layer; returns the network (the builder is spent).
  ReluNet finish(const std::vector<Lin>& outputs);
  std::size_t layers() const { return net_.layers.size(); }

 private:
  std::size_t cur_dim_;
  ReluNet net_;
};

}  // namespace memcert::ks25
