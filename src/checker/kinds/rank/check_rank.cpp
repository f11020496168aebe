// kind "rank": two-sided bounds rank_lower <= rank(A) <= rank_upper for an exact rational matrix A
// (docs/THEORY.md section 7). All integer arguments are about B = A with each row multiplied by the lcm of
// its denominators: B has the same rank as A and the same kernel.
#include <algorithm>

#include "kernel/context.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

namespace {

// The integer matrix B as machine integers, when every entry fits (the common case: memcert's int64
// and float64 data scale to such rows); reducing those mod p costs one division instead of a GMP call.
// Dyadic data (the exact values of doubles, captured by the JSON reader) keep their numerators in v and
// the exponents of their denominators in k: then B[i][j] = v[i][j] 2^(row_k[i] - k[i][j]), row i scaled
// by its largest denominator 2^row_k[i] (the lcm of its denominators, as the general route scales it).
struct I64Mat {
  bool fits = true;
  std::size_t rows = 0, cols = 0;
  std::vector<long> v;
  std::vector<std::int16_t> k;  // empty: B[i][j] = v[i][j]
  std::vector<int> row_k;
  bool dyadic() const { return !k.empty(); }
  int shift(std::size_t i, std::size_t j) const { return dyadic() ? row_k[i] - k[i * cols + j] : 0; }
};

// 2^e mod p for e = 0 .. emax.
std::vector<std::uint64_t> pow2_mod(const ModP& f, int emax) {
  std::vector<std::uint64_t> t(static_cast<std::size_t>(emax) + 1, 1 % f.p);
  for (std::size_t e = 1; e < t.size(); ++e) t[e] = f.add(t[e - 1], t[e - 1]);
  return t;
}

// B[i][j] mod p in [0, p); `p2` is pow2_mod(f, json::kMaxDyadicExponent) for dyadic data (else unused).
std::uint64_t i64_residue(const I64Mat& a, std::size_t i, std::size_t j, const ModP& f,
                          const std::vector<std::uint64_t>& p2) {
  const long p = static_cast<long>(f.p);  // f.p <= kMaxPrime < 2^63
  const long x = a.v[i * a.cols + j] % p;  // in (-p, p)
  const std::uint64_t r = static_cast<std::uint64_t>(x < 0 ? x + p : x);
  return a.dyadic() ? f.mul(r, p2[static_cast<std::size_t>(a.shift(i, j))]) : r;
}

I64Mat i64_entries(const ZMat& b) {
  I64Mat r;
  r.rows = b.size();
  r.cols = b.empty() ? 0 : b[0].size();
  r.v.reserve(r.rows * r.cols);
  for (const ZRow& row : b)
    for (const mpz_class& x : row) {
      if (!x.fits_slong_p()) { r.fits = false; r.v.clear(); return r; }
      r.v.push_back(x.get_si());
    }
  return r;
}

// The machine-integer entries B[rows[i], cols[j]] (every index when rows / cols are null) as exact doubles,
// row-major with row stride dense_stride(columns), the columns beyond 0: the form rank_mod_p_dense and
// residues_dense take. Only when B is not dyadic and every entry is at most 2^52 in absolute value (every
// int64 matrix memcert reads in practice): false otherwise, and `out` is then left empty.
bool doubles_i64(const I64Mat& a, const std::vector<std::size_t>* rows, const std::vector<std::size_t>* cols,
                 std::vector<double>& out) {
  out.clear();
  if (a.dyadic()) return false;
  const std::size_t m = rows ? rows->size() : a.rows, n = cols ? cols->size() : a.cols, ld = dense_stride(n);
  const long limit = long{1} << 52;
  out.assign(m * ld, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const long* src = a.v.data() + (rows ? (*rows)[i] : i) * a.cols;
    double* dst = out.data() + i * ld;
    for (std::size_t j = 0; j < n; ++j) {
      const long x = src[cols ? (*cols)[j] : j];
      if (x > limit || x < -limit) { out.clear(); return false; }
      dst[j] = static_cast<double>(x);  // exact while |x| <= 2^53
    }
  }
  return true;
}

// Residues in [0, p) of the machine-integer entries B[rows[i], cols[j]] as doubles in doubles_i64's layout,
// for rank_mod_p_dense (p < kDensePrimeLimit); every index when rows / cols are null.
std::vector<double> residues_dense_i64(const I64Mat& a, const ModP& f, const std::vector<std::size_t>* rows,
                                       const std::vector<std::size_t>* cols) {
  std::vector<double> w;
  if (doubles_i64(a, rows, cols, w)) {
    residues_dense(w.data(), w.size(), f.p);
    return w;
  }
  const std::size_t m = rows ? rows->size() : a.rows, n = cols ? cols->size() : a.cols, ld = dense_stride(n);
  w.assign(m * ld, 0.0);
  const std::vector<std::uint64_t> p2 = a.dyadic() ? pow2_mod(f, json::kMaxDyadicExponent) : std::vector<std::uint64_t>{};
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      w[i * ld + j] = static_cast<double>(i64_residue(a, rows ? (*rows)[i] : i, cols ? (*cols)[j] : j, f, p2));
  return w;
}

ModMat reduce_mod_i64(const I64Mat& a, const ModP& f) {
  ModMat r(a.rows, std::vector<std::uint64_t>(a.cols));
  const std::vector<std::uint64_t> p2 = a.dyadic() ? pow2_mod(f, json::kMaxDyadicExponent) : std::vector<std::uint64_t>{};
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) r[i][j] = i64_residue(a, i, j, f, p2);
  return r;
}

