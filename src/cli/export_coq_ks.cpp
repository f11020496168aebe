// memcert export coq for kind "ks" (docs/COQ.md): a ks25 network and its data set as Coq files whose
// theorem, "this network maps each of the N sequences to its label" (next-token: Theorem 4.1, D.1; or
// to its label at every position: Corollary 4.1), Coq's kernel proves by evaluating the whole network on
// every sequence (proofs/coq/MemcertKs.v). Called by cmd_export.cpp once the independent checker has
// accepted the certificate.
//   DIR/Ks.v        the theorem at the top, its proof (check_sound and one vm_compute), Print Assumptions
//   DIR/Network.v   f1, W_OV and f2: integer matrices, one power-of-two scale for W and one for b per layer
//   DIR/Data.v      the vocabulary (integer vectors, one scale), the sequences (token indices), the labels;
//                   for data by reference, the sequences and labels of the file the checker read and
//                   accepted, each token written as its index in the certificate's vocabulary (same value)
//   DIR/MemcertKs.v the library (a copy of proofs/coq/MemcertKs.v)
//   DIR/check.sh    coqc on the four files: exit 0 iff Coq accepts and no axiom is used
#include <sys/stat.h>

#include <map>

#include "command.hpp"
#include "export_coq_kinds.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/util/error.hpp"

namespace memcert::cli {
extern const char* const kCoqKsLibrary;  // proofs/coq/MemcertKs.v, embedded at build time

namespace export_coq_ks {

const char* const kKsCheckScript = R"sh(#!/bin/sh
# Checks this directory with Coq: exit 0 iff coqc accepts the library, the network, the data and the
# theorem of Ks.v (whose proof evaluates the network on every sequence), and the theorem rests on no
# axiom ("Closed under the global context"). Needs coqc (Coq 8.16; its standard library only).
# Written by `memcert export coq`.
cd "$(dirname "$0")" || exit 2
if ! command -v coqc >/dev/null 2>&1; then
  echo "check.sh: coqc not found (Debian: apt-get install coq)" >&2
  exit 2
fi
coqc -q -Q . Memcert MemcertKs.v || exit 1
coqc -q -Q . Memcert Network.v || exit 1
coqc -q -Q . Memcert Data.v || exit 1
out=$(coqc -q -Q . Memcert Ks.v) || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
case "$out" in
  *"Closed under the global context"*) exit 0 ;;
  *) echo "check.sh: the theorem rests on assumptions" >&2; exit 1 ;;
esac
)sh";

// A list of exact numbers (JSON strings) written over one power-of-two scale: the mantissas m_j with
// value_j = m_j / 2^scale, scale the smallest that makes every m_j an integer.
struct KsScaled {
  std::vector<Integer> m;
  std::size_t scale = 0;
};

std::size_t ks_dyadic_exponent(const Rational& q, const std::string& name, const std::string& where) {
  const Integer den(q.get_den());
  const std::size_t k = mpz_scan1(den.get_mpz_t(), 0);
  if (mpz_sizeinbase(den.get_mpz_t(), 2) != k + 1)
    throw InputError(name + ": " + where + ": expected a dyadic number (a denominator that is a power of 2; "
                     "export coq writes every number of a ks network as an integer over a power of 2)");
  return k;
}

KsScaled ks_scaled(const std::vector<Rational>& v, const std::string& name, const std::string& where) {
  KsScaled out;
  std::vector<std::size_t> e(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out.scale = std::max(out.scale, e[i] = ks_dyadic_exponent(v[i], name, where));
  out.m.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out.m[i] = v[i].get_num();
    mpz_mul_2exp(out.m[i].get_mpz_t(), out.m[i].get_mpz_t(), out.scale - e[i]);
  }
  return out;
}

std::vector<Rational> ks_numbers(const nlohmann::json& v) {
  std::vector<Rational> out;
  for (const auto& x : v) out.emplace_back(x.get<std::string>());
  return out;
}

std::string ks_zlist(const Integer* m, std::size_t count) {
  std::string s = "[";
  for (std::size_t i = 0; i < count; ++i) s += (i ? "; " : "") + m[i].get_str();
  return s + "]";
}

// The rows of a matrix over one scale, one row a line.
std::string ks_zrows(const KsScaled& s, std::size_t rows, std::size_t cols, const std::string& indent) {
  std::string out = "[";
  for (std::size_t i = 0; i < rows; ++i)
    out += (i ? ";\n" + indent + " " : "") + ks_zlist(s.m.data() + i * cols, cols);
  return out + "]";
}

