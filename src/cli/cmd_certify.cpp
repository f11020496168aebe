// memcert certify MODEL DATA --arch NAME [--heads K] [--tolerance TOL] [--out CERT] [--margins-out FILE.npz] [--json]
// Which examples of DATA a trained model gets right, in exact arithmetic (docs/MODELS.md, docs/CLI.md). JSON:
//   {"arch","task","T","certified_correct","certified_wrong","undecided","wrong":[t...],"undecided_examples":[t...],
//    "float32_disagreements":[t...],"min_margin" (classification) | "max_error" (regression),"decided_by",
//    "heads" (mha, dana24-aot),"certificate","verified","margins_out","seconds"}
// Exit: 0 every example certified correct, 1 some certified wrong, 3 none wrong but some undecided, 2 bad
// input (one line, nothing written). Under mpirun (a build with MPI) the examples are shared out among the
// ranks and rank 0 merges: the same output and certificate as one process (apart from "seconds").
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>

#include "command.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/model/mahdavi24_baseline.hpp"
#include "memcert/model/mha_model.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/model/verdicts.hpp"
#include "memcert/util/error.hpp"
#include "memcert/model/dana24_aot.hpp"
#include "memcert/util/progress.hpp"
#include "attention_arrays.hpp"
#include "model_tensors.hpp"
#include <limits>
#include "sweep_mpi.hpp"

