// ks25's token-wise networks: reading (with the certificate's checksum) and exact evaluation.
#include "kinds/ks25/ks_network.hpp"

#include <algorithm>

namespace memcert_checker {

std::string ks_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

std::size_t ks_qbits(const mpq_class& q) {
  std::size_t a = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t b = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(a, b);
}

bool ks_read_net(const Value& v, const std::string& where, std::size_t in, KsNet& net, mpq_class& checksum,
                 unsigned long& pos, std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array of layers"; return false; }
  std::size_t cur = in;
  for (std::size_t l = 0; l < v.items.size(); ++l) {
    const std::string w = ks_at(where, l);
    const Value* W = member(v.items[l], w, "W", json::Type::Array, why);
    if (!W) return false;
    const Value* b = member(v.items[l], w, "b", json::Type::Array, why);
    if (!b) return false;
    KsLayer L;
    L.in = cur;
    L.out = W->items.size();
    if (L.out == 0) { why = w + ".W: a layer needs at least one row"; return false; }
    L.rows.resize(L.out);
    QRow row;
    for (std::size_t i = 0; i < L.out; ++i) {
      if (!read_rational_vector(W->items[i], ks_at(w + ".W", i), cur, row, why)) return false;
      for (std::size_t j = 0; j < cur; ++j) {
        ++pos;
        if (sgn(row[j]) != 0) {
          checksum += row[j] * mpq_class(pos);
          ++net.nonzero;
          net.bits = std::max(net.bits, ks_qbits(row[j]));
          L.rows[i].push_back({j, row[j]});
        }
      }
    }
    if (!read_rational_vector(*b, w + ".b", L.out, L.bias, why)) return false;
    for (const auto& x : L.bias) {
      ++pos;
      if (sgn(x) != 0) {
        checksum += x * mpq_class(pos);
        ++net.nonzero;
        net.bits = std::max(net.bits, ks_qbits(x));
      }
    }
    net.parameters += L.out * cur + L.out;
    net.width = std::max(net.width, L.out);
    cur = L.out;
    net.layers.push_back(std::move(L));
  }
  return true;
}

std::size_t ks_net_out(const KsNet& n, std::size_t in) { return n.layers.empty() ? in : n.layers.back().out; }

QRow ks_eval(const KsNet& net, const QRow& x) {
  QRow h = x, o;
  mpq_class t;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const KsLayer& L = net.layers[l];
    o.assign(L.out, mpq_class(0));
    for (std::size_t i = 0; i < L.out; ++i) {
      o[i] = L.bias[i];
      for (const KsTerm& term : L.rows[i]) {
        t = term.w * h[term.col];
        o[i] += t;
      }
      if (l + 1 < net.layers.size() && sgn(o[i]) < 0) o[i] = 0;
    }
    std::swap(h, o);
  }
  return h;
}

}  // namespace memcert_checker
