// `verify CERT --data DATA` (match_data.hpp): the certificate's embedded data against the user's data
// set, compared exactly. Only then does the usual check run, so a valid verdict means "this network
// memorizes THESE examples", not merely "some examples the certificate chose".
#include "kernel/match_data.hpp"

#include <algorithm>
#include <vector>

#include "kernel/context.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {
namespace {

std::string match_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// Largest integer (label, token, vocabulary size) a data set can hold; anything read is compared exactly.
constexpr std::size_t kMaxInteger = std::size_t{1} << 62;

enum class Leaf { Exact, Integer };

// One entry of DATA (produced by the caller's reader, so ill-typed only through a bug there): malformed.
bool read_data_leaf(const Value& d, const std::string& where, Leaf leaf, mpq_class& q, std::size_t& z,
                    std::string& why) {
  const std::string name = "DATA " + where;
  if (leaf == Leaf::Integer) return read_size(d, name, kMaxInteger, z, why);
  return read_rational(d, name, q, why);
}

// True iff the nested arrays `c` (the certificate's) and `d` (DATA's) have the same shape and equal
// leaves (exact numbers compared as rationals, integers as integers). A different shape or value is a
// difference (false, why names the position); an ill-typed certificate leaf is malformed (read.hpp).
bool equal_tree(const Value& c, const Value& d, const std::string& where, Leaf leaf, std::string& why) {
  if (d.type == json::Type::Array) {
    if (c.type != json::Type::Array) {
      why = where + ": the certificate has a single entry, DATA a list of " + std::to_string(d.size());
      return false;
    }
    if (c.size() != d.size()) {
      why = where + ": the certificate has " + std::to_string(c.size()) + " entries, DATA has " +
            std::to_string(d.size());
      return false;
    }
    for (std::size_t i = 0; i < d.size(); ++i)
      if (!equal_tree(*c.at(i), *d.at(i), match_at(where, i), leaf, why)) return false;
    return true;
  }
  if (c.type == json::Type::Array) {
    why = where + ": the certificate has a list of " + std::to_string(c.size()) + ", DATA a single entry";
    return false;
  }
  mpq_class qc, qd;
  std::size_t zc = 0, zd = 0;
  if (!read_data_leaf(d, where, leaf, qd, zd, why)) return false;
  if (leaf == Leaf::Integer) {
    if (!read_size(c, where, kMaxInteger, zc, why)) return false;
    if (zc == zd) return true;
    why = where + ": the certificate has " + std::to_string(zc) + ", DATA has " + std::to_string(zd);
    return false;
  }
  if (!read_rational(c, where, qc, why)) return false;
  if (qc == qd) return true;
  why = where + ": the certificate has " + qc.get_str() + ", DATA has " + qd.get_str();
  return false;
}

// DATA's member `key` (an array), which the caller's reader always writes.
const Value* data_member(const Value& data, const std::string& key, std::string& why) {
  const Value* v = data.find(key);
  if (v && v->type == json::Type::Array) return v;
  check_context().malformed = true;
  why = "DATA: expected \"" + key + "\" (an array) in the data set handed to the checker";
  return nullptr;
}

// The rows of DATA (`data_T` examples) that the certificate's `cert_T` examples are: its "examples"
// (strictly increasing row indices, as `construct` writes them), or DATA's rows in order when it has
// none. A row DATA does not have is a difference; an ill-formed field is malformed.
bool theorem1_rows(const Value& cert, std::size_t cert_T, std::size_t data_T, std::vector<std::size_t>& rows,
                   std::string& why) {
  rows.clear();
  const Value* ev = cert.find("examples");
  if (!ev || cert_T == data_T) {
    // DATA holds exactly the certificate's examples: compared in order. "examples" then names rows of a
    // larger data set (the engine's numbering) or is the identity; it must still be well formed.
    for (std::size_t i = 0; i < std::min(cert_T, data_T); ++i) rows.push_back(i);
    if (!ev) return true;
  }
  if (ev->type != json::Type::Array || ev->size() != cert_T) {
    check_context().malformed = true;
    why = "examples: expected " + std::to_string(cert_T) + " row indices (one per example of data.contexts)";
    return false;
  }
  std::size_t prev = 0;
  bool identity_noted = false;
  for (std::size_t i = 0; i < cert_T; ++i) {
    std::size_t row = 0;
    if (!read_size(*ev->at(i), match_at("examples", i), kMaxInteger, row, why)) return false;
    if (i > 0 && row <= prev) {
      why = match_at("examples", i) + ": expected strictly increasing row indices";
      return false;
    }
    if (cert_T == data_T) {
      if (row != i && !identity_noted) {
        note_not_checked("examples (DATA holds exactly the certificate's examples, compared in order; which rows of a larger data set they are is not tied)");
        identity_noted = true;
      }
      prev = row;
      continue;
    }
    if (row >= data_T) {
      why = match_at("examples", i) + ": names row " + std::to_string(row) + ", DATA has " + std::to_string(data_T) + " examples";
      return false;
    }
    rows.push_back(row);
    prev = row;
  }
  return true;
}

// "rows a, b, c-d" for the human reason (at most a few runs).
std::string row_list(const std::vector<std::size_t>& r) {
  std::string s;
  std::size_t shown = 0, i = 0;
  while (i < r.size()) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (shown == 8) { s += ", ..."; break; }
    if (!s.empty()) s += ", ";
    s += std::to_string(r[i]);
    if (j > i) {
      s += '-';
      s += std::to_string(r[j]);
    }
    ++shown;
    i = j + 1;
  }
  return s;
}

