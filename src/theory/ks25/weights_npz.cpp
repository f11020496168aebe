// The ks25 network as float64 arrays for numpy users (docs/FORMATS.md "Weights out"). The exact network stays
// in the certificate; these are the nearest doubles of its numbers, so a float64 forward pass reproduces
// the labels only while the construction's integers and bit fields fit in 53 bits (the bit-extraction
// stages need exact arithmetic): examples/load_weights.py reports which examples it then memorizes.
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/data/matrix_io.hpp"

namespace memcert::ks25 {

namespace {
void add_net(KsFloat64Arrays& out, const std::string& name, const ReluNet& net) {
  out[name + "_layers"] = {{}, {double(net.layers.size())}};
  out[name + "_in_dim"] = {{}, {double(net.in_dim)}};
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const ReluLayer& L = net.layers[i];
    std::vector<double> w(L.W.rows() * L.W.cols()), b(L.b.size());
    for (std::size_t r = 0; r < L.W.rows(); ++r)
      for (std::size_t c = 0; c < L.W.cols(); ++c) w[r * L.W.cols() + c] = rational_to_double(L.W(r, c));
    for (std::size_t r = 0; r < L.b.size(); ++r) b[r] = rational_to_double(L.b[r]);
    out[name + "_W" + std::to_string(i)] = {{L.W.rows(), L.W.cols()}, std::move(w)};
    out[name + "_b" + std::to_string(i)] = {{L.b.size()}, std::move(b)};
  }
}
}  // namespace

KsFloat64Arrays ks_weights_float64_arrays(const KsNetwork& net) {
  KsFloat64Arrays out;
  add_net(out, "f1", net.f1);
  add_net(out, "f2", net.f2);
  std::vector<double> wov(net.WOV.rows() * net.WOV.cols());
  for (std::size_t r = 0; r < net.WOV.rows(); ++r)
    for (std::size_t c = 0; c < net.WOV.cols(); ++c) wov[r * net.WOV.cols() + c] = rational_to_double(net.WOV(r, c));
  out["WOV"] = {{net.WOV.rows(), net.WOV.cols()}, std::move(wov)};
  return out;
}

}  // namespace memcert::ks25
