#pragma once
// `memcert certify --arch mahdavi24-baseline` (docs/MODELS.md): the BaselineAttention of mahdavi24's code
// (smahdavi4/attention-memorization, src/attn_models.py) -- nn.Linear embedding, the stored sinusoidal
// buffer pos_enc.pe, CustomAttention (per-head Wq, Wk, Wv, a shared Wo, scores / sqrt(d_model), key 0
// masked), nn.Linear decoder -- read at token 0, on data X (T, n+1, d_in) with labels y.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/checker/checker.hpp"
#include "memcert/data/float32_array.hpp"
#include "memcert/model/attention_readout.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/model/verdicts.hpp"

namespace memcert {

struct Mahdavi24Baseline {
  AttentionReadout net;  // embed, pe, H heads of (d_model x dh) Wq/Wk and (d_model x dv) Wv, Wo, decoder
  std::size_t max_len() const { return net.pe_rows; }
};
// Keys (shapes): embedding.weight (d_model, d_in), embedding.bias (d_model,), pos_enc.pe (max_len, d_model),
// attention.Wq / attention.Wk (H, d_model, dh), attention.Wv (H, d_model, dv), attention.Wo (H dv, d_o),
// decoder.weight (C, d_o), decoder.bias (C,); nothing else. InputError naming `file`, the key and the shape.
Mahdavi24Baseline mahdavi24_baseline_load(const StateDict& sd, const std::string& file);
// The same checks of keys, dtypes and shapes on a state_dict's headers alone (StateDictLimits::screen:
// values empty), so that a file the load would refuse is refused before its values are read.
void mahdavi24_baseline_screen(const StateDict& headers, const std::string& file);

// DATA: .npz with X (T, n+1, d_in) float16/32/64 and y (T,) integer classes or (T,) / (T, 1) float targets.
struct Mahdavi24Data {
  std::size_t T = 0, n = 0, d_in = 0;  // n context tokens (X has n + 1 per example)
  Float32Array X32;                     // float32 X as stored (in place when the file is mapped), or
  std::vector<double> X64;              // float16/float64 X widened exactly
  bool classification = true;
  std::vector<std::int64_t> classes;    // T
  std::vector<Rational> targets;        // T (regression)
  std::vector<std::size_t> y_shape;     // as stored: (T,) or (T, 1)
};
Mahdavi24Data mahdavi24_baseline_read_data(const std::string& path);

// The model's shapes against the data's (d_in, n + 1 <= max_len, classes in [0, C), C = 1 for regression,
// C > 1 for classes) and the tolerance (regression: required): InputError naming data file / option.
void mahdavi24_baseline_check(const Mahdavi24Baseline& m, const Mahdavi24Data& data, const std::string& data_file,
                              const CertifyOptions& opts);
ModelVerdicts mahdavi24_baseline_certify(const Mahdavi24Baseline& m, const Mahdavi24Data& data, const CertifyOptions& opts);

// The data arrays as the checker digests them (kind "model", role "data"): X and y with their values.
std::vector<memcert_checker::NamedArray> mahdavi24_baseline_data_arrays(const Mahdavi24Data& data);

}  // namespace memcert