// theorem1: data.contexts [T][n][d], data.queries [T][d] exact; data.labels [T][d_out] exact or
// data.class_labels [T] integers, as `construct theorem1` embeds them. The certificate's example i is
// compared with DATA's row examples[i] (its "examples"; row i when absent), so that field is tied too.
// Every row of DATA must be covered: a certificate about some of DATA's examples is a difference that
// says how many it covers.
bool match_theorem1(const Value& cert, const Value& data, std::string& why) {
  const Value* cd = member(cert, "", "data", json::Type::Object, why);
  if (!cd) return false;
  const Value* dctx = data_member(data, "contexts", why);
  const Value* cctx = dctx ? member(*cd, "data", "contexts", json::Type::Array, why) : nullptr;
  if (!cctx) return false;
  const std::size_t cert_T = cctx->size(), data_T = dctx->size();
  std::vector<std::size_t> rows;
  if (!theorem1_rows(cert, cert_T, data_T, rows, why)) return false;
  if (!cert.find("examples") && cert_T != data_T) {
    why = "data.contexts: the certificate has " + std::to_string(cert_T) + " entries, DATA has " + std::to_string(data_T);
    return false;
  }
  // Compares the certificate's items with DATA's selected rows, position by position.
  auto equal_rows = [&](const Value& c, const Value& d, const std::string& key, Leaf leaf) {
    if (c.size() != cert_T) {
      why = "data." + key + ": the certificate has " + std::to_string(c.size()) + " entries, its contexts " +
            std::to_string(cert_T);
      return false;
    }
    if (d.size() != data_T) {
      why = "data." + key + ": DATA has " + std::to_string(d.size()) + " entries, its contexts " + std::to_string(data_T);
      return false;
    }
    for (std::size_t i = 0; i < cert_T; ++i)
      if (!equal_tree(*c.at(i), *d.at(rows[i]), match_at("data." + key, i), leaf, why)) return false;
    return true;
  };
  if (!equal_rows(*cctx, *dctx, "contexts", Leaf::Exact)) return false;
  const Value* dq = data_member(data, "queries", why);
  const Value* cq = dq ? member(*cd, "data", "queries", json::Type::Array, why) : nullptr;
  if (!cq || !equal_rows(*cq, *dq, "queries", Leaf::Exact)) return false;
  const Value* dcl = data.find("class_labels");
  const Value* dl = data.find("labels");
  if (dcl || dl) {
    const char* key = dcl ? "class_labels" : "labels";
    const Value* cv = cd->find(key);
    if (!cv) {
      why = std::string("data.") + key + ": DATA has " + (dcl ? "class" : "real") + " labels, the certificate " +
            (dcl ? "real" : "class") + " labels";
      return false;
    }
    const Value& dv = dcl ? *dcl : *dl;
    if (cv->type != json::Type::Array || dv.type != json::Type::Array) {
      if (!equal_tree(*cv, dv, std::string("data.") + key, dcl ? Leaf::Integer : Leaf::Exact, why)) return false;
    } else if (!equal_rows(*cv, dv, key, dcl ? Leaf::Integer : Leaf::Exact)) {
      return false;
    }
  } else {
    note_not_checked("labels: DATA has none (the certificate's own labels are the ones memorized)");
  }
  if (cert_T != data_T) {
    std::vector<std::size_t> missing;
    for (std::size_t r = 0, i = 0; r < data_T; ++r) {
      if (i < rows.size() && rows[i] == r) ++i;
      else missing.push_back(r);
    }
    why = "data: the certificate covers " + std::to_string(cert_T) + " of DATA's " + std::to_string(data_T) +
          " examples (rows " + row_list(rows) + ", equal DATA's exactly); DATA's " + (missing.size() == 1 ? "row " : "rows ") +
          row_list(missing) + (missing.size() == 1 ? " is" : " are") + " not covered";
    return false;
  }
  check_context().data_matched = true;
  note_applied(std::string("data: the certificate's contexts, queries") + (dcl || dl ? " and labels" : "") +
               " equal DATA's exactly" + (cert_T != data_T ? " (row by row, as its \"examples\" name them)" : ""));
  return true;
}