// A text (an exact entry is a JSON string such as "-912"; rows and cols are JSON numbers) as a machine
// integer when it is a plain integer literal of at most 18 digits (-?(0|[1-9][0-9]*)): exactly the value
// parse_rational gives that text, with no GMP number made.
bool rank_integer_literal(const std::string& t, long& out) {
  std::size_t i = t.size() && t[0] == '-' ? 1 : 0;
  const std::size_t digits = t.size() - i;
  if (digits == 0 || digits > 18 || (digits > 1 && t[i] == '0')) return false;
  long v = 0;
  for (; i < t.size(); ++i) {
    if (t[i] < '0' || t[i] > '9') return false;
    v = v * 10 + (t[i] - '0');
  }
  out = t[0] == '-' ? -v : v;
  return true;
}

// The matrix object {rows, cols, data} as machine integers when every entry is a string holding such a
// literal (memcert's int64 data): B = A then, since no row has a denominator. false when anything differs
// from that shape (the general route then reads the matrix, decides, and reports what is wrong).
// The parser may already have read the data so (check_context().int_matrix): it is taken over when its shape
// is the declared one; otherwise `misshapen` is set and the caller reports what is wrong.
bool read_matrix_i64(const Value& v, I64Mat& out, bool& misshapen) {
  misshapen = false;
  if (v.type != json::Type::Object) return false;
  const Value* r = v.find("rows");
  const Value* c = v.find("cols");
  const Value* d = v.find("data");
  long rows = 0, cols = 0;
  const bool sized = r && c && d && r->type == json::Type::Number && c->type == json::Type::Number &&
                     d->type == json::Type::Array && rank_integer_literal(r->text, rows) &&
                     rank_integer_literal(c->text, cols) && rows >= 0 && cols >= 0 &&
                     static_cast<std::size_t>(rows) <= kMaxDimension && static_cast<std::size_t>(cols) <= kMaxDimension;
  if (json::IntMatrix* im = check_context().int_matrix; im && im->present) {
    if (!sized || im->rows != static_cast<std::size_t>(rows) || im->cols != static_cast<std::size_t>(cols)) {
      misshapen = true;
      return false;
    }
    out.rows = im->rows;
    out.cols = im->cols;
    out.v = std::move(im->v);
    out.k = std::move(im->k);
    if (out.dyadic()) {
      out.row_k.assign(out.rows, 0);
      for (std::size_t i = 0; i < out.rows; ++i)
        for (std::size_t j = 0; j < out.cols; ++j) out.row_k[i] = std::max<int>(out.row_k[i], out.k[i * out.cols + j]);
    }
    im->present = false;
    return true;
  }
  if (!sized || d->size() != static_cast<std::size_t>(rows)) return false;
  out.rows = static_cast<std::size_t>(rows);
  out.cols = static_cast<std::size_t>(cols);
  out.v.assign(out.rows * out.cols, 0);
  std::string text;
  json::Type t = json::Type::Null;
  std::string_view view;
  for (std::size_t i = 0; i < out.rows; ++i) {
    const json::Item row_item = d->at(i);
    const Value& row = *row_item;
    if (row.type != json::Type::Array || row.size() != out.cols) return false;
    for (std::size_t j = 0; j < out.cols; ++j)
      if (!row.leaf(j, t, view) || t != json::Type::String || !rank_integer_literal(text.assign(view), out.v[i * out.cols + j]))
        return false;
  }
  return true;
}

