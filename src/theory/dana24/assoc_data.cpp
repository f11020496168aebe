// Token association sets: reading (JSON / .npz), validation, writing and random generation.
#include "memcert/theory/dana24/assoc_data.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "memcert/data/file_kind.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert::dana24 {
namespace {

using nlohmann::json;

bool ends_with_npz(const std::string& p) {
  if (p.size() < 4) return false;
  std::string t = p.substr(p.size() - 4);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  return t == ".npz";
}

std::string at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// An integer in [0, bound) from an exact number (bound 0: any non-negative integer below 2^31).
std::uint32_t to_index(const Rational& q, std::size_t bound, const std::string& file, const std::string& where,
                       const std::string& noun) {
  const std::size_t cap = bound ? bound : (std::size_t{1} << 31);
  if (q.get_den() != 1 || sgn(q) < 0 || q >= Rational(static_cast<unsigned long>(cap)))
    throw input_error(file, where,
                      "expected " + noun + (bound ? " in [0, " + std::to_string(bound) + ")" : " below 2^31") +
                          ", got " + rational_to_string(q));
  return static_cast<std::uint32_t>(q.get_num().get_ui());
}

AssocData from_json(const json& root, const std::string& file) {
  if (!root.is_object()) throw input_error(file, "", "expected an object {\"vocab\", \"sequences\", \"next\"}");
  for (const char* k : {"vocab", "sequences", "next"})
    if (!root.contains(k)) throw input_error(file, "", std::string("expected a key \"") + k + "\"");
  AssocData a;
  a.N = to_index(json_to_rational(root["vocab"], file, "vocab"), 0, file, "vocab", "a vocabulary size");
  if (a.N == 0) throw input_error(file, "vocab", "expected a vocabulary size >= 1, got 0");
  const json& s = root["sequences"];
  if (!s.is_array() || s.empty()) throw input_error(file, "sequences", "expected a non-empty list of sequences");
  const json& nx = root["next"];
  if (!nx.is_array()) throw input_error(file, "next", "expected a list of next tokens");
  if (nx.size() != s.size())
    throw input_error(file, "next", "expected " + std::to_string(s.size()) + " next tokens (one per sequence), got " +
                                        std::to_string(nx.size()));
  for (std::size_t t = 0; t < s.size(); ++t) {
    if (!s[t].is_array() || s[t].empty()) throw input_error(file, at("sequences", t), "expected a non-empty list of tokens");
    if (t == 0) a.S = s[0].size();
    if (s[t].size() != a.S)
      throw input_error(file, at("sequences", t), "expected " + std::to_string(a.S) + " tokens (S = " +
                                                      std::to_string(a.S) + "), got " + std::to_string(s[t].size()));
    std::vector<std::uint32_t> seq(a.S);
    for (std::size_t k = 0; k < a.S; ++k) {
      const std::string w = at(at("sequences", t), k);
      seq[k] = to_index(json_to_rational(s[t][k], file, w), a.N, file, w, "a token");
    }
    a.sequences.push_back(std::move(seq));
    a.next.push_back(to_index(json_to_rational(nx[t], file, at("next", t)), a.N, file, at("next", t), "a token"));
  }
  return a;
}

AssocData from_npz(const std::string& file) {
  auto arrays = npz_read(file);
  for (const char* k : {"vocab", "sequences", "next"})
    if (!arrays.count(k))
      throw input_error(file, "", std::string("expected a member \"") + k + ".npy\"; " + npz_members_text(arrays));
  const NdArray& v = arrays.at("vocab");
  if (v.data.size() != 1) throw input_error(file, "vocab", "expected a single integer (shape () or (1,))");
  AssocData a;
  a.N = to_index(v.data[0], 0, file, "vocab", "a vocabulary size");
  if (a.N == 0) throw input_error(file, "vocab", "expected a vocabulary size >= 1, got 0");
  const NdArray& s = arrays.at("sequences");
  if (s.shape.size() != 2 || s.shape[0] == 0 || s.shape[1] == 0)
    throw input_error(file, "sequences", "expected a non-empty array of shape (T, S)");
  const NdArray& nx = arrays.at("next");
  if (nx.shape.size() != 1 || nx.shape[0] != s.shape[0])
    throw input_error(file, "next", "expected shape (" + std::to_string(s.shape[0]) + ",) (one per sequence)");
  a.S = s.shape[1];
  for (std::size_t t = 0; t < s.shape[0]; ++t) {
    std::vector<std::uint32_t> seq(a.S);
    for (std::size_t k = 0; k < a.S; ++k)
      seq[k] = to_index(s.data[t * a.S + k], a.N, file, at(at("sequences", t), k), "a token");
    a.sequences.push_back(std::move(seq));
    a.next.push_back(to_index(nx.data[t], a.N, file, at("next", t), "a token"));
  }
  return a;
}

}  // namespace