// ks: the certificate names each token by its index into "tokens" [V][d]; DATA spells every token out
// ("sequences" [N][n][d]). Labels: "labels" [N] (next-token) or "token_labels" [N][n] (seq-to-seq), which
// the certificate keeps in its "labels".
bool match_ks(const Value& cert, const Value& data, std::string& why) {
  const Value* dv = member(cert, "", "d", json::Type::Number, why);
  std::size_t d = 0;
  if (!dv || !read_size(*dv, "d", kMaxDimension, d, why)) return false;
  const Value* tv = member(cert, "", "tokens", json::Type::Array, why);
  const Value* sv = tv ? member(cert, "", "sequences", json::Type::Array, why) : nullptr;
  const Value* ds = sv ? data_member(data, "sequences", why) : nullptr;
  if (!ds) return false;
  std::vector<QRow> tokens(tv->size());
  for (std::size_t v = 0; v < tokens.size(); ++v)
    if (!read_rational_vector(*tv->at(v), match_at("tokens", v), d, tokens[v], why)) return false;
  if (sv->size() != ds->size()) {
    why = "sequences: the certificate has " + std::to_string(sv->size()) + " sequences, DATA has " +
          std::to_string(ds->size());
    return false;
  }
  for (std::size_t i = 0; i < ds->size(); ++i) {
    const json::Item crow_item = sv->at(i);
    const Value& crow = *crow_item;
    const json::Item drow_item = ds->at(i);
    const Value& drow = *drow_item;
    const std::string wi = match_at("sequences", i);
    if (crow.type != json::Type::Array) { why = wi + ": expected an array of token indices"; check_context().malformed = true; return false; }
    if (drow.type != json::Type::Array || crow.size() != drow.size()) {
      why = wi + ": the certificate has " + std::to_string(crow.size()) + " tokens, DATA has " +
            std::to_string(drow.size());
      return false;
    }
    for (std::size_t k = 0; k < drow.size(); ++k) {
      const std::string wk = match_at(wi, k);
      std::size_t id = 0;
      if (tokens.empty()) { why = wk + ": no token is in range (\"tokens\" is empty)"; return false; }
      if (!read_size(*crow.at(k), wk, tokens.size() - 1, id, why)) return false;
      const json::Item dt_item = drow.at(k);
      const Value& dt = *dt_item;
      if (dt.type != json::Type::Array || dt.size() != d) {
        why = wk + ": DATA's token has " + std::to_string(dt.size()) + " coordinates, the certificate's d = " +
              std::to_string(d);
        return false;
      }
      for (std::size_t j = 0; j < d; ++j) {
        mpq_class q;
        std::size_t unused = 0;
        if (!read_data_leaf(*dt.at(j), match_at(wk, j), Leaf::Exact, q, unused, why)) return false;
        if (q != tokens[id][j]) {
          why = match_at(wk, j) + ": the certificate has " + tokens[id][j].get_str() + " (token " + std::to_string(id) +
                "), DATA has " + q.get_str();
          return false;
        }
      }
    }
  }
  const Value* cl = member(cert, "", "labels", json::Type::Array, why);
  if (!cl) return false;
  const Value* dl = data.find("token_labels");
  if (!dl) dl = data.find("labels");
  if (dl) {
    if (!equal_tree(*cl, *dl, "labels", Leaf::Integer, why)) return false;
    note_applied("data: the certificate's token sequences and labels equal DATA's exactly");
  } else {
    note_applied("data: the certificate's token sequences equal DATA's exactly");
    note_not_checked("labels: DATA has none");
  }
  return true;
}

// dana24: "N" = DATA's "vocab", then "sequences" [T][S] and "next" [T], all integers.
bool match_dana24(const Value& cert, const Value& data, std::string& why) {
  const Value* nv = member(cert, "", "N", json::Type::Number, why);
  std::size_t N = 0, vocab = 0;
  if (!nv || !read_size(*nv, "N", kMaxInteger, N, why)) return false;
  const Value* dvocab = data.find("vocab");
  mpq_class unused;
  if (!dvocab || !read_data_leaf(*dvocab, "vocab", Leaf::Integer, unused, vocab, why)) {
    check_context().malformed = true;
    if (!dvocab) why = "DATA: expected \"vocab\" in the data set handed to the checker";
    return false;
  }
  if (N != vocab) { why = "N: the certificate has " + std::to_string(N) + ", DATA's vocab is " + std::to_string(vocab); return false; }
  for (const char* key : {"sequences", "next"}) {
    const Value* dv = data_member(data, key, why);
    const Value* cv = dv ? member(cert, "", key, json::Type::Array, why) : nullptr;
    if (!cv || !equal_tree(*cv, *dv, key, Leaf::Integer, why)) return false;
  }
  note_applied("data: the certificate's vocabulary, sequences and next tokens equal DATA's exactly");
  return true;
}

}  // namespace

bool match_data_supported(const std::string& kind) {
  return kind == "theorem1" || kind == "ks" || kind == "dana24";
}

bool match_data(const std::string& kind, const json::Value& cert, const json::Value& data, std::string& why) {
  if (data.type != json::Type::Object) {
    check_context().malformed = true;
    why = "DATA: expected a JSON object";
    return false;
  }
  if (kind == "theorem1") return match_theorem1(cert, data, why);
  if (kind == "ks") return match_ks(cert, data, why);
  if (kind == "dana24") return match_dana24(cert, data, why);
  why = "kind: --data is not supported for \"" + kind + "\" certificates";
  check_context().malformed = true;
  return false;
}

}  // namespace memcert_checker
