// Tensors of a kind "model" certificate for the checker (model_tensors.hpp).
#include "model_tensors.hpp"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <set>

#include "attention_arrays.hpp"
#include "command.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {

std::string referenced_path(const std::string& file, const std::string& cert) {
  std::string path = file;
  const auto slash = cert.rfind('/');
  if (!file.empty() && file[0] != '/' && ::access(file.c_str(), R_OK) != 0 && slash != std::string::npos)
    path = cert.substr(0, slash + 1) + file;
  return path;
}

namespace {
constexpr double kTwo53 = 9007199254740992.0;

memcert_checker::NamedArray from_ints(const std::string& name, const std::vector<std::size_t>& shape,
                                      const std::vector<std::int64_t>& v, const std::string& path) {
  memcert_checker::NamedArray a;
  a.name = name;
  a.shape = shape;
  a.values.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = static_cast<double>(v[i]);
    if (!(std::fabs(x) <= kTwo53))
      throw input_error(path, name, "expected integers of at most 2^53 in absolute value");
    a.values[i] = x;
  }
  return a;
}

// Whether `key` is one the checker's architecture `arch` reads (forward_*.cpp), by name alone: a key no
// certificate of the architecture can use is refused before any tensor's values are read.
bool checker_key(const std::string& arch, const std::string& key) {
  static const std::set<std::string> mahdavi = {"embedding.weight", "embedding.bias", "pos_enc.pe", "attention.Wq",
                                                "attention.Wk", "attention.Wv", "attention.Wo", "decoder.weight",
                                                "decoder.bias"};
  static const std::set<std::string> mha = {"WK", "WQ", "WV", "WO", "WD", "skip", "torch_in_proj_weight",
                                            "torch_in_proj_bias", "torch_out_proj_weight", "torch_out_proj_bias",
                                            "torch_readout_weight", "in_proj_weight", "in_proj_bias", "out_proj.weight",
                                            "out_proj.bias", "readout.weight", "readout.bias", "q_proj_weight",
                                            "k_proj_weight", "v_proj_weight"};
  static const std::set<std::string> dana = {"word_emb.weight", "unemb.weight", "pos_emb.weight", "attn_mask",
                                             "linear_compress.weight", "linear_decompress.weight"};
  if (arch == "mahdavi24-baseline") return mahdavi.count(key) > 0;
  if (arch == "mha") return mha.count(key) > 0;
  if (arch != "dana24-aot") return true;
  if (dana.count(key)) return true;
  // attn_seq.<l>.<p>.<leaf> and mlp_seq.<l>.<leaf>, <l> and <p> decimal.
  auto number = [&](std::size_t& i) {
    const std::size_t from = i;
    while (i < key.size() && key[i] >= '0' && key[i] <= '9') ++i;
    if (i == from || i >= key.size() || key[i] != '.') return false;
    ++i;
    return true;
  };
  std::size_t i = 0;
  if (key.rfind("attn_seq.", 0) == 0) {
    i = 9;
    if (!number(i) || !number(i)) return false;
    const std::string leaf = key.substr(i);
    return leaf == "in_proj_weight" || leaf == "in_proj_bias" || leaf == "out_proj.weight" || leaf == "out_proj.bias";
  }
  if (key.rfind("mlp_seq.", 0) == 0) {
    i = 8;
    if (!number(i)) return false;
    const std::string leaf = key.substr(i);
    return leaf == "0.weight" || leaf == "0.bias" || leaf == "2.weight";
  }
  return false;
}

std::vector<memcert_checker::NamedArray> read_model(const std::string& path, const std::string& arch) {
  StateDictLimits limits;
  limits.screen = [&](const StateDict& headers) {
    for (const auto& [key, t] : headers.entries())
      if (!checker_key(arch, key))
        throw input_error(path, printable_argument(key),
                          "unexpected tensor for --arch " + arch + " (expected only the keys of docs/MODELS.md)");
  };
  const StateDict sd = state_dict_read(path, limits);
  std::vector<memcert_checker::NamedArray> out;
  out.reserve(sd.size());
  for (const auto& [key, t] : sd.entries()) {
    if (!dtype_is_float(t.dtype)) {
      out.push_back(from_ints(key, t.shape, t.i64, path));
      continue;
    }
    memcert_checker::NamedArray a;
    a.name = key;
    a.shape = t.shape;
    a.values = t.f64;
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<memcert_checker::NamedArray> read_data(const std::string& path, const std::string& arch) {
  if (path_extension_lower(path) != ".npz")
    throw input_error(path, "", "expected a .npz data file for --arch " + arch);
  std::vector<std::string> names;
  if (arch == "mahdavi24-baseline") names = {"X", "y"};
  else if (arch == "dana24-aot") names = {"sequences", "next"};
  else throw input_error(path, "", "expected the data of a mahdavi24-baseline or dana24-aot certificate");
  NpzSelect select;  // the other members are never read
  select.want = [&](const std::string& name) { return name == names[0] || name == names[1]; };
  std::map<std::string, TypedArray> arrays = npz_read_typed(path, /*keep_float32=*/true, select);
  std::vector<memcert_checker::NamedArray> out;
  for (const std::string& name : names) {
    auto it = arrays.find(name);
    if (it == arrays.end()) throw input_error(path, name, "missing (expected arrays " + names[0] + " and " + names[1] + ")");
    TypedArray& t = it->second;
    if (t.storage == Storage::int64) {
      out.push_back(from_ints(name, t.shape, t.i64, path));
      continue;
    }
    if (t.storage != Storage::float64) throw input_error(path, name, "expected integers of at most 64 bits or floats");
    memcert_checker::NamedArray a;
    a.name = name;
    a.shape = t.shape;
    if (t.f32.size() > 0) {
      a.values_f32.resize(t.f32.size());
      for (std::size_t i = 0; i < t.f32.size(); ++i) a.values_f32[i] = t.f32.data()[i].value();
    } else {
      a.values = std::move(t.f64);
    }
    out.push_back(std::move(a));
  }
  return out;
}
}  // namespace

memcert_checker::TensorsSupplier model_tensors_supplier(const std::string& cert) {
  return [cert](const std::string& file, const std::string& role, const std::string& arch,
                std::vector<memcert_checker::NamedArray>& out, std::string& error) {
    try {
      const std::string path = referenced_path(file, cert);
      const std::string what = role == "model" ? "model.file" : "data.file";
      if (path.find('\0') != std::string::npos)
        throw InputError(what + ": expected a file name without NUL bytes, got " + printable_argument(path));
      if (::access(path.c_str(), R_OK) != 0)
        throw InputError(path + ": cannot open (the " + (role == "model" ? "model" : "data") + " file the certificate references)");
      out = role == "model" ? read_model(path, arch) : read_data(path, arch);
      return true;
    } catch (const InputError& e) {
      error = e.what();
      return false;
    }
  };
}

int checker_accepts_model_before_write(const std::string& tmp, const std::string& cert_dest) {
  memcert_checker::Budget budget;  // the engine checks what it just built: no time limit
  const memcert_checker::ArraysSupplier arrays = attention_arrays_supplier("", cert_dest);
  const memcert_checker::Verdict v =
      memcert_checker::verify_certificate_file(tmp, budget, model_tensors_supplier(cert_dest), &arrays);
  if (v.valid) return 1;
  std::cerr << "memcert: undecided: the independent checker did not " << (v.undecided ? "finish" : "accept the certificate")
            << ": " << v.reason << " (nothing written)\n";
  return -1;
}

}  // namespace memcert::cli