ZMat zmat_of_i64(const I64Mat& a) {
  ZMat b(a.rows, ZRow(a.cols));
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) {
      b[i][j] = a.v[i * a.cols + j];
      mpz_mul_2exp(b[i][j].get_mpz_t(), b[i][j].get_mpz_t(), static_cast<unsigned long>(a.shift(i, j)));
    }
  return b;
}

// sum_j x_ij^2 of row i, exactly: 128-bit partial sums (each square < 2^120) moved into GMP before they
// could overflow.
mpz_class row_norm_sq_i64(const I64Mat& a, std::size_t i) {
  if (a.dyadic()) {  // entries of many bits: exactly in GMP
    mpz_class total = 0, x;
    for (std::size_t j = 0; j < a.cols; ++j) {
      x = a.v[i * a.cols + j];
      mpz_mul_2exp(x.get_mpz_t(), x.get_mpz_t(), static_cast<unsigned long>(a.shift(i, j)));
      mpz_addmul(total.get_mpz_t(), x.get_mpz_t(), x.get_mpz_t());
    }
    return total;
  }
  mpz_class total = 0, part;
  u128 acc = 0;
  const u128 top = ~static_cast<u128>(0);
  auto flush = [&] {
    mpz_set_ui(part.get_mpz_t(), static_cast<unsigned long>(acc >> 64));
    mpz_mul_2exp(part.get_mpz_t(), part.get_mpz_t(), 64);
    mpz_add_ui(part.get_mpz_t(), part.get_mpz_t(), static_cast<unsigned long>(acc));
    total += part;
    acc = 0;
  };
  for (std::size_t j = 0; j < a.cols; ++j) {
    const long x = a.v[i * a.cols + j];
    const unsigned long ax = x < 0 ? 0UL - static_cast<unsigned long>(x) : static_cast<unsigned long>(x);
    const u128 sq = static_cast<u128>(ax) * ax;
    if (acc > top - sq) flush();
    acc += sq;
  }
  flush();
  return total;
}