// A layer list as Coq text, one `Layer W sW b sb` per layer.
std::string ks_layers(const nlohmann::json& layers, const std::string& what, const std::string& name) {
  std::string s = "[";
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const nlohmann::json& L = layers.at(l);
    const std::string where = "network." + what + "[" + std::to_string(l) + "]";
    std::vector<Rational> w;
    const std::size_t rows = L.at("W").size(), cols = rows ? L.at("W").at(0).size() : 0;
    for (const auto& row : L.at("W"))
      for (const auto& x : row) w.emplace_back(x.get<std::string>());
    const KsScaled W = ks_scaled(w, name, where + ".W");
    const KsScaled B = ks_scaled(ks_numbers(L.at("b")), name, where + ".b");
    s += std::string(l ? ";\n  " : "\n  ") + "(* " + what + " layer " + std::to_string(l) + ": " + std::to_string(rows) +
         " x " + std::to_string(cols) + " *)\n  Layer\n    " + ks_zrows(W, rows, cols, "    ") + "\n    " +
         std::to_string(W.scale) + "\n    " + ks_zlist(B.m.data(), B.m.size()) + "\n    " + std::to_string(B.scale);
  }
  return s + "]";
}

}  // namespace export_coq_ks

// `cert_path` was accepted by the independent checker (kind "ks").
int run_export_coq_ks(const std::string& cert_path, const std::string& out, bool json,
                      std::chrono::steady_clock::time_point start, const memcert_checker::KsArrays* data) {
  using namespace export_coq_ks;
  const std::string name = printable_argument(cert_path);
  const nlohmann::json cert = json_parse_text(file_read_all(cert_path), cert_path);
  const std::string claim = cert.at("claim").get<std::string>();
  if (claim != "ks25/theorem-4.1" && claim != "ks25/theorem-D.1" && claim != "ks25/corollary-4.1")
    throw InputError(name + ": claim: expected ks25/theorem-4.1, ks25/theorem-D.1 or ks25/corollary-4.1 (export coq "
                     "states memorization), got another claim");
  const bool s2s = claim == "ks25/corollary-4.1";  // a label per position (the checker matched the setting)
  // As the checker decides (check_ks.cpp): an object "data" with a "file" replaces sequences and labels.
  const bool by_reference = cert.contains("data") && cert.at("data").is_object() && cert.at("data").contains("file");
  for (const char* key : {"tokens", "sequences", "labels"})
    if ((!by_reference || std::string(key) == "tokens") && (!cert.contains(key) || !cert.at(key).is_array()))
      throw InputError(name + ": " + key + ": expected the data embedded in the certificate (export coq writes it into Data.v)");
  const std::size_t N = cert.at("N").get<std::size_t>(), n = cert.at("n").get<std::size_t>(),
                    d = cert.at("d").get<std::size_t>(), V = cert.at("tokens").size();
  // The sequences as indices into the certificate's tokens, and the labels (N, or N x n for seq-to-seq).
  std::vector<std::vector<std::size_t>> seqs(N, std::vector<std::size_t>(n));
  std::vector<std::vector<long long>> labs(N);
  if (!by_reference) {
    for (std::size_t i = 0; i < N; ++i) {
      for (std::size_t k = 0; k < n; ++k) seqs[i][k] = cert.at("sequences").at(i).at(k).get<std::size_t>();
      const nlohmann::json& li = cert.at("labels").at(i);
      if (!s2s) labs[i] = {static_cast<long long>(li.get<std::size_t>())};
      else
        for (std::size_t k = 0; k < n; ++k) labs[i].push_back(static_cast<long long>(li.at(k).get<std::size_t>()));
    }
  } else {
    // The checker read the file (data.file, found as `verify` finds it), matched its digest and found
    // every token of every sequence among the certificate's tokens by value: the same match here.
    using L = memcert_checker::KsArrays::Labels;
    if (!data || data->N != N || data->n != n || data->d != d || data->ids.size() != N * n ||
        data->label_kind != (s2s ? L::token : L::sequence) || data->labels.size() != (s2s ? N * n : N) ||
        data->tokens.size() % (d ? d : 1) != 0)
      throw std::logic_error("export coq: the referenced data disagree with what the checker accepted");
    const auto key_of = [&](const auto& row_at) {
      std::string k;
      for (std::size_t j = 0; j < d; ++j) {
        Rational q(row_at(j));
        q.canonicalize();
        k += q.get_str() + " ";
      }
      return k;
    };
    std::map<std::string, std::size_t> index;  // a token's value -> its first index in the certificate
    for (std::size_t t = 0; t < V; ++t)
      index.emplace(key_of([&](std::size_t j) { return cert.at("tokens").at(t).at(j).get<std::string>(); }), t);
    std::map<std::uint32_t, std::size_t> row_index;  // a row of the file's table -> the certificate's index
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t r = data->ids[i * n + k];
        auto it = row_index.find(r);
        if (it == row_index.end()) {
          if (std::size_t(r) * d + d > data->tokens.size())
            throw std::logic_error("export coq: a referenced token index past the file's table");
          const auto f = index.find(key_of([&](std::size_t j) { return data->tokens[std::size_t(r) * d + j]; }));
          if (f == index.end()) throw std::logic_error("export coq: a referenced token not among the certificate's tokens");
          it = row_index.emplace(r, f->second).first;
        }
        seqs[i][k] = it->second;
      }
    for (std::size_t i = 0; i < N; ++i)
      if (!s2s) labs[i] = {static_cast<long long>(data->labels[i])};
      else labs[i].assign(data->labels.begin() + static_cast<std::ptrdiff_t>(i * n),
                          data->labels.begin() + static_cast<std::ptrdiff_t>(i * n + n));
  }
  const nlohmann::json& net = cert.at("network");

  // The network.
  std::vector<Rational> wov;
  for (const auto& row : net.at("attention").at("WOV"))
    for (const auto& x : row) wov.emplace_back(x.get<std::string>());
  const KsScaled WOV = ks_scaled(wov, name, "network.attention.WOV");
  const std::string f1 = ks_layers(net.at("f1"), "f1", name), f2 = ks_layers(net.at("f2"), "f2", name);
  const std::size_t L1 = net.at("f1").size(), L2 = net.at("f2").size();
  const std::string network_v =
      "(* The ks25 network of " + name + " (memcert export coq); MemcertKs.v gives its meaning.\n"
      "   A layer `Layer W sW b sb` maps x to W x / 2^sW + b / 2^sb; ReLU follows every layer of a list but the last.\n"
      "   f1: " + std::to_string(L1) + " layers, R^" + std::to_string(d) + " -> R^3, applied to every token; W_OV: 3 x 3, "
      "over 2^" + std::to_string(WOV.scale) + "; f2: " + std::to_string(L2) + " layers, R^3 -> R^1. *)\n"
      "From Coq Require Import ZArith List.\nImport ListNotations.\nFrom Memcert Require Import MemcertKs.\n\n"
      "Local Open Scope Z_scope.\n\n"
      "Definition f1_layers : list layer := " + f1 + ".\n\n" +
      "Definition WOV : list (list Z) := " + ks_zrows(WOV, 3, 3, "  ") + ".\n" +
      "Definition WOV_scale : nat := " + std::to_string(WOV.scale) + ".\n\n" +
      "Definition f2_layers : list layer := " + f2 + ".\n\n" +
      "Definition net : network := Network f1_layers WOV WOV_scale f2_layers.\n";

  // The data.
  std::vector<Rational> tok;
  for (const auto& t : cert.at("tokens"))
    for (const auto& x : t) tok.emplace_back(x.get<std::string>());
  const KsScaled T = ks_scaled(tok, name, "tokens");
  std::string data_v = "(* The " + std::to_string(N) + " sequences of " + std::to_string(n) + " tokens of " + name +
                       " and their labels (memcert export coq).\n"
                       "   Token t is the vector tokens[t] / 2^token_scale in Q^" + std::to_string(d) +
                       ";\n   sequence i is the list of the tokens sequences[i][0], ..., sequences[i][" +
                       std::to_string(n - 1) + "]; " +
                       (s2s ? "its label at position p (from 0) is labels[i][p]" : "its label is labels[i]") + "." +
                       (by_reference ? "\n   The sequences and labels are those of the data file the certificate references, whose digest\n"
                                           "   memcert's checker recomputed (" + cert.at("data").at("digest").get<std::string>() +
                                           ");\n   each token is written as the index of the vocabulary's token of the same value."
                                     : "") +
                       " *)\n"
                       "From Coq Require Import ZArith List.\nImport ListNotations.\n\n"
                       "Local Open Scope Z_scope.\n\n"
                       "Definition token_scale : nat := " + std::to_string(T.scale) + ".\n\n" +
                       "(* " + std::to_string(V) + " tokens *)\nDefinition tokens : list (list Z) :=\n  " +
                       ks_zrows(T, V, d, "  ") + ".\n\nDefinition sequences : list (list N) :=\n  [";
  for (std::size_t i = 0; i < N; ++i) {
    data_v += i ? ";\n   [" : "[";
    for (std::size_t k = 0; k < n; ++k) data_v += (k ? "; " : "") + std::to_string(seqs[i][k]);
    data_v += "]";
  }
  data_v += std::string("]%N.\n\nDefinition labels : ") + (s2s ? "list (list Z)" : "list Z") + " :=\n  [";
  for (std::size_t i = 0; i < N; ++i) {
    if (!s2s) {
      data_v += (i ? "; " : "") + std::to_string(labs[i][0]);
      continue;
    }
    data_v += i ? ";\n   [" : "[";
    for (std::size_t k = 0; k < n; ++k) data_v += (k ? "; " : "") + std::to_string(labs[i][k]);
    data_v += "]";
  }
  data_v += "].\n";

  const std::string Ns = std::to_string(N), ns = std::to_string(n);
  const std::string statement =
      s2s ? "Theorem memorizes : forall i p, (i < " + Ns + ")%nat -> (p < " + ns +
                ")%nat -> predict_at net (X i) p == inject_Z (y i p)."
          : "Theorem memorizes : forall i, (i < " + Ns + ")%nat -> predict net (X i) == inject_Z (y i).";
  const std::string ks_v =
      "(* Theorem: the ks25 network of Network.v maps each of the " + Ns + " sequences of Data.v to its label" +
      (s2s ? "s,\n   one per position.\n" : ".\n") +
      "\n" +
      (s2s ? "   predict_at net X p = f2 (f1 x_(p+1) + W_OV (1/n) (f1 x_1 + ... + f1 x_n))   for X = x_1 ... x_n\n"
             "   and p < n (positions from 0), f1 and f2 ReLU networks (ReLU after every layer but the last), the sum the\n"
             "   uniform attention over the n positions: MemcertKs.v, Section Plain, defines it over Q (Coq's\n"
             "   rationals) and nothing else.\n"
             "   X i is sequence i of Data.v as a list of vectors in Q^" + std::to_string(d) + ", y i p its label at position p; the\n"
             "   theorem says that the network's output at position p of X i is exactly y i p, for every i < " + Ns + "\n"
             "   and p < " + ns + ".\n"
           : "   predict net X = f2 (f1 x_n + W_OV (1/n) (f1 x_1 + ... + f1 x_n))   for X = x_1 ... x_n,\n"
             "   f1 and f2 ReLU networks (ReLU after every layer but the last), the sum the uniform attention over\n"
             "   the n positions: MemcertKs.v, Section Plain, defines it over Q (Coq's rationals) and nothing else.\n"
             "   X i is sequence i of Data.v as a list of vectors in Q^" + std::to_string(d) + ", y i its label; the theorem says\n"
             "   that the network's output on X i is exactly y i, for every i < " + Ns + ".\n") +
      "\n"
      "   Exported by memcert export coq from " + name + " (kind ks, claim " + claim + ");\n"
      "   the proof evaluates the network on every sequence (MemcertKs." + (s2s ? "check_at" : "check") +
      ", by vm_compute) and applies\n"
      "   MemcertKs." + (s2s ? "check_at_sound" : "check_sound") + ". check.sh checks it with coqc. *)\n"
      "From Coq Require Import ZArith QArith List.\nFrom Memcert Require Import MemcertKs Network Data.\n\n"
      "Definition X (i : nat) : list (list Q) := sequence token_scale tokens sequences i.\n" +
      (s2s ? "Definition y (i p : nat) : Z := nth p (nth i labels nil) 0%Z.\n\n"
           : "Definition y (i : nat) : Z := nth i labels 0%Z.\n\n") +
      statement + "\nProof.\n" +
      (s2s ? "  refine (check_at_sound net token_scale tokens " + ns + " sequences labels _).\n"
           : "  refine (check_sound net token_scale tokens sequences labels _).\n") +
      "  vm_cast_no_check (eq_refl true).\nQed.\n\nPrint Assumptions memorizes.\n";

  cmd_export::make_directory(out);
  file_write_atomic(out + "/MemcertKs.v", kCoqKsLibrary);
  file_write_atomic(out + "/Network.v", network_v);
  file_write_atomic(out + "/Data.v", data_v);
  file_write_atomic(out + "/Ks.v", ks_v);
  file_write_atomic(out + "/check.sh", kKsCheckScript);
  if (::chmod((out + "/check.sh").c_str(), 0755) != 0)
    throw InputError(printable_argument(out) + "/check.sh: cannot make it executable");

  nlohmann::json j{{"exported", true}, {"kind", "ks"}, {"claim", claim}, {"setting", s2s ? "seq-to-seq" : "next-token"},
                   {"N", N}, {"n", n}, {"d", d},
                   {"f1_layers", L1}, {"f2_layers", L2}, {"out", out},
                   {"files", {"Ks.v", "Network.v", "Data.v", "MemcertKs.v", "check.sh"}}};
  const std::string human = "exported " + name + " (ks network memorizing " + Ns + " sequences of " + std::to_string(n) +
                            " tokens, checked by the independent checker) to " + printable_argument(out) +
                            "/Ks.v:\n  " + statement + "\n  network: f1 " + std::to_string(L1) +
                            " layers, uniform attention, f2 " + std::to_string(L2) + " layers\nrun " +
                            printable_argument(out) + "/check.sh to check it with coqc";
  emit(json, j, human, start);
  return kExitHolds;
}

}  // namespace memcert::cli
