// Theorem 1's data by reference (docs/CERTIFICATES.md "Data by reference"): the referenced file's values
// and digest, its labels bound to the certificate's, and the "examples" field.
#include <cmath>
#include <future>

#include "kernel/context.hpp"
#include "kinds/mahdavi24/theorem1_stages.hpp"

namespace memcert_checker::theorem1 {

// data.file / data.digest (docs/CERTIFICATES.md "Data by reference"): the data file's values, asked of
// the caller's supplier, must hold at least T examples of shape n x d; the digest of the first T is
// recomputed here from those values and must equal the certificate's. The queries come back as exact
// rationals (Q); the contexts stay doubles in `arrays` (each is made exact when its example is checked).

std::string digest_mismatch(const std::string& mine, const std::string& named) {
  return "data.digest: the data supplied have digest " + mine + ", the certificate names " + named +
         " (not the data the certificate was made for)";
}

// The digest `mine` (v2: contexts, queries, labels) against the certificate's `named`. A certificate
// written before the digest covered labels names the v1 digest (contexts and queries only): accepted when
// that matches, the labels then being tied by the exact comparison with the file's (bind_file_labels).
bool digest_matches(const AttentionArrays& arrays, std::size_t T, const std::string& mine, const std::string& named,
                    std::string& why) {
  if (mine == named) return true;
  if (attention_arrays_digest_v1(arrays, T) == named) {
    note_applied("data.digest: an older digest of the contexts and queries only; the labels are compared with the file's exactly");
    return true;
  }
  why = digest_mismatch(mine, named);
  return false;
}

// The referenced file's labels, as the supplier gave them: real labels made exact and canonical here (the
// digest is over the canonical text, so "2/4" and "1/2" cannot name different digests).
bool canonical_file_labels(AttentionArrays& arrays, std::string& why) {
  using L = AttentionArrays::Labels;
  if (arrays.label_kind == L::classes && arrays.classes.size() != arrays.T) {
    why = "data.file: expected " + std::to_string(arrays.T) + " class labels";
    return false;
  }
  if (arrays.label_kind != L::real) return true;
  if (arrays.d_out == 0 || arrays.labels.size() != arrays.T * arrays.d_out) {
    why = "data.file: expected " + std::to_string(arrays.T) + " x d_out real labels";
    return false;
  }
  mpq_class q;
  for (std::size_t i = 0; i < arrays.labels.size(); ++i) {
    std::string& text = arrays.labels[i];
    if (text.empty() || text.size() > 100000 || q.set_str(text, 10) != 0 || q.get_den() == 0) {
      why = "data.file: label " + std::to_string(i) + " is not an exact rational";
      return false;
    }
    q.canonicalize();
    text = q.get_str();
  }
  return true;
}

// The certificate's labels (Y real, or cls classes, for its T examples) against the file's: equal
// exactly, else rejected naming the first difference. A file without labels ties nothing: listed.
bool bind_file_labels(const AttentionArrays& arrays, std::size_t T, bool class_labels, const QMat& Y,
                      const std::vector<std::size_t>& cls, std::string& why) {
  using L = AttentionArrays::Labels;
  if (arrays.label_kind == L::none) {
    note_not_checked("labels: the referenced data file has none (the certificate's own labels are the ones memorized)");
    return true;
  }
  if ((arrays.label_kind == L::classes) != class_labels) {
    why = std::string("data.") + (class_labels ? "class_labels" : "labels") + ": the certificate has " +
          (class_labels ? "class" : "real") + " labels, the data file " + (class_labels ? "real" : "class") + " labels";
    return false;
  }
  if (class_labels) {
    for (std::size_t t = 0; t < T; ++t)
      if (arrays.classes[t] != cls[t]) {
        why = at("data.class_labels", t) + ": the certificate has " + std::to_string(cls[t]) + ", the data file has " +
              std::to_string(arrays.classes[t]);
        return false;
      }
  } else {
    const std::size_t dout = Y.empty() ? 0 : Y[0].size();
    if (arrays.d_out != dout) {
      why = "data.labels: the certificate has " + std::to_string(dout) + " outputs per example, the data file " +
            std::to_string(arrays.d_out);
      return false;
    }
    mpq_class q;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < dout; ++j) {
        q.set_str(arrays.labels[t * dout + j], 10);  // canonical, checked by canonical_file_labels
        if (q != Y[t][j]) {
          why = at(at("data.labels", t), j) + ": the certificate has " + Y[t][j].get_str() + ", the data file has " + q.get_str();
          return false;
        }
      }
  }
  note_applied("data: the certificate's labels equal the referenced data file's exactly");
  return true;
}