// rank >= k: the k x k submatrix B[rows, cols] has a determinant that is non-zero modulo a prime,
// hence non-zero over Z.
// B is given either as `small` (machine integers) or as `b` (the other is null).
bool rank_check_lower(const Value& lower, const ZMat* b, const I64Mat* small, std::size_t m, std::size_t n,
                      std::size_t k, std::string& why) {
  std::string method;
  if (!read_string(lower, "lower", "method", method, why)) return false;
  if (method == "trivial") {
    if (k != 0) { why = "lower: method \"trivial\" proves only rank_lower = 0"; return false; }
    return true;
  }
  if (method != "minor-mod-p") { why = "lower.method: unknown \"" + method + "\""; return false; }
  const Value* pv = member(lower, "lower", "prime", json::Type::String, why);
  ModP f{2};
  if (!pv || !read_prime(*pv, "lower.prime", f, why)) return false;
  const Value* rv = member(lower, "lower", "rows", json::Type::Array, why);
  const Value* cv = rv ? member(lower, "lower", "cols", json::Type::Array, why) : nullptr;
  std::vector<std::size_t> rows, cols;
  if (!cv || !read_index_set(*rv, "lower.rows", k, m, rows, why) ||
      !read_index_set(*cv, "lower.cols", k, n, cols, why))
    return false;
  std::uint64_t det = 0;
  if (small && f.p < kDensePrimeLimit) {  // one large elimination: its trailing updates on the checker's threads
    std::vector<double> w = residues_dense_i64(*small, f, &rows, &cols);
    if (k == 0) det = 1;
    else rank_mod_p_dense(w.data(), k, k, dense_stride(k), f.p, &det, checker_threads());
  } else {
    ModMat minor(k, std::vector<std::uint64_t>(k));
    const std::vector<std::uint64_t> p2 =
        small && small->dyadic() ? pow2_mod(f, json::kMaxDyadicExponent) : std::vector<std::uint64_t>{};
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        if (small) {
          minor[i][j] = i64_residue(*small, rows[i], cols[j], f, p2);
        } else {
          minor[i][j] = f.reduce((*b)[rows[i]][cols[j]]);
        }
      }
    det = det_mod_p(std::move(minor), f);
  }
  if (det == 0) {
    why = "lower: the " + std::to_string(k) + "x" + std::to_string(k) + " minor is zero modulo " + pv->text;
    return false;
  }
  return true;
}

// rank <= u via n - u kernel vectors: B v = 0 exactly for each, and they are independent because
// their restriction to the coordinates `free_rows` is a non-singular square matrix.
bool check_kernel(const Value& upper, const ZMat& b, std::size_t n, std::size_t u, std::string& why) {
  const std::size_t c = n - u;
  const Value* kv = member(upper, "upper", "kernel", json::Type::Array, why);
  if (!kv) return false;
  if (kv->size() != c) {
    why = "upper.kernel: expected cols - rank_upper = " + std::to_string(c) + " vectors, got " +
          std::to_string(kv->size());
    return false;
  }
  ZMat kernel(c);  // each vector scaled to integers: scaling keeps both B v = 0 and independence
  for (std::size_t t = 0; t < c; ++t) {
    QRow v;
    if (!read_rational_vector(*kv->at(t), "upper.kernel[" + std::to_string(t) + "]", n, v, why)) return false;
    kernel[t] = scale_row_to_integers(v);
  }
  const Value* fv = member(upper, "upper", "free_rows", json::Type::Array, why);
  std::vector<std::size_t> free_rows;
  if (!fv || !read_index_set(*fv, "upper.free_rows", c, n, free_rows, why)) return false;
  mpz_class s;
  for (std::size_t t = 0; t < c; ++t)
    for (std::size_t i = 0; i < b.size(); ++i) {
      s = 0;
      for (std::size_t j = 0; j < n; ++j) mpz_addmul(s.get_mpz_t(), b[i][j].get_mpz_t(), kernel[t][j].get_mpz_t());
      if (s != 0) {
        why = "upper.kernel[" + std::to_string(t) + "]: row " + std::to_string(i) + " of A times it is not 0";
        return false;
      }
    }
  // K[free_rows, :] must be non-singular. Non-zero modulo a prime proves it quickly; only when that
  // residue is 0 do we fall back to the exact Bareiss determinant.
  ZMat sq(c, ZRow(c));
  for (std::size_t a = 0; a < c; ++a)
    for (std::size_t t = 0; t < c; ++t) sq[a][t] = kernel[t][free_rows[a]];
  const ModP f{2305843009213693951ull};  // 2^61 - 1, a prime
  if (det_mod_p(reduce_mod(sq, f), f) != 0) return true;
  if (det_bareiss(std::move(sq)) != 0) return true;
  why = "upper: the kernel vectors restricted to free_rows are singular (not shown independent)";
  return false;
}

