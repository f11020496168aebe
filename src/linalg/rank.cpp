// The storage-filtered certified engine (rank.hpp): residues and Hadamard ingredients straight from
// int64 / double storage, rationals only for rational data.
#include "memcert/linalg/rank.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "memcert/linalg/kruskal_sample.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/numeric/modp.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert {

const char* rank_upper_name(RankUpper u) {
  switch (u) {
    case RankUpper::trivial: return "trivial";
    case RankUpper::multi_prime: return "multi-prime";
    case RankUpper::kernel: return "kernel";
  }
  return "trivial";
}

namespace {

// ||row_i||^2 of the int64 matrix, exactly.
std::vector<Integer> i64_row_norms_sq(const TypedMatrix& a, int threads) {
  std::vector<Integer> rn(a.rows, Integer(0));
  parallel_for(a.rows, threads, [&](std::size_t i) {
    const std::int64_t* r = a.i64.data() + i * a.cols;
    for (std::size_t j = 0; j < a.cols; ++j) {
      unsigned long m = r[j] < 0 ? 0UL - static_cast<unsigned long>(r[j]) : static_cast<unsigned long>(r[j]);
      if (m) {
        Integer t = m;
        mpz_addmul_ui(rn[i].get_mpz_t(), t.get_mpz_t(), m);
      }
    }
  });
  return rn;
}

// ||Z_i||^2 where Z_i = row i of the double matrix times the lcm of its entries' denominators, exactly
// as the checker scales it: times 2^-emin when the row's smallest exponent emin is negative, and
// unscaled when every entry is an integer (emin >= 0; dividing such a row by 2^emin would give smaller
// norms than the checker's, so a Hadamard bound the checker then rejects). Any power-of-two scaling
// has the same rank modulo odd primes, so the residues may use another one.
std::vector<Integer> f64_row_norms_sq(const TypedMatrix& a, int threads) {
  std::vector<Integer> rn(a.rows, Integer(0));
  parallel_for(a.rows, threads, [&](std::size_t i) {
    const double* r = a.f64.data() + i * a.cols;
    std::vector<std::uint64_t> mant(a.cols);
    std::vector<std::int64_t> ex(a.cols);
    std::int64_t emin = INT64_MAX;
    for (std::size_t j = 0; j < a.cols; ++j) {
      std::uint64_t bits = std::bit_cast<std::uint64_t>(r[j]);
      std::int64_t be = static_cast<std::int64_t>((bits >> 52) & 0x7ff);
      std::uint64_t m = (bits & ((std::uint64_t(1) << 52) - 1)) | (be != 0 ? std::uint64_t(1) << 52 : 0);
      std::int64_t e = (be == 0 ? 1 : be) - 1075;  // |x| = m 2^e
      if (m) {
        int tz = std::countr_zero(m);
        m >>= tz;
        e += tz;
        emin = std::min(emin, e);
      }
      mant[j] = m;
      ex[j] = e;
    }
    emin = std::min<std::int64_t>(emin, 0);  // integer entries stay as they are (see above)
    Integer v;
    for (std::size_t j = 0; j < a.cols; ++j) {
      if (!mant[j]) continue;
      v = static_cast<unsigned long>(mant[j]);
      mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(ex[j] - emin));
      mpz_addmul(rn[i].get_mpz_t(), v.get_mpz_t(), v.get_mpz_t());
    }
  });
  return rn;
}

RankCertificate with_storage(RankCertificate c, Storage s) {
  c.storage = s;
  return c;
}

}  // namespace

RankCertificate rank_certified(const TypedMatrix& a, int threads) {
  const int t = threads <= 0 ? fast_threads() : threads;
  const std::size_t m = a.rows, n = a.cols;
  if (a.storage == Storage::int64) {
    auto residues = [&](std::uint64_t q, DModMatrix& buf) { dmod_from_i64_into(a.i64.data(), m, n, q, buf); };
    // Integers: the multi-prime side has no escape hatch (its cost is the Hadamard bound's bits / 23
    // eliminations, polynomial in the input size).
    return with_storage(*rank_certified_multimodular(m, n, residues, [&] { return i64_row_norms_sq(a, t); },
                                                     static_cast<std::size_t>(-1), t),
                        a.storage);
  }
  if (a.storage == Storage::float64) {
    auto residues = [&](std::uint64_t q, DModMatrix& buf) { dmod_from_double_rows_into(a.f64.data(), m, n, q, buf); };
    return with_storage(
        *filtered<RankCertificate>(
            [&] {
              return rank_certified_multimodular(m, n, residues, [&] { return f64_row_norms_sq(a, t); },
                                                 kMaxUpperPrimes, t);
            },
            [&] { return std::optional(qmat_rank_certified(typed_matrix_to_qmat(a))); }),
        a.storage);
  }
  // Rational data: scale each row to integers once.
  ZMatrix z = qmat_row_scaled_integer(a.q);
  bool fits = std::all_of(z.data().begin(), z.data().end(), [](const Integer& x) { return x.fits_slong_p(); });
  if (fits) {
    std::vector<std::int64_t> v(z.data().size());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = z.data()[k].get_si();
    TypedMatrix zi = typed_matrix_from_i64(m, n, std::move(v));
    return with_storage(rank_certified(zi, t), Storage::rational);
  }
  std::vector<Integer> rn(m, Integer(0));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) mpz_addmul(rn[i].get_mpz_t(), z(i, j).get_mpz_t(), z(i, j).get_mpz_t());
  auto residues = [&](std::uint64_t q, DModMatrix& buf) { buf = dmod_from_zmat(z, q); };
  return with_storage(
      *filtered<RankCertificate>(
          [&] { return rank_certified_multimodular(m, n, residues, [&] { return rn; }, kMaxUpperPrimes, t); },
          [&] { return std::optional(qmat_rank_certified(a.q)); }),
      a.storage);
}

