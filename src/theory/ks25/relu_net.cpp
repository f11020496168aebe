// Exact ReLU networks: evaluation, complexity, builder.
#include "memcert/theory/ks25/relu_net.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace memcert::ks25 {

QVector relunet_eval(const ReluNet& net, const QVector& x) {
  if (x.size() != net.in_dim) throw std::invalid_argument("relunet_eval: input dimension mismatch");
  QVector h = x;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const ReluLayer& L = net.layers[l];
    QVector o(L.W.rows());
    for (std::size_t i = 0; i < L.W.rows(); ++i) {
      Rational s = L.b[i];
      for (std::size_t j = 0; j < L.W.cols(); ++j)
        if (sgn(L.W(i, j)) != 0) s += L.W(i, j) * h[j];
      if (l + 1 < net.layers.size() && sgn(s) < 0) s = 0;
      o[i] = std::move(s);
    }
    h = std::move(o);
  }
  return h;
}

ReluNetSparse::ReluNetSparse(const ReluNet& net) : in_dim_(net.in_dim) {
  layers_.resize(net.layers.size());
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const ReluLayer& L = net.layers[l];
    auto& rows = layers_[l];
    rows.resize(L.W.rows());
    for (std::size_t i = 0; i < L.W.rows(); ++i) {
      rows[i].bias = L.b[i];
      for (std::size_t j = 0; j < L.W.cols(); ++j) {
        const Rational& w = L.W(i, j);
        if (sgn(w) == 0) continue;
        Term t{static_cast<std::uint32_t>(j), 0, 0};
        if (w == 1) t.small = 1;
        else if (w == -1) t.small = -1;
        else t.w = w;
        rows[i].terms.push_back(std::move(t));
      }
    }
  }
}

QVector ReluNetSparse::eval(const QVector& x) const {
  if (x.size() != in_dim_) throw std::invalid_argument("ReluNetSparse::eval: input dimension mismatch");
  QVector h = x, o;
  Rational tmp;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& rows = layers_[l];
    o.assign(rows.size(), Rational(0));
    const bool last = l + 1 == layers_.size();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Rational& s = o[i];
      s = rows[i].bias;
      for (const Term& t : rows[i].terms) {
        const Rational& v = h[t.col];
        if (sgn(v) == 0) continue;
        if (t.small == 1) s += v;
        else if (t.small == -1) s -= v;
        else {
          mpq_mul(tmp.get_mpq_t(), t.w.get_mpq_t(), v.get_mpq_t());
          s += tmp;
        }
      }
      if (!last && sgn(s) < 0) s = 0;
    }
    std::swap(h, o);
  }
  return h;
}

std::vector<QVector> ReluNetSparse::eval_all(const std::vector<QVector>& xs, unsigned threads) const {
  std::vector<QVector> out(xs.size());
  if (threads <= 1 || xs.size() < 8) {
    for (std::size_t i = 0; i < xs.size(); ++i) out[i] = eval(xs[i]);
    return out;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t]() {
      for (std::size_t i = t; i < xs.size(); i += threads) out[i] = eval(xs[i]);
    });
  for (auto& th : pool) th.join();
  return out;
}

std::size_t rational_bits(const Rational& q) {
  std::size_t a = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t b = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(a, b);
}

NetComplexity relunet_complexity(const ReluNet& net) {
  NetComplexity c;
  c.depth = net.layers.size();
  for (const auto& L : net.layers) {
    c.parameters += L.W.rows() * L.W.cols() + L.b.size();
    c.width = std::max(c.width, L.W.rows());
    for (const auto& w : L.W.data())
      if (sgn(w) != 0) {
        ++c.nonzero_parameters;
        c.bit_complexity = std::max(c.bit_complexity, rational_bits(w));
      }
    for (const auto& w : L.b)
      if (sgn(w) != 0) {
        ++c.nonzero_parameters;
        c.bit_complexity = std::max(c.bit_complexity, rational_bits(w));
      }
  }
  return c;
}

NetComplexity complexity_sequential(const NetComplexity& a, const NetComplexity& b) {
  NetComplexity c;
  c.parameters = a.parameters + b.parameters;
  c.nonzero_parameters = a.nonzero_parameters + b.nonzero_parameters;
  c.depth = a.depth + b.depth;
  c.width = std::max(a.width, b.width);
  c.bit_complexity = std::max(a.bit_complexity, b.bit_complexity);
  return c;
}

// ---- Lin -------------------------------------------------------------------------------------------
Lin& Lin::operator+=(const Lin& o) {
  for (const auto& [j, v] : o.c) {
    auto it = c.find(j);
    if (it == c.end()) c.emplace(j, v);
    else {
      it->second += v;
      if (sgn(it->second) == 0) c.erase(it);
    }
  }
  bias += o.bias;
  return *this;
}
Lin& Lin::operator-=(const Lin& o) {
  Lin neg = o;
  neg *= Rational(-1);
  return *this += neg;
}
Lin& Lin::operator*=(const Rational& s) {
  if (sgn(s) == 0) {
    c.clear();
    bias = 0;
    return *this;
  }
  for (auto& kv : c) kv.second *= s;
  bias *= s;
  return *this;
}

// ---- builder ---------------------------------------------------------------------------------------
NetBuilder::NetBuilder(std::size_t in_dim) : cur_dim_(in_dim) { net_.in_dim = in_dim; }

std::vector<Lin> NetBuilder::inputs() const {
  std::vector<Lin> v;
  for (std::size_t i = 0; i < cur_dim_; ++i) v.push_back(Lin::var(i));
  return v;
}

namespace {
ReluLayer layer_from(const std::vector<const Lin*>& rows, std::size_t in_dim) {
  ReluLayer L;
  L.W = QMatrix(rows.size(), in_dim, Rational(0));
  L.b.assign(rows.size(), Rational(0));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& [j, v] : rows[i]->c) {
      if (j >= in_dim) throw std::logic_error("NetBuilder: a Lin refers to a unit of an older layer");
      L.W(i, j) = v;
    }
    L.b[i] = rows[i]->bias;
  }
  return L;
}
}  // namespace

std::vector<Lin> NetBuilder::relu(const std::vector<Lin>& pre, const std::vector<Lin*>& carry) {
  std::vector<const Lin*> rows;
  for (const auto& l : pre) rows.push_back(&l);
  std::vector<Lin*> carried;
  for (Lin* l : carry)
    if (!l->is_constant()) {
      rows.push_back(l);
      carried.push_back(l);
    }
  net_.layers.push_back(layer_from(rows, cur_dim_));
  cur_dim_ = rows.size();
  std::vector<Lin> out;
  for (std::size_t i = 0; i < pre.size(); ++i) out.push_back(Lin::var(i));
  for (std::size_t i = 0; i < carried.size(); ++i) *carried[i] = Lin::var(pre.size() + i);
  return out;
}

ReluNet NetBuilder::finish(const std::vector<Lin>& outputs) {
  std::vector<const Lin*> rows;
  for (const auto& l : outputs) rows.push_back(&l);
  net_.layers.push_back(layer_from(rows, cur_dim_));
  cur_dim_ = outputs.size();
  return std::move(net_);
}

}  // namespace memcert::ks25