// rank <= u via distinct primes with rank(B mod p) <= u for each: any (u+1)-minor D of B is then
// divisible by every p, and |D| <= product of the u+1 largest row norms (Hadamard) < prod p forces
// D = 0. Squares are compared so everything stays in integers.
bool check_multi_prime(const Value& upper, const ZMat* b, const I64Mat* given_small, std::size_t m,
                       std::size_t n, std::size_t u, std::string& why) {
  const Value* pv = member(upper, "upper", "primes", json::Type::Array, why);
  if (!pv) return false;
  if (pv->empty()) { why = "upper.primes: empty"; return false; }
  std::vector<std::uint64_t> seen;
  mpz_class product = 1;
  for (std::size_t t = 0; t < pv->size(); ++t) {
    std::string where = "upper.primes[" + std::to_string(t) + "]";
    ModP f{2};
    if (!read_prime(*pv->at(t), where, f, why)) return false;
    if (std::find(seen.begin(), seen.end(), f.p) != seen.end()) {
      why = where + ": prime " + std::to_string(f.p) + " repeated (primes must be distinct)";
      return false;
    }
    seen.push_back(f.p);
    product *= mpz_class(std::to_string(f.p));
  }
  // One elimination per prime, on the checker's threads (independent of each other; the first prime
  // in the certificate's order that fails is reported, whatever the thread split). Entries that are
  // doubles already (doubles_i64) are converted once; each prime then reduces them into its thread's
  // buffer.
  std::vector<std::size_t> ranks(seen.size());
  const I64Mat small = given_small ? I64Mat{} : i64_entries(*b);
  const I64Mat& ints = given_small ? *given_small : small;
  std::vector<double> exact;
  const bool doubles = ints.fits && doubles_i64(ints, nullptr, nullptr, exact);
  const unsigned threads = checker_threads();
  std::vector<std::vector<double>> buffers(threads);
  parallel_for(seen.size(), threads, [&](std::size_t t, unsigned worker) {
    const ModP f{seen[t]};
    if (ints.fits && f.p < kDensePrimeLimit) {
      std::vector<double>& w = buffers[worker];
      if (doubles) {
        w.resize(exact.size());
        residues_dense(w.data(), exact.data(), exact.size(), f.p);
      } else {
        w = residues_dense_i64(ints, f, nullptr, nullptr);
      }
      // the primes are the parallel unit
      ranks[t] = rank_mod_p_dense(w.data(), ints.rows, ints.cols, dense_stride(ints.cols), f.p, nullptr, 1);
    } else {
      ranks[t] = rank_mod_p(ints.fits ? reduce_mod_i64(ints, f) : reduce_mod(*b, f), f);
    }
  });
  for (std::size_t t = 0; t < seen.size(); ++t)
    if (ranks[t] > u) {
      why = "upper.primes[" + std::to_string(t) + "]: rank modulo " + std::to_string(seen[t]) + " is " +
            std::to_string(ranks[t]) + " > rank_upper";
      return false;
    }
  if (u >= std::min(m, n)) return true;  // no (u+1)-minor exists: nothing more to prove
  std::vector<mpz_class> norms(m);
  for (std::size_t i = 0; i < m; ++i)
    if (given_small)
      norms[i] = row_norm_sq_i64(*given_small, i);
    else
      for (std::size_t j = 0; j < n; ++j) mpz_addmul(norms[i].get_mpz_t(), (*b)[i][j].get_mpz_t(), (*b)[i][j].get_mpz_t());
  std::sort(norms.begin(), norms.end(), [](const mpz_class& x, const mpz_class& y) { return x > y; });
  mpz_class hadamard_sq = 1;
  for (std::size_t i = 0; i <= u; ++i) hadamard_sq *= norms[i];
  if (product * product <= hadamard_sq) {
    why = "upper: the product of the primes does not exceed the Hadamard bound of the (rank_upper+1)-minors";
    return false;
  }
  return true;
}

}  // namespace

