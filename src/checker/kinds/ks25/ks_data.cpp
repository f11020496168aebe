// ks25's data by reference (docs/CERTIFICATES.md "Data by reference (ks)"): the canonical digest of a
// sequence file's values (ks_arrays_digest) and the certificate's sequences and labels read from it.
#include <algorithm>
#include <map>
#include <numeric>

#include "kernel/context.hpp"
#include "kernel/sha256.hpp"
#include "kinds/ks25/ks_network.hpp"

namespace memcert_checker {

namespace ks_data {

// The table's rows as exact rationals in lowest terms (text), or false.
bool canonical_rows(const KsArrays& a, std::vector<std::string>& rows) {
  if (a.d == 0 || a.tokens.size() % a.d != 0) return false;
  const std::size_t V = a.tokens.size() / a.d;
  rows.assign(V, std::string());
  mpq_class q;
  for (std::size_t t = 0; t < V; ++t)
    for (std::size_t j = 0; j < a.d; ++j) {
      const std::string& text = a.tokens[t * a.d + j];
      if (text.empty() || text.size() > 100000 || q.set_str(text, 10) != 0 || q.get_den() == 0) return false;
      q.canonicalize();
      rows[t] += q.get_str();
      rows[t] += j + 1 < a.d ? ' ' : '\n';
    }
  return true;
}

bool shapes_ok(const KsArrays& a) {
  if (a.N == 0 || a.n == 0 || a.d == 0 || a.ids.size() / a.n != a.N || a.ids.size() % a.n != 0) return false;
  const std::size_t V = a.tokens.size() / a.d;
  for (std::uint32_t id : a.ids)
    if (id >= V) return false;
  switch (a.label_kind) {
    case KsArrays::Labels::none: return a.labels.empty();
    case KsArrays::Labels::sequence: return a.labels.size() == a.N;
    case KsArrays::Labels::token: return a.labels.size() == a.ids.size();
  }
  return false;
}

}  // namespace ks_data

std::string ks_arrays_digest(const KsArrays& a) {
  std::vector<std::string> rows;
  if (!ks_data::shapes_ok(a) || !ks_data::canonical_rows(a, rows)) return "";
  // Each row's number in the list of distinct vectors in order of first use.
  std::vector<std::uint32_t> first(rows.size(), UINT32_MAX);
  std::map<std::string, std::uint32_t> seen;
  std::vector<const std::string*> order;
  for (std::uint32_t id : a.ids) {
    if (first[id] != UINT32_MAX) continue;
    auto [it, fresh] = seen.emplace(rows[id], static_cast<std::uint32_t>(order.size()));
    if (fresh) order.push_back(&it->first);
    first[id] = it->second;
  }
  Sha256 sha;
  const std::string head =
      "memcert-ks-v1 " + std::to_string(a.N) + " " + std::to_string(a.n) + " " + std::to_string(a.d) + "\n";
  sha.update(head.data(), head.size());
  for (const std::string* r : order) sha.update(r->data(), r->size());
  sha.update("ids\n", 4);
  unsigned char buf[4 * 1024];
  for (std::size_t i = 0; i < a.ids.size();) {
    const std::size_t k = std::min<std::size_t>(a.ids.size() - i, 1024);
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint32_t v = first[a.ids[i + j]];
      for (int b = 0; b < 4; ++b) buf[4 * j + b] = static_cast<unsigned char>(v >> (8 * b));
    }
    sha.update(buf, 4 * k);
    i += k;
  }
  std::string text = a.label_kind == KsArrays::Labels::none       ? "labels none"
                     : a.label_kind == KsArrays::Labels::sequence ? "labels sequence"
                                                                  : "labels token";
  for (std::int64_t c : a.labels) {
    text += ' ';
    text += std::to_string(c);
    if (text.size() > (1u << 16)) {
      sha.update(text.data(), text.size());
      text.clear();
    }
  }
  sha.update(text.data(), text.size());
  return "sha256:" + sha.hex();
}