void assoc_data_validate(const AssocData& a, const std::string& file) {
  if (a.N == 0) throw input_error(file, "vocab", "expected a vocabulary size >= 1");
  if (a.sequences.empty()) throw input_error(file, "sequences", "expected a non-empty list of sequences");
  if (a.next.size() != a.sequences.size()) throw input_error(file, "next", "expected one next token per sequence");
  std::map<std::vector<std::uint32_t>, std::size_t> seen;
  for (std::size_t t = 0; t < a.sequences.size(); ++t) {
    if (a.sequences[t].size() != a.S || a.S == 0)
      throw input_error(file, at("sequences", t), "expected " + std::to_string(a.S) + " tokens");
    for (std::size_t k = 0; k < a.S; ++k)
      if (a.sequences[t][k] >= a.N)
        throw input_error(file, at(at("sequences", t), k), "expected a token in [0, " + std::to_string(a.N) + ")");
    if (a.next[t] >= a.N) throw input_error(file, at("next", t), "expected a token in [0, " + std::to_string(a.N) + ")");
    auto [it, fresh] = seen.emplace(a.sequences[t], t);
    if (!fresh) {
      const std::size_t i = it->second;
      throw input_error(file, at("sequences", t),
                        a.next[i] != a.next[t]
                            ? "expected distinct sequences, got a repeat of sequences[" + std::to_string(i) +
                                  "] with a different next token (" + std::to_string(a.next[i]) + " vs " +
                                  std::to_string(a.next[t]) + "): no model can memorize both"
                            : "expected distinct sequences, got a repeat of sequences[" + std::to_string(i) +
                                  "] (same next token)");
    }
  }
}

AssocData assoc_data_read(const std::string& path) {
  expect_data_set_file(path, "vocab, sequences, next");
  AssocData a = ends_with_npz(path) ? from_npz(path) : from_json(json_read(path), path);
  assoc_data_validate(a, path);
  return a;
}

void assoc_data_write(const std::string& path, const AssocData& a) {
  if (ends_with_npz(path)) {
    std::vector<double> seq, nx;
    for (const auto& s : a.sequences)
      for (auto x : s) seq.push_back(x);
    for (auto x : a.next) nx.push_back(x);
    npz_write_float64(path, {{"vocab", {{}, {static_cast<double>(a.N)}}},
                             {"sequences", {{a.T(), a.S}, seq}},
                             {"next", {{a.T()}, nx}}});
    return;
  }
  json j{{"vocab", a.N}, {"sequences", a.sequences}, {"next", a.next}};
  file_write_atomic(path, j.dump() + "\n");
}

AssocData assoc_data_generate(std::size_t N, std::size_t S, std::size_t T, std::uint64_t seed, bool all) {
  if (N == 0 || S == 0) throw InputError("generate dana24: expected --N >= 1 and --S >= 1");
  // N^S, saturated at 2^62 (more sequences than could ever be requested).
  unsigned long long total = 1;
  for (std::size_t k = 0; k < S && total < (1ULL << 62); ++k)
    total = total > (1ULL << 62) / N ? (1ULL << 62) : total * N;
  if (all) {
    if (total > 10'000'000ULL) throw InputError("generate dana24: --all: expected N^S <= 10^7");
    T = static_cast<std::size_t>(total);
  }
  if (T == 0) throw InputError("generate dana24: expected --T >= 1 (or --all)");
  if (T > total)
    throw InputError("generate dana24: --T: expected at most N^S = " + std::to_string(total) +
                     " distinct sequences, got " + std::to_string(T));
  AssocData a;
  a.N = N;
  a.S = S;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> tok(0, static_cast<std::uint32_t>(N - 1));
  auto decode = [&](unsigned long long code) {
    std::vector<std::uint32_t> s(S);
    for (std::size_t k = S; k-- > 0;) { s[k] = static_cast<std::uint32_t>(code % N); code /= N; }
    return s;
  };
  if (all) {
    for (unsigned long long c = 0; c < total; ++c) a.sequences.push_back(decode(c));
  } else if (total <= 4 * static_cast<unsigned long long>(T) && total <= 10'000'000ULL) {
    // Dense request: a random T-subset of all codes (partial Fisher-Yates), kept in random order.
    std::vector<unsigned long long> codes(total);
    for (unsigned long long c = 0; c < total; ++c) codes[c] = c;
    for (std::size_t i = 0; i < T; ++i) {
      std::uniform_int_distribution<unsigned long long> pick(i, total - 1);
      std::swap(codes[i], codes[pick(rng)]);
      a.sequences.push_back(decode(codes[i]));
    }
  } else {
    std::set<std::vector<std::uint32_t>> seen;
    while (a.sequences.size() < T) {
      std::vector<std::uint32_t> s(S);
      for (auto& x : s) x = tok(rng);
      if (seen.insert(s).second) a.sequences.push_back(std::move(s));
    }
  }
  for (std::size_t t = 0; t < a.sequences.size(); ++t) a.next.push_back(tok(rng));
  return a;
}

std::size_t assoc_distinct_last_tokens(const AssocData& a) {
  std::set<std::uint32_t> last;
  for (const auto& s : a.sequences) last.insert(s.back());
  return last.size();
}

}  // namespace memcert::dana24
