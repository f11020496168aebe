// Constructed attention weights as float64 arrays, per head and in PyTorch's nn.MultiheadAttention layout.
#include "memcert/model/weights_npz.hpp"

#include <cmath>

namespace memcert {

namespace {

// Appends the nearest doubles of `m` (row-major).
void append_rounded(std::vector<double>& out, const QMatrix& m) {
  for (const Rational& q : m.data()) out.push_back(rational_to_double(q));
}

}  // namespace

Float64Arrays mha_weights_float64_arrays(const MhaWeights& w, bool skip, std::string* torch_note) {
  Float64Arrays a;
  const std::size_t H = w.H(), d = w.WD.rows(), dout = w.WD.cols();
  const std::size_t dh = H ? w.heads[0].WK.cols() : 0, dv = H ? w.heads[0].WV.cols() : 0;
  for (const char* name : {"WK", "WQ", "WV"}) {
    auto& arr = a[name];
    arr.first = {H, d, std::string(name) == "WV" ? dv : dh};
    for (const MhaHead& h : w.heads) append_rounded(arr.second, name[1] == 'K' ? h.WK : name[1] == 'Q' ? h.WQ : h.WV);
  }
  a["WO"].first = {w.WO.rows(), w.WO.cols()};
  append_rounded(a["WO"].second, w.WO);
  a["WD"].first = {d, dout};
  append_rounded(a["WD"].second, w.WD);
  a["skip"] = {{}, {skip ? 1.0 : 0.0}};

  std::string note;
  if (H == 0 || d % H != 0) note = "H does not divide d";
  else if (dh > d / H || dv > d / H) note = "d_h or d_v exceeds d/H (PyTorch's head dimension)";
  if (torch_note) *torch_note = note;
  if (!note.empty()) return a;
  // PyTorch: q = W_q x, k = W_k x, v = W_v x (rows of in_proj_weight), head h uses rows h*hd..(h+1)*hd-1
  // of each, logits q_h . k_h / sqrt(hd). Ours: (W_Q^T e) . (W_K^T E_j), so W_q's head block is W_Q^T
  // times sqrt(hd), W_k's is W_K^T, W_v's is W_V^T (zero rows pad d_h, d_v up to hd), and
  // out_proj.weight = W_O^T with W_O's rows placed at each head's hd-block.
  const std::size_t hd = d / H;
  const double scale = std::sqrt(static_cast<double>(hd));
  std::vector<double> in(3 * d * d, 0.0), out(d * d, 0.0), ro(dout * d, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    const MhaHead& hw = w.heads[h];
    for (std::size_t c = 0; c < dh; ++c)
      for (std::size_t k = 0; k < d; ++k) {
        in[(0 * d + h * hd + c) * d + k] = rational_to_double(hw.WQ(k, c)) * scale;
        in[(1 * d + h * hd + c) * d + k] = rational_to_double(hw.WK(k, c));
      }
    for (std::size_t c = 0; c < dv; ++c) {
      for (std::size_t k = 0; k < d; ++k) in[(2 * d + h * hd + c) * d + k] = rational_to_double(hw.WV(k, c));
      for (std::size_t k = 0; k < d; ++k) out[k * d + h * hd + c] = rational_to_double(w.WO(h * dv + c, k));
    }
  }
  for (std::size_t c = 0; c < dout; ++c)
    for (std::size_t k = 0; k < d; ++k) ro[c * d + k] = rational_to_double(w.WD(k, c));
  a["torch_in_proj_weight"] = {{3 * d, d}, in};
  a["torch_in_proj_bias"] = {{3 * d}, std::vector<double>(3 * d, 0.0)};
  a["torch_out_proj_weight"] = {{d, d}, out};
  a["torch_out_proj_bias"] = {{d}, std::vector<double>(d, 0.0)};
  a["torch_readout_weight"] = {{dout, d}, ro};
  return a;
}

}  // namespace memcert
