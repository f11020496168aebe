#pragma once
// `memcert certify --arch mha` (docs/MODELS.md): one torch.nn.MultiheadAttention (batch_first; the query is
// the data set's query as a length-1 sequence, key = value = its context) with an optional `readout`
// nn.Linear, or memcert's own --weights-out arrays (weights_npz.hpp), on an attention data set
// (contexts (T, n, d), queries (T, d), labels (T, d_out) real or class_labels (T,)).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/data/float32_array.hpp"
#include "memcert/model/attention_readout.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/model/verdicts.hpp"

namespace memcert {

struct MhaModel {
  AttentionReadout net;
  std::string layout;  // "torch" (nn.MultiheadAttention keys) or "memcert" (WK WQ WV WO WD skip)
  std::size_t heads = 0;
};
// torch layout: in_proj_weight (3E, E) or q_proj_weight / k_proj_weight / v_proj_weight (E, E);
// in_proj_bias (3E,) and out_proj.bias (E,) together or neither; out_proj.weight (E, E); optional
// readout.weight (C, E) with optional readout.bias (C,). `heads` sub-heads (required, dividing E): scores
// q_h . k_h / sqrt(E / heads). memcert layout: WK, WQ (H, d, dh), WV (H, d, dv), WO (H dv, d), WD (d, d_out),
// skip () 0 or 1, and optionally the torch_* arrays --weights-out adds (shapes checked, values unused);
// `heads` 0 or H. InputError naming `file`, the key and the expected shape.
MhaModel mha_load(const StateDict& sd, std::size_t heads, const std::string& file);
// mha_load's checks of keys, dtypes and shapes on a state_dict's headers alone (StateDictLimits::screen;
// heads 0: the heads are not checked).
void mha_screen(const StateDict& headers, std::size_t heads, const std::string& file);

struct MhaData {
  std::size_t T = 0, n = 0, d = 0;
  Float32Array contexts32;           // float32 contexts as stored, or
  std::vector<double> contexts64;    // exact doubles (T n d)
  std::vector<double> queries;       // T d
  bool classification = true;
  std::vector<std::int64_t> classes;  // T
  std::size_t d_out = 0;              // regression: label columns
  std::vector<Rational> targets;      // T d_out (regression)
};
// The data set as `construct` reads it (.json or .npz); values must be exactly doubles (as for data by
// reference); labels required.
MhaData mha_read_data(const std::string& path);

void mha_check(const MhaModel& m, const MhaData& data, const std::string& data_file, const CertifyOptions& opts);
ModelVerdicts mha_certify(const MhaModel& m, const MhaData& data, const CertifyOptions& opts);

}  // namespace memcert