bool check_rank(const Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "rank") { why = "claim: kind \"rank\" proves the claim \"rank\", not \"" + claim + "\""; return false; }
  std::size_t m = 0, n = 0;
  const Value* mv = member(cert, "", "matrix", json::Type::Object, why);
  if (!mv) return false;
  // Integer data (the common case) are read as machine integers; anything else as exact rationals,
  // each row then scaled to integers.
  I64Mat small;
  bool misshapen = false;
  const bool ints = read_matrix_i64(*mv, small, misshapen);
  QMat a;
  if (ints) {
    m = small.rows, n = small.cols;
  } else if (misshapen) {
    // The parser read data straight into numbers but rows / cols do not fit it: the general reader, given
    // the entries back as text, says what is wrong exactly as it would have.
    json::Value whole = *mv;
    json::IntMatrix& im = *check_context().int_matrix;
    for (auto& member : whole.members)
      if (member.first == "data") {
        member.second = json::Value{};
        member.second.type = json::Type::Array;
        for (std::size_t i = 0; i < im.rows; ++i) {
          json::Value row;
          row.type = json::Type::Array;
          for (std::size_t j = 0; j < im.cols; ++j) {
            const std::size_t e = i * im.cols + j;
            json::Value x;
            x.type = json::Type::String;
            mpq_class q(im.v[e]);  // the entry's value, written as read_matrix reads it
            if (!im.k.empty()) mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<unsigned long>(im.k[e]));
            x.text = q.get_str();
            row.append(std::move(x));
          }
          member.second.append(std::move(row));
        }
      }
    im = json::IntMatrix{};
    if (!read_matrix(whole, "matrix", a, m, n, why)) return false;
  } else if (!read_matrix(*mv, "matrix", a, m, n, why)) {
    return false;
  }
  const std::size_t full = std::min(m, n);
  std::size_t k = 0, u = 0;
  const Value* kv = member(cert, "", "rank_lower", json::Type::Number, why);
  if (!kv || !read_size(*kv, "rank_lower", full, k, why)) return false;
  const Value* uv = member(cert, "", "rank_upper", json::Type::Number, why);
  if (!uv || !read_size(*uv, "rank_upper", full, u, why)) return false;
  if (k > u) { why = "rank_lower > rank_upper"; return false; }
  if (const Value* rv = cert.find("rank")) {  // optional: the exact rank, only when both bounds meet
    std::size_t r;
    if (!read_size(*rv, "rank", full, r, why)) return false;
    if (r != k || r != u) { why = "rank: claimed exact rank " + std::to_string(r) + " is not what the bounds prove"; return false; }
  }
  const ZMat b = ints ? ZMat{} : scale_rows_to_integers(a);
  const Value* lower = member(cert, "", "lower", json::Type::Object, why);
  if (!lower || !rank_check_lower(*lower, ints ? nullptr : &b, ints ? &small : nullptr, m, n, k, why)) return false;
  const Value* upper = member(cert, "", "upper", json::Type::Object, why);
  if (!upper) return false;
  std::string method;
  if (!read_string(*upper, "upper", "method", method, why)) return false;
  if (method == "trivial") {
    if (u != full) { why = "upper: method \"trivial\" proves only rank_upper = min(rows, cols)"; return false; }
    return true;
  }
  if (method == "kernel") return check_kernel(*upper, ints ? zmat_of_i64(small) : b, n, u, why);
  if (method == "multi-prime") return check_multi_prime(*upper, ints ? nullptr : &b, ints ? &small : nullptr, m, n, u, why);
  why = "upper.method: unknown \"" + method + "\"";
  return false;
}

}  // namespace memcert_checker