bool read_referenced_data(const Value& data, std::size_t T, std::size_t n, std::size_t d, DataDigestJob& job,
                          QMat& Q, std::string& why, unsigned threads) {
  AttentionArrays& arrays = job.arrays;
  std::string file, digest;
  if (!read_string(data, "data", "file", file, why) || !read_string(data, "data", "digest", digest, why)) return false;
  const ArraysSupplier* supply = check_context().arrays;
  if (!supply) {
    check_context().malformed = true;
    why = "data.file: the certificate references its data (" + file + "); the data file must be supplied (verify --data)";
    return false;
  }
  std::string error;
  if (!(*supply)(file, arrays, error)) {
    check_context().malformed = true;
    why = error.empty() ? "data.file: " + file + ": could not be read" : error;
    return false;
  }
  if (arrays.n != n || arrays.d != d || arrays.T < T || arrays.context_values() != arrays.T * n * d ||
      (!arrays.contexts.empty() && !arrays.contexts_f32.empty()) || arrays.queries.size() != arrays.T * d) {
    why = "data.file: expected at least " + std::to_string(T) + " examples with contexts of " + std::to_string(n) + " x " +
          std::to_string(d) + ", the data have " + std::to_string(arrays.T) + " of " + std::to_string(arrays.n) + " x " +
          std::to_string(arrays.d);
    return false;
  }
  if (check_context().data_replaces_file && arrays.T != T) {
    // As for an embedded certificate (match_data.cpp): one about some of DATA's rows says so, not VALID.
    why = "data: DATA has " + std::to_string(arrays.T) + " examples, the certificate is about " + std::to_string(T) +
          " (the referenced file's first " + std::to_string(T) + "): DATA's rows from " + std::to_string(T) + " on are not covered";
    return false;
  }
  for (const std::vector<double>* v : {&arrays.contexts, &arrays.queries})
    for (double x : *v)
      if (!std::isfinite(x)) { why = "data.file: a value is not finite"; return false; }
  for (float x : arrays.contexts_f32)
    if (!std::isfinite(x)) { why = "data.file: a value is not finite"; return false; }
  if (!canonical_file_labels(arrays, why)) return false;
  job.expected = digest;
  job.T = T;
  if (threads >= 2) {
    job.running = std::async(std::launch::async, [&arrays, T] { return attention_arrays_digest(arrays, T); });
  } else {
    const std::string mine = attention_arrays_digest(arrays, T);
    if (!digest_matches(arrays, T, mine, digest, why)) return false;
  }
  Q.assign(T, QRow(d));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) mpq_set_d(Q[t][c].get_mpq_t(), arrays.queries[t * d + c]);
  note_applied("data: the first " + std::to_string(T) + " examples of the referenced data file, digest recomputed from its values");
  return true;
}

bool check_theorem1_body(const Value& cert, std::string& why, unsigned threads, DataDigestJob& job);

// "examples": which rows of the user's data set the certificate's T examples are (strictly increasing
// indices). The network is checked on the certificate's data; which rows of a data set those are is tied
// only by `verify --data` (match_data.cpp compares row i with DATA's row examples[i]), so here it must be
// well formed and is listed as not checked. A certificate referencing its data file is checked on the
// file's first T examples: its examples must name exactly those.
bool check_examples_field(const Value& cert, std::size_t T, bool by_file, std::string& why) {
  const Value* ev = cert.find("examples");
  if (!ev) return true;
  if (ev->type != json::Type::Array || ev->size() != T) {
    check_context().malformed = true;
    why = "examples: expected " + std::to_string(T) + " row indices";
    return false;
  }
  std::size_t prev = 0;
  for (std::size_t i = 0; i < T; ++i) {
    std::size_t row = 0;
    if (!read_size(*ev->at(i), at("examples", i), kMaxDimension, row, why)) return false;
    if (i > 0 && row <= prev) { why = at("examples", i) + ": expected strictly increasing row indices"; return false; }
    if (by_file && row != i) {
      why = at("examples", i) + ": names row " + std::to_string(row) + ", but the certificate is checked on the referenced file's first " +
            std::to_string(T) + " examples";
      return false;
    }
    prev = row;
  }
  if (!by_file && !check_context().data_matched)
    note_not_checked("examples (which rows of a data set the certificate's examples are: tied by verify --data DATA)");
  return true;
}

}  // namespace memcert_checker::theorem1