namespace {

// Row-scaled residues mod a 31-bit prime straight from int64 / float64 storage (the enumeration's
// input), count x dim row-major in [0, p). float64 rows are scaled as in f64_row_norms_sq: an entry
// m 2^e becomes m 2^(e - emin), a power-of-two multiple of the checker's lcm scaling, which is a unit
// mod the odd prime p and so changes no subset's independence mod p.
std::vector<std::uint64_t> typed_residues_31(const TypedMatrix& a, std::uint64_t p) {
  std::vector<std::uint64_t> r(a.rows * a.cols);
  const auto ps = static_cast<std::int64_t>(p);
  if (a.storage == Storage::int64) {
    for (std::size_t k = 0; k < r.size(); ++k) {
      const std::int64_t x = a.i64[k] % ps;
      r[k] = static_cast<std::uint64_t>(x < 0 ? x + ps : x);
    }
    return r;
  }
  std::vector<std::uint64_t> mant(a.cols);
  std::vector<std::int64_t> ex(a.cols);
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::int64_t emin = INT64_MAX;
    for (std::size_t j = 0; j < a.cols; ++j) {
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(a.f64[i * a.cols + j]);
      const auto be = static_cast<std::int64_t>((bits >> 52) & 0x7ff);
      mant[j] = (bits & ((std::uint64_t(1) << 52) - 1)) | (be != 0 ? std::uint64_t(1) << 52 : 0);
      ex[j] = (be == 0 ? 1 : be) - 1075;
      if (mant[j]) emin = std::min(emin, ex[j]);
    }
    for (std::size_t j = 0; j < a.cols; ++j) {
      if (!mant[j]) { r[i * a.cols + j] = 0; continue; }
      std::uint64_t v = modp::nmod_mul(mant[j] % p, modp::nmod_pow(2, static_cast<std::uint64_t>(ex[j] - emin), p), p);
      if (std::signbit(a.f64[i * a.cols + j])) v = modp::nmod_neg(v, p);
      r[i * a.cols + j] = v;
    }
  }
  return r;
}

}  // namespace

KruskalResult kruskal_rank_certified(const TypedMatrix& vectors, const KruskalOptions& opt) {
  if (vectors.storage == Storage::rational) return qmat_kruskal_rank(vectors.q, opt);
  // int64 / float64: residues from the stored values; rationals only for a subset found dependent.
  return kruskal_rank_by_residues(
      vectors.rows, vectors.cols, [&](std::uint64_t p) { return typed_residues_31(vectors, p); },
      [&](const std::vector<std::size_t>& subset) {
        QMatrix rows(subset.size(), vectors.cols);
        for (std::size_t t = 0; t < subset.size(); ++t) {
          const QMatrix r = typed_matrix_to_qmat(typed_matrix_rows(vectors, subset[t], 1));
          for (std::size_t j = 0; j < vectors.cols; ++j) rows(t, j) = r(0, j);
        }
        const QMatrix k = qmat_kernel(mat_transpose(rows));  // columns = the vectors
        QVector c;
        if (k.cols() == 0) return c;
        c.resize(subset.size());
        for (std::size_t t = 0; t < subset.size(); ++t) c[t] = k(t, 0);
        return c;
      },
      opt);
}

KruskalSample kruskal_sample_certified(const TypedMatrix& vectors, std::size_t size, std::size_t trials,
                                       std::uint64_t seed, int threads) {
  DMatrix d;
  if (typed_matrix_to_double(vectors, d)) return dmat_kruskal_sample_fast(d, size, trials, seed, threads);
  // Rationals (or int64 beyond 2^53): the row-scaled residues once, then the same batched protocol
  // (qmat_kruskal_sample would scale every sampled subset to big integers again).
  if (size > vectors.rows) return qmat_kruskal_sample(typed_matrix_to_qmat(vectors), size, trials, seed);  // its error
  const QMatrix q = typed_matrix_to_qmat(vectors);
  return dmod_kruskal_sample(dmod_from_qmat(q, prime_fast(0)), size, trials, seed,
                             [&](const std::vector<std::size_t>& sub) { return mat_select_rows(q, sub); }, threads);
}

}  // namespace memcert
