#pragma once
// Constructed multi-head attention weights as float64 arrays for numpy / PyTorch users (the exact
// weights stay in the certificate; these are their nearest doubles). Names and shapes (docs/CLI.md,
// "Weights out"), for H heads, width d, head dimension d_h, value dimension d_v, output d_out:
//   WK (H, d, d_h), WQ (H, d, d_h), WV (H, d, d_v), WO (H d_v, d), WD (d, d_out), skip () 0/1;
// the forward pass per example (E: n x d context, e: query) is
//   a_h = E WK[h] WQ[h]^T e,  p_h = E^T softmax(a_h),  o = WO^T [WV[h]^T p_h]_h (+ e if skip),  y = WD^T o.
// When H divides d and d_h, d_v <= d/H, also PyTorch's nn.MultiheadAttention(embed_dim=d, num_heads=H,
// batch_first=True) layout (query = e as a length-1 sequence, key = value = E), heads zero-padded to
// d/H and the query projection multiplied by sqrt(d/H) to cancel PyTorch's scaling:
//   torch_in_proj_weight (3d, d), torch_in_proj_bias (3d,), torch_out_proj_weight (d, d),
//   torch_out_proj_bias (d,), torch_readout_weight (d_out, d)  (nn.Linear(d, d_out, bias=False)).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memcert/model/mha.hpp"

namespace memcert {

using Float64Arrays = std::map<std::string, std::pair<std::vector<std::size_t>, std::vector<double>>>;

// The arrays above (torch_* only when the layout maps; `torch_note` then says why not, else "").
Float64Arrays mha_weights_float64_arrays(const MhaWeights& w, bool skip, std::string* torch_note = nullptr);

}  // namespace memcert