// The certificate's "data": {"file", "digest"}: the file's sequences (as indices into the certificate's
// tokens `tok`) and labels, its digest recomputed and compared.
bool ks_read_referenced(const Value& data, std::size_t N, std::size_t n, std::size_t d, bool s2s, std::size_t C,
                        const std::vector<QRow>& tok, std::vector<std::uint32_t>& seq,
                        std::vector<std::size_t>& label, std::string& why) {
  std::string file, digest;
  if (!read_string(data, "data", "file", file, why) || !read_string(data, "data", "digest", digest, why)) return false;
  const KsArraysSupplier* supply = check_context().ks_arrays;
  if (!supply) {
    check_context().malformed = true;
    why = "data.file: the certificate references its data (" + file + "); the data file must be supplied (verify --data)";
    return false;
  }
  KsArrays a;
  std::string error;
  if (!(*supply)(file, a, error)) {
    check_context().malformed = true;
    why = error.empty() ? "data.file: " + file + ": could not be read" : error;
    return false;
  }
  if (a.N != N || a.n != n || a.d != d) {
    why = "data.file: expected N = " + std::to_string(N) + " sequences of n = " + std::to_string(n) +
          " tokens of dimension d = " + std::to_string(d) + ", the data have " + std::to_string(a.N) + " of " +
          std::to_string(a.n) + " of dimension " + std::to_string(a.d);
    return false;
  }
  const std::string mine = ks_arrays_digest(a);
  if (mine.empty()) {
    check_context().malformed = true;
    why = "data.file: the sequences supplied are malformed (sizes, an index past the token table, or a number that is not exact)";
    return false;
  }
  if (mine != digest) {
    why = "data.digest: the data supplied have digest " + mine + ", the certificate names " + digest +
          " (not the data the certificate was made for)";
    return false;
  }
  using L = KsArrays::Labels;
  if (a.label_kind == L::none) { why = "data.file: the referenced file holds no labels"; return false; }
  if ((a.label_kind == L::token) != s2s) {
    why = std::string("data.file: the setting is ") + (s2s ? "seq-to-seq" : "next-token") + ", the file has per-" +
          (a.label_kind == L::token ? "token" : "sequence") + " labels";
    return false;
  }
  // Each table row used, found among the certificate's tokens by value.
  const std::size_t V = a.tokens.size() / d;
  std::vector<std::size_t> ord(tok.size());
  std::iota(ord.begin(), ord.end(), 0);
  std::sort(ord.begin(), ord.end(), [&](std::size_t x, std::size_t y) { return tok[x] < tok[y]; });
  std::vector<std::size_t> to_cert(V, SIZE_MAX);
  std::vector<char> used(V, 0);
  for (std::uint32_t id : a.ids) used[id] = 1;
  QRow row(d);
  for (std::size_t t = 0; t < V; ++t) {
    if (!used[t]) continue;
    for (std::size_t j = 0; j < d; ++j) {
      row[j].set_str(a.tokens[t * d + j], 10);  // exact: checked by the digest
      row[j].canonicalize();
    }
    auto it = std::lower_bound(ord.begin(), ord.end(), row, [&](std::size_t x, const QRow& r) { return tok[x] < r; });
    if (it == ord.end() || tok[*it] != row) {
      for (std::size_t i = 0; i < a.ids.size(); ++i)
        if (a.ids[i] == t) {
          why = "data.file: sequence " + std::to_string(i / n) + " position " + std::to_string(i % n) +
                " holds a token that is not among the certificate's tokens";
          break;
        }
      return false;
    }
    to_cert[t] = *it;
  }
  seq.resize(N * n);
  for (std::size_t i = 0; i < N * n; ++i) seq[i] = static_cast<std::uint32_t>(to_cert[a.ids[i]]);
  label.resize(a.labels.size());
  for (std::size_t i = 0; i < a.labels.size(); ++i) {
    if (a.labels[i] < 0 || static_cast<std::uint64_t>(a.labels[i]) >= C) {
      why = "data.file: label " + std::to_string(i) + " is " + std::to_string(a.labels[i]) + ", expected an integer in [0, C = " +
            std::to_string(C) + ")";
      return false;
    }
    label[i] = static_cast<std::size_t>(a.labels[i]);
  }
  note_applied("data: the sequences and labels of the referenced data file, digest recomputed from its values");
  return true;
}

}  // namespace memcert_checker