namespace memcert::cli {
namespace cmd_certify {

struct Args {
  std::string model, data, arch, tolerance, out, margins_out;
  std::size_t heads = 0;
  bool json = false;
};

// What the command needs of an architecture once its model and data are read and checked.
struct Job {
  std::size_t T = 0;
  bool classification = true;
  bool heads_in_certificate = false;
  std::size_t heads = 0;
  std::function<ModelVerdicts(const CertifyOptions&)> certify;
  std::function<std::string()> data_digest;  // memcert_checker digest of the data (kind "model", "data.digest")
};
using JobSetup = Job (*)(const StateDict& sd, const Args& a, const CertifyOptions& opts);

std::string digest_or_throw(const std::vector<memcert_checker::NamedArray>& arrays, const std::string& file) {
  std::string d = memcert_checker::tensors_digest(arrays);
  if (d.empty()) throw input_error(file, "", "expected finite values with distinct names (the digest of the tensors)");
  return d;
}

// The keys, dtypes and shapes of the model file checked against the architecture before any value is
// read (StateDictLimits::screen).
using ArchScreen = void (*)(const StateDict& headers, const Args& a);

void mahdavi24_no_heads(const Args& a) {
  if (a.heads) throw InputError("--heads: not an option of --arch mahdavi24-baseline (H is attention.Wq's first dimension)");
}
void screen_mahdavi24(const StateDict& h, const Args& a) {
  mahdavi24_no_heads(a);
  mahdavi24_baseline_screen(h, a.model);
}
void screen_mha(const StateDict& h, const Args& a) { mha_screen(h, a.heads, a.model); }
void screen_dana24_aot(const StateDict& h, const Args& a) { dana24_aot_screen(h, a.heads, a.model); }

Job setup_mahdavi24(const StateDict& sd, const Args& a, const CertifyOptions& opts) {
  mahdavi24_no_heads(a);
  auto model = std::make_shared<Mahdavi24Baseline>(mahdavi24_baseline_load(sd, a.model));
  auto data = std::make_shared<Mahdavi24Data>(mahdavi24_baseline_read_data(a.data));
  mahdavi24_baseline_check(*model, *data, a.data, opts);
  Job j;
  j.T = data->T;
  j.classification = data->classification;
  j.certify = [model, data](const CertifyOptions& o) { return mahdavi24_baseline_certify(*model, *data, o); };
  const std::string file = a.data;
  j.data_digest = [data, file] { return digest_or_throw(mahdavi24_baseline_data_arrays(*data), file); };
  return j;
}

Job setup_mha(const StateDict& sd, const Args& a, const CertifyOptions& opts) {
  auto model = std::make_shared<MhaModel>(mha_load(sd, a.heads, a.model));
  auto data = std::make_shared<MhaData>(mha_read_data(a.data));
  mha_check(*model, *data, a.data, opts);
  Job j;
  j.T = data->T;
  j.classification = data->classification;
  j.heads_in_certificate = true;
  j.heads = model->heads;
  j.certify = [model, data](const CertifyOptions& o) { return mha_certify(*model, *data, o); };
  const std::string file = a.data;
  // attention_arrays_digest (v2) of the file as data by reference reads it: contexts, queries, labels.
  j.data_digest = [file] {
    const memcert_checker::AttentionArrays arr = attention_arrays_read(file);
    return memcert_checker::attention_arrays_digest(arr, arr.T);
  };
  return j;
}

Job setup_dana24_aot(const StateDict& sd, const Args& a, const CertifyOptions&) {
  auto model = std::make_shared<Dana24Aot>(dana24_aot_load(sd, a.heads, a.model));
  auto data = std::make_shared<Dana24AotData>(dana24_aot_read_data(a.data));
  Job j;
  j.T = data->T;
  j.classification = true;
  j.heads_in_certificate = true;
  j.heads = a.heads;
  j.certify = [model, data](const CertifyOptions& o) { return dana24_aot_certify(*model, *data, o); };
  const std::string file = a.data;
  j.data_digest = [data, file] {
    std::vector<memcert_checker::NamedArray> arr(2);
    arr[0].name = "next";
    arr[0].shape = {data->T};
    arr[0].values.assign(data->next.begin(), data->next.end());
    arr[1].name = "sequences";
    arr[1].shape = {data->T, data->S};
    arr[1].values.assign(data->sequences.begin(), data->sequences.end());
    return digest_or_throw(arr, file);
  };
  return j;
}

// THE DISPATCH POINT: one line per architecture (name as --arch spells it, its setup).
struct ArchEntry {
  const char* name;
  JobSetup setup;
  ArchScreen screen;
};
const ArchEntry kArchs[] = {
    {"mahdavi24-baseline", setup_mahdavi24, screen_mahdavi24},
    {"mha", setup_mha, screen_mha},
    {"dana24-aot", setup_dana24_aot, screen_dana24_aot},
};

std::string arch_names() {
  std::string s;
  for (const ArchEntry& e : kArchs) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

// q rounded to at most 6 significant decimal digits, downward or upward, as exact decimal text.
std::string decimal6(const Rational& q, bool upward) {
  if (q == 0) return "0";
  Rational a = abs(q);
  long e = long(std::floor((double(mpz_sizeinbase(a.get_num_mpz_t(), 2)) - double(mpz_sizeinbase(a.get_den_mpz_t(), 2))) * 0.30103));
  auto scaled = [&](long k) {  // q 10^k exactly
    Integer p;
    mpz_ui_pow_ui(p.get_mpz_t(), 10, static_cast<unsigned long>(k >= 0 ? k : -k));
    return k >= 0 ? Rational(q * p) : Rational(q / p);
  };
  long k = 5 - e;  // want 10^5 <= |q| 10^k < 10^6
  for (int it = 0; it < 8; ++it) {
    const Rational s = abs(scaled(k));
    if (s < 100000) ++k;
    else if (s >= 1000000) --k;
    else break;
  }
  const Rational s = scaled(k);
  Integer m;
  if (upward) mpz_cdiv_q(m.get_mpz_t(), s.get_num_mpz_t(), s.get_den_mpz_t());
  else mpz_fdiv_q(m.get_mpz_t(), s.get_num_mpz_t(), s.get_den_mpz_t());
  while (m != 0 && m % 10 == 0) m /= 10, --k;
  // m 10^-k as a person writes it: "0.00165843", "2.5", "120", else "1.65843e-15".
  const std::string sign = m < 0 ? "-" : "";
  std::string digits = Integer(abs(m)).get_str();
  const long nd = long(digits.size());
  if (k <= 0 && k >= -6) return sign + digits + std::string(std::size_t(-k), '0');
  if (k > 0 && k <= 12) {
    if (nd <= k) digits = std::string(std::size_t(k - nd + 1), '0') + digits;
    const std::size_t point = digits.size() - std::size_t(k);
    return sign + digits.substr(0, point) + "." + digits.substr(point);
  }
  return sign + digits.substr(0, 1) + (nd > 1 ? "." + digits.substr(1) : "") + "e" + std::to_string(nd - 1 - k);
}

// ModelVerdicts of one shard as bytes and back (the MPI merge).
template <class V>
void put_vec(std::string& s, const std::vector<V>& v) {
  const std::uint64_t n = v.size();
  s.append(reinterpret_cast<const char*>(&n), sizeof n);
  s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(V));
}
template <class V>
void get_vec(const std::string& s, std::size_t& at, std::vector<V>& v) {
  std::uint64_t n;
  std::memcpy(&n, s.data() + at, sizeof n);
  at += sizeof n;
  const std::size_t old = v.size();
  v.resize(old + n);
  std::memcpy(v.data() + old, s.data() + at, n * sizeof(V));
  at += n * sizeof(V);
}
std::string pack(const ModelVerdicts& r) {
  std::string s;
  put_vec(s, r.verdict);
  put_vec(s, r.margin_lo);
  put_vec(s, r.margin_hi);
  put_vec(s, r.bits);
  put_vec(s, r.float32_margin);
  put_vec(s, r.float32_error_bound);
  put_vec(s, r.float32_disagreement);
  return s;
}
void unpack_append(const std::string& s, ModelVerdicts& r) {
  std::size_t at = 0;
  get_vec(s, at, r.verdict);
  get_vec(s, at, r.margin_lo);
  get_vec(s, at, r.margin_hi);
  get_vec(s, at, r.bits);
  get_vec(s, at, r.float32_margin);
  get_vec(s, at, r.float32_error_bound);
  get_vec(s, at, r.float32_disagreement);
}

// Every tensor of the model file by name, as the checker digests them (role "model").
std::string model_digest(const StateDict& sd, const std::string& file) {
  std::vector<memcert_checker::NamedArray> arrays;
  for (const auto& [key, t] : sd.entries()) {
    memcert_checker::NamedArray a;
    a.name = key;
    a.shape = t.shape;
    if (dtype_is_float(t.dtype)) {
      a.values = t.f64;
    } else {
      a.values.reserve(t.i64.size());
      for (std::int64_t v : t.i64) {
        if (v > (std::int64_t(1) << 53) || v < -(std::int64_t(1) << 53))
          throw input_error(file, key, "expected integer buffer values within 2^53 (the model's digest takes every value as a double)");
        a.values.push_back(double(v));
      }
    }
    arrays.push_back(std::move(a));
  }
  return digest_or_throw(arrays, file);
}

int run_rank(const Args& a, const sweep::Group& g, std::chrono::steady_clock::time_point start, bool& gathered) {
  const ArchEntry* arch = nullptr;
  for (const ArchEntry& e : kArchs)
    if (a.arch == e.name) arch = &e;
  if (!arch) throw InputError("--arch: expected one of " + arch_names() + ", got '" + printable_argument(a.arch) + "'");
  if (!a.tolerance.empty()) {
    const auto tol = rational_parse(a.tolerance);
    if (!tol || *tol < 0) throw InputError("--tolerance: expected an exact non-negative number such as 1e-3, got '" + printable_argument(a.tolerance) + "'");
  }
  if (!a.out.empty() && path_extension_lower(a.out) != ".json")
    throw input_error(a.out, "", "expected a certificate file name ending in .json");
  if (!a.margins_out.empty() && path_extension_lower(a.margins_out) != ".npz")
    throw input_error(a.margins_out, "", "expected a --margins-out file name ending in .npz");
  for (const std::string* f : {&a.model, &a.data})
    if (::access(f->c_str(), R_OK) != 0) throw InputError(printable_argument(*f) + ": cannot open");
  // An output must not overwrite an input (nor the other output).
  for (const std::string* o : {&a.out, &a.margins_out}) {
    if (o->empty()) continue;
    std::error_code ec;
    for (const std::string* f : {&a.model, &a.data, &a.out, &a.margins_out})
      if (f != o && !f->empty() && std::filesystem::equivalent(*o, *f, ec))
        throw input_error(*o, "", "expected an output file other than " + printable_argument(*f) + " (it would be overwritten)");
  }
  CertifyOptions opts;
  opts.tolerance = a.tolerance;
  opts.threads = static_cast<unsigned>(threads_option());
  progress("certify: reading", 0, 1);
  StateDictLimits limits;
  limits.screen = [arch, &a](const StateDict& headers) { arch->screen(headers, a); };
  const StateDict sd = state_dict_read(a.model, limits);
  Job job = arch->setup(sd, a, opts);
  progress("certify: reading", 1, 1);
  // Digests of the model and of the data (certificate), computed while the examples are certified.
  std::future<std::string> data_digest, mdigest;
  if (!a.out.empty() && g.rank == 0) {
    mdigest = std::async(std::launch::deferred, [&sd, &a] { return model_digest(sd, a.model); });
    data_digest = std::async(std::launch::async, job.data_digest);
  }
  // This rank's share of the examples.
  const std::size_t T = job.T;
  opts.first = T * std::size_t(g.rank) / std::size_t(g.size);
  opts.count = T * std::size_t(g.rank + 1) / std::size_t(g.size) - opts.first;
  opts.progress = [](std::size_t done, std::size_t total) { progress_report("certify: examples", done, total); };
  ModelVerdicts mine = job.certify(opts);
  ModelVerdicts r;
  if (g.size > 1) {
    const std::vector<std::string> parts = sweep::group_gather(g, pack(mine));
    gathered = true;
    if (g.rank != 0) return -1;  // rank 0 answers for the group
    for (const std::string& p : parts) unpack_append(p, r);
  } else {
    r = std::move(mine);
  }
  // Verdicts.
  std::vector<std::size_t> wrong, undecided, f32;
  std::size_t correct = 0;
  double min_lo = std::numeric_limits<double>::infinity();
  std::size_t by[4] = {0, 0, 0, 0};
  for (std::size_t t = 0; t < T; ++t) {
    if (r.verdict[t] == ExampleVerdict::correct) {
      ++correct;
      min_lo = std::min(min_lo, r.margin_lo[t]);
    } else if (r.verdict[t] == ExampleVerdict::wrong) {
      wrong.push_back(t);
    } else {
      undecided.push_back(t);
    }
    if (r.float32_disagreement[t]) f32.push_back(t);
    const short b = r.bits[t];
    if (b == 53) ++by[0];
    else if (b == 128) ++by[1];
    else if (b == 256) ++by[2];
    else if (b == 512) ++by[3];
  }
  nlohmann::json j{{"arch", a.arch},
                   {"task", job.classification ? "classification" : "regression"},
                   {"T", T},
                   {"certified_correct", correct},
                   {"certified_wrong", wrong.size()},
                   {"undecided", undecided.size()},
                   {"wrong", wrong},
                   {"undecided_examples", undecided},
                   {"float32_disagreements", f32},
                   {"decided_by", {{"double", by[0]}, {"mpfr128", by[1]}, {"mpfr256", by[2]}, {"mpfr512", by[3]}}}};
  if (job.heads_in_certificate) j["heads"] = job.heads;
  std::string bound;  // min_margin / max_error as text
  if (correct > 0) {
    if (job.classification) {
      bound = decimal6(Rational(min_lo), false);
    } else {
      const Rational tol(a.tolerance);
      Rational e = tol - Rational(min_lo);
      if (e < 0) e = 0;
      bound = decimal6(e, true);
    }
  }
  j[job.classification ? "min_margin" : "max_error"] = correct > 0 ? nlohmann::json(bound) : nlohmann::json(nullptr);
  if (!a.out.empty()) {
    nlohmann::json c{{"kind", "model"},
                     {"version", 1},
                     {"claim", "certified predictions of a trained model"},
                     {"arch", a.arch},
                     {"task", job.classification ? "classification" : "regression"}};
    if (!job.classification) c["tolerance"] = a.tolerance;
    if (job.heads_in_certificate) c["heads"] = job.heads;
    c["model"] = {{"file", a.model}, {"digest", mdigest.get()}};
    c["data"] = {{"file", a.data}, {"digest", data_digest.get()}};
    c["T"] = T;
    c["wrong"] = wrong;
    c["undecided"] = undecided;
    if (correct > 0) c[job.classification ? "min_margin" : "max_error"] = bound;
    c["float32_disagreements"] = f32;
    const std::string text = c.dump() + "\n";
    // The certificate is checked as a file beside its destination (relative data paths resolve the
    // same way), or in the temporary directory when the destination is a device or pipe.
    const bool stream = output_is_stream(a.out);
    const std::string tmp = (stream ? (std::filesystem::temp_directory_path() / "memcert-certify").string() : a.out) +
                            ".tmp." + std::to_string(::getpid());
    file_write_atomic(tmp, text);
    const int verified = checker_accepts_model_before_write(tmp, a.out);
    if (verified < 0) {
      std::remove(tmp.c_str());
      return kExitUndecided;
    }
    if (stream) {
      std::remove(tmp.c_str());
      file_write_atomic(a.out, text);
    } else if (std::rename(tmp.c_str(), a.out.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw input_error(a.out, "", "cannot write the certificate there");
    }
    j["certificate"] = a.out;
    j["verified"] = verified > 0 ? nlohmann::json(true) : nlohmann::json(nullptr);
  }
  // After the certificate: a refused one leaves nothing behind.
  if (!a.margins_out.empty()) {
    std::map<std::string, std::string> m;
    std::vector<std::int64_t> v(T), bits(T);
    for (std::size_t t = 0; t < T; ++t) {
      v[t] = r.verdict[t] == ExampleVerdict::correct ? 1 : r.verdict[t] == ExampleVerdict::wrong ? -1 : 0;
      bits[t] = r.bits[t];
    }
    m["verdict"] = npy_bytes_int({T}, v, 1);
    m["bits"] = npy_bytes_int({T}, bits, 2);
    m["margin_lo"] = npy_bytes_float64({T}, r.margin_lo);
    m["margin_hi"] = npy_bytes_float64({T}, r.margin_hi);
    m["float32_margin"] = npy_bytes_float64({T}, r.float32_margin);
    m["float32_error_bound"] = npy_bytes_float64({T}, r.float32_error_bound);
    npz_write_members(a.margins_out, m);
    j["margins_out"] = a.margins_out;
  }
  std::string human = "certify " + a.arch + ": " + std::to_string(T) + " examples: " + std::to_string(correct) +
                      " certified correct, " + std::to_string(wrong.size()) + " certified wrong, " +
                      std::to_string(undecided.size()) + " undecided";
  if (correct > 0) human += "\n" + std::string(job.classification ? "min margin >= " : "max error <= ") + bound;
  human += "\ndecided by: double " + std::to_string(by[0]) + ", MPFR 128 bits " + std::to_string(by[1]) + ", 256 bits " +
           std::to_string(by[2]) + ", 512 bits " + std::to_string(by[3]);
  human += "\nfloat32 may disagree with the exact verdict on " + std::to_string(f32.size()) + " examples";
  if (!a.out.empty()) human += "\ncertificate written to " + a.out;
  if (!a.margins_out.empty()) human += "\nmargins written to " + a.margins_out;
  emit(a.json, j, human, start);
  return !wrong.empty() ? kExitNegative : !undecided.empty() ? kExitUndecided : kExitHolds;
}

// Under mpirun every rank reads and checks the same files (so bad input stops each before any exchange;
// rank 0 alone reports it), certifies its share, and takes rank 0's exit status.
int run(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  sweep::Group g = sweep::group_join();
  int code = kExitInternal;
  bool gathered = false;
  try {
    code = run_rank(a, g, start, gathered);
  } catch (const InputError&) {
    if (g.size > 1 && gathered) sweep::group_broadcast_int(g, kExitBadInput);  // the others wait for rank 0's answer
    if (g.size > 1) {
      sweep::group_leave(g, false);
      if (g.rank != 0) return kExitBadInput;
    }
    throw;
  } catch (...) {
    if (g.size > 1 && gathered) sweep::group_broadcast_int(g, kExitInternal);
    sweep::group_leave(g, g.size > 1 && !gathered);  // another rank may be waiting: stop the group
    throw;
  }
  code = sweep::group_broadcast_int(g, code);
  sweep::group_leave(g, false);
  return code;
}

const CommandRegistrar reg{{50, [](CLI::App& root, auto bind) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("certify", "Certify which examples a trained model gets right (exact arithmetic)");
  sub->add_option("MODEL", args->model, "Model file: .pt/.pth/.ckpt (torch.save of a state_dict), .safetensors, .npz")->required();
  sub->add_option("DATA", args->data, "Data set (.npz; mha: also .json)")->required();
  sub->add_option("--arch", args->arch, "Architecture: " + arch_names())->required();
  add_int_option(sub, "--heads", args->heads, 1, 1 << 20, "Sub-heads of each nn.MultiheadAttention (mha, dana24-aot)");
  sub->add_option("--tolerance", args->tolerance, "Regression: |f(x) - y| <= TOL counts as correct (exact decimal, required)");
  sub->add_option("--out", args->out, "Write a certificate (kind model, .json) that memcert verify re-checks");
  sub->add_option("--margins-out", args->margins_out, "Write per-example margins and verdicts (.npz)");
  sub->add_flag("--json", args->json, "Print one JSON object");
  bind(sub, [args] { return run(*args); });
}}};

}  // namespace cmd_certify
}  // namespace memcert::cli
