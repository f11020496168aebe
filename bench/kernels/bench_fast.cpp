// Plain benchmark harness for the double-precision fast path: each case times memcert and the
// peer on the same input in the same run and prints the ratio (memcert time / peer time).
//   bench_fast [--quick] [--only NAME] [--theorem1]
// Peers: FLINT nmod_mat_rank / fmpz_mat_rank, LAPACK dgesdd (OpenBLAS) rank as numpy's matrix_rank,
// Arb arb_mat_solve at 64-bit precision.
#include <arb_mat.h>
#include <flint/fmpz_mat.h>
#include <flint/nmod_mat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/kruskal_sample.hpp"
#include "memcert/linalg/zmat/gram_int16.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/model/mha_enclosure.hpp"
#include "memcert/theory/mahdavi24/assumption2_batch.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
                        double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
                        int* iwork, int* info);
extern "C" void openblas_set_num_threads(int);
extern "C" void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
                       const double* a, const int* lda, const double* beta, double* c, const int* ldc);

using namespace memcert;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
template <class F>
double timed(F f) {
  double t = now();
  f();
  return now() - t;
}
void report(const char* name, const char* ours, double t_ours, const char* peer, double t_peer, const std::string& note) {
  std::printf("%-34s memcert %-28s %9.3f s | %-30s %9.3f s | ratio %7.3f  (%.1fx)  %s\n", name, ours, t_ours, peer,
              t_peer, t_ours / t_peer, t_peer / t_ours, note.c_str());
  std::fflush(stdout);
}

// numpy.linalg.matrix_rank: singular values by LAPACK gesdd, tol = S.max() * max(M, N) * eps.
std::size_t lapack_rank(const double* a_rowmajor, int m, int n) {
  // Column-major copy of the transpose has the same singular values: use A^T as an n x m col-major array.
  std::vector<double> a(a_rowmajor, a_rowmajor + static_cast<std::size_t>(m) * n);
  int M = n, N = m, lda = n, info = 0, lwork = -1, one = 1;
  std::vector<double> s(std::min(m, n));
  std::vector<int> iwork(8 * std::min(m, n));
  double wq = 0, du = 0;
  dgesdd_("N", &M, &N, a.data(), &lda, s.data(), &du, &one, &du, &one, &wq, &lwork, iwork.data(), &info);
  lwork = static_cast<int>(wq);
  std::vector<double> work(lwork);
  dgesdd_("N", &M, &N, a.data(), &lda, s.data(), &du, &one, &du, &one, work.data(), &lwork, iwork.data(), &info);
  if (info != 0) return 0;
  const double tol = s[0] * std::max(m, n) * 2.220446049250313e-16;
  std::size_t r = 0;
  for (double x : s) r += x > tol;
  return r;
}

bool want(const std::string& only, const char* name) { return only.empty() || only == name; }

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, theorem1 = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--theorem1")) theorem1 = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  openblas_set_num_threads(2);
  flint_set_num_threads(2);
  fast_set_threads(2);
  std::printf("memcert fast path vs peers (2 threads each where the peer supports it); kernel isa: %s\n",
              fast_detail::dmod_kernel_isa());
  std::mt19937_64 g(20261121);

  // 1. rank mod p of a dense 2000 x 2000 matrix (target: <= 0.5x FLINT).
  if (want(only, "modp")) {
    const std::size_t n = quick ? 1000 : 2000;
    const std::uint64_t p = prime_fast(0);
    DModMatrix d{p, n, n, std::vector<double>(n * n)};
    nmod_mat_t A;
    nmod_mat_init(A, n, n, p);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::uint64_t u = g() % p;
        nmod_mat_entry(A, i, j) = u;
        d.a[i * n + j] = u > (p - 1) / 2 ? double(u) - double(p) : double(u);
      }
    std::size_t r1 = 0;
    long r2 = 0;
    double t1 = timed([&] { r1 = dmod_rank_profile(d).rank; });
    double t2 = timed([&] { r2 = nmod_mat_rank(A); });
    nmod_mat_clear(A);
    char note[96];
    std::snprintf(note, sizeof note, "n=%zu p=%llu ranks %zu/%ld", n, (unsigned long long)p, r1, r2);
    report("rank mod p (dense)", "dmod_rank_profile", t1, "FLINT nmod_mat_rank", t2, note);
  }

  // 2. exact two-sided certified rank, 500 x 500 integer of rank 400 (10-bit factors) (target >= 10x FLINT).
  if (want(only, "exact")) {
    const std::size_t n = 500, k = 400;
    ZMatrix B(n, k), C(k, n);
    for (auto& x : B.data()) x = static_cast<long>(g() % 1024) - 512;
    for (auto& x : C.data()) x = static_cast<long>(g() % 1024) - 512;
    ZMatrix A = mat_mul(B, C);
    fmpz_mat_t F;
    fmpz_mat_init(F, n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) fmpz_set_mpz(fmpz_mat_entry(F, i, j), A(i, j).get_mpz_t());
    RankCertificate c;
    long r2 = 0;
    double t1 = timed([&] { c = zmat_rank_certified_fast(A); });
    double t2 = timed([&] { r2 = fmpz_mat_rank(F); });
    fmpz_mat_clear(F);
    char note[128];
    std::snprintf(note, sizeof note, "rank %zu/%ld, certificate: minor mod p + %zu primes (Hadamard)", c.rank, r2,
                  c.upper_primes.size());
    report("exact certified rank 500x500 r=400", "zmat_rank_certified_fast", t1, "FLINT fmpz_mat_rank (uncert.)",
           t2, note);
  }

  // 3. certified full rank of a 2000 x 2000 float64 matrix (targets: <= LAPACK SVD rank, >= 30x vs Arb).
  if (want(only, "float")) {
    const std::size_t n = quick ? 800 : 2000;
    std::normal_distribution<double> nd;
    std::vector<double> a(n * n);
    for (auto& x : a) x = nd(g);
    std::size_t r1 = 0, r2 = 0;
    double t1 = timed([&] { DModMatrix m = dmod_from_double_rows(a.data(), n, n, prime_fast(0)); r1 = dmod_rank_profile(m, {.threads = 0, .in_place = true}).rank; });
    double t2 = timed([&] { r2 = lapack_rank(a.data(), n, n); });
    char note[96];
    std::snprintf(note, sizeof note, "n=%zu rank %zu (certified exact) / %zu (float tol)", n, r1, r2);
    report("certified full rank float64", "exact values mod p", t1, "LAPACK dgesdd rank (uncert.)", t2, note);
    // Arb: certified solve A x = b at 64 bits (proves non-singularity when it succeeds).
    const std::size_t na = quick ? 300 : (only == "float" ? n : 1000);
    arb_mat_t AA, X, Bv;
    arb_mat_init(AA, na, na);
    arb_mat_init(X, na, 1);
    arb_mat_init(Bv, na, 1);
    for (std::size_t i = 0; i < na; ++i) {
      for (std::size_t j = 0; j < na; ++j) arb_set_d(arb_mat_entry(AA, i, j), a[i * n + j]);
      arb_set_ui(arb_mat_entry(Bv, i, 0), 1);
    }
    std::vector<double> sub(na * na);
    for (std::size_t i = 0; i < na; ++i)
      for (std::size_t j = 0; j < na; ++j) sub[i * na + j] = a[i * n + j];
    int ok = 0;
    std::size_t r3 = 0;
    double t3 = timed([&] { DModMatrix m = dmod_from_double_rows(sub.data(), na, na, prime_fast(0)); r3 = dmod_rank_profile(m, {.threads = 0, .in_place = true}).rank; });
    double t4 = timed([&] { ok = arb_mat_solve(X, AA, Bv, 64); });
    arb_mat_clear(AA);
    arb_mat_clear(X);
    arb_mat_clear(Bv);
    std::snprintf(note, sizeof note, "n=%zu rank %zu; arb_mat_solve %s", na, r3, ok ? "succeeded" : "FAILED");
    report("certified full rank float64", "exact values mod p", t3, "Arb arb_mat_solve prec 64", t4, note);
    // The Rump tier on the same matrix (what an enclosure would need): Gram + Cholesky with bounds.
    if (n <= 2000) {
      DMatrix dm(n, n);
      dm.data() = a;
      std::optional<SigmaLower> sl;
      double t5 = timed([&] { sl = sigma_min_sq_lower_fast(dm, Rational(0), false); });
      std::snprintf(note, sizeof note, "n=%zu sigma_min^2 >= %s (%s)", n, sl ? std::to_string(sl->mu.get_d()).c_str() : "-",
                    sl ? sl->tier.c_str() : "declined");
      report("certified sigma_min lower bound", "Rump (Gram+Cholesky)", t5, "LAPACK dgesdd rank (uncert.)", t2, note);
    }
  }

  // 3b. The Gram matrix C C^T of a 2000 x 2000 integer matrix in [-1000, 1000] (numpy's rank of int64 data
  // needs it): memcert's exact 16-bit product against OpenBLAS dsyrk in double (what numpy's a @ a.T
  // reaches, rounded) and FLINT's exact fmpz_mat_mul.
  if (want(only, "gram")) {
    const std::size_t n = quick ? 1000 : 2000;
    std::vector<std::int64_t> a(n * n);
    for (auto& x : a) x = static_cast<std::int64_t>(g() % 2001) - 1000;
    std::vector<double> ad(a.begin(), a.end()), g1(n * n), g2(n * n), g3(n * n);
    std::optional<double> fro2;
    const double t1 = timed([&] { fro2 = gram_lower_exact_i16(a.data(), n, n, false, g1.data()); });
    const int ni = static_cast<int>(n);
    const double one = 1, zero = 0;
    // Row-major C is column-major C^T: dsyrk('L', 'T') on it forms (C^T)^T C^T = C C^T, column-major.
    // memcert's double route before dsyrk: OpenBLAS's threads keep spinning for a while after a call and
    // would take the cores from whatever runs next.
    const double t3 = timed([&] { gram_lower_double(ad.data(), n, n, g3.data()); });
    const double t2 = timed([&] { dsyrk_("U", "T", &ni, &ni, &one, ad.data(), &ni, &zero, g2.data(), &ni); });
    fmpz_mat_t F, FT, P;
    fmpz_mat_init(F, n, n);
    fmpz_mat_init(FT, n, n);
    fmpz_mat_init(P, n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        fmpz_set_si(fmpz_mat_entry(F, i, j), static_cast<slong>(a[i * n + j]));
        fmpz_set_si(fmpz_mat_entry(FT, j, i), static_cast<slong>(a[i * n + j]));
      }
    const double t4 = timed([&] { fmpz_mat_mul(P, F, FT); });
    // Agreement on the lower triangle: FLINT's exact product = memcert's exact one entry by entry.
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        differ += fmpz_get_d(fmpz_mat_entry(P, i, j)) != g1[i * n + j] || g2[i * n + j] != g1[i * n + j];
    fmpz_mat_clear(F);
    fmpz_mat_clear(FT);
    fmpz_mat_clear(P);
    char note[128];
    std::snprintf(note, sizeof note, "n=%zu %s, %zu entries differ from FLINT / dsyrk", n,
                  fro2 ? gram_int16_kernel_name() : "DECLINED", differ);
    report("Gram C C^T, int in [-1000, 1000]", "gram_lower_exact_i16 (exact)", t1, "OpenBLAS dsyrk (double)", t2, note);
    report("Gram C C^T, int in [-1000, 1000]", "gram_lower_exact_i16 (exact)", t1, "FLINT fmpz_mat_mul (exact)", t4, note);
    report("Gram C C^T, int in [-1000, 1000]", "gram_lower_exact_i16 (exact)", t1, "memcert gram_lower_double", t3, note);
  }

  // 4. Assumption 2 on contexts of 197 x 768 (ViT sizes) and 5. the 5000-trial Kruskal sample.
  if (want(only, "assumption2")) {
    const std::size_t T = quick ? 200 : 2000, n = 197, d = 768;
    std::normal_distribution<double> nd;
    std::vector<DMatrix> ctx(T, DMatrix(n, d));
    for (auto& m : ctx)
      for (auto& x : m.data()) x = nd(g);
    BatchRankResult br;
    double t1 = timed([&] { br = dmat_batch_rank(ctx); });
    std::size_t full = 0;
    double t2 = timed([&] {
      for (auto& m : ctx) full += lapack_rank(m.data().data(), n, d) == n;
    });
    std::size_t ok = 0;
    for (auto r : br.rank) ok += r == n;
    char note[128];
    std::snprintf(note, sizeof note, "T=%zu: %zu/%zu full rank certified (%zu escalated); LAPACK says %zu", T, ok, T,
                  br.escalated, full);
    report("Assumption 2 (197x768 contexts)", "dmat_batch_rank", t1, "LAPACK dgesdd rank per context", t2, note);
  }
  if (want(only, "kruskal")) {
    const std::size_t T = 1985, d = 64, size = 32, trials = quick ? 500 : 5000;
    std::normal_distribution<double> nd;
    DMatrix q(T, d);
    for (auto& x : q.data()) x = nd(g);
    KruskalSample ks;
    double t1 = timed([&] { ks = dmat_kruskal_sample_fast(q, size, trials, 7); });
    std::mt19937_64 rng(7);
    std::size_t indep = 0;
    std::vector<double> sub(size * d);
    std::vector<std::size_t> idx(T);
    double t2 = timed([&] {
      for (std::size_t k = 0; k < trials; ++k) {
        for (std::size_t i = 0; i < T; ++i) idx[i] = i;
        for (std::size_t i = 0; i < size; ++i) std::swap(idx[i], idx[i + rng() % (T - i)]);
        for (std::size_t i = 0; i < size; ++i) std::copy(q.row(idx[i]), q.row(idx[i]) + d, sub.begin() + i * d);
        indep += lapack_rank(sub.data(), size, d) == size;
      }
    });
    char note[128];
    std::snprintf(note, sizeof note, "%zu trials of %zu-subsets of %zu queries in R^%zu: %zu/%zu independent (LAPACK %zu)",
                  trials, size, T, d, ks.independent, trials, indep);
    report("Kruskal sample (Table 1 protocol)", "dmat_kruskal_sample_fast", t1, "LAPACK dgesdd rank per trial", t2,
           note);
  }

  // 5b. Theorem 1's final rank certificate at its size: Z (1985 x 4096) of a random MHA layer with H=64,
  // n=32, d=64, d_h=32 as a rigorous double enclosure, then rank >= 1985 by the tiered Rump certificate.
  if (want(only, "zrank")) {
    const std::size_t T = quick ? 400 : 1985, n = 32, d = 64, dh = 32, H = quick ? 16 : 64;
    std::normal_distribution<double> nd;
    std::vector<DMatrix> ctx(T, DMatrix(n, d));
    DMatrix q(T, d);
    for (auto& E : ctx)
      for (auto& x : E.data()) x = nd(g);
    for (auto& x : q.data()) x = nd(g);
    std::vector<DMatrix> wk(H, DMatrix(d, dh)), wq(H, DMatrix(d, dh));
    for (std::size_t h = 0; h < H; ++h) {
      for (auto& x : wk[h].data()) x = nd(g) * 0.3;
      for (auto& x : wq[h].data()) x = nd(g) * 0.3;
    }
    ZEnclosureDouble z;
    std::optional<EnclosureRankCertificate> cert;
    std::vector<std::size_t> rows(T);
    for (std::size_t i = 0; i < T; ++i) rows[i] = i;
    double tz = timed([&] { z = mha_z_enclosure_double(ctx, q, wk, wq); });
    double tc = timed([&] { cert = enclosure_rank_lower_fast(z.centre, z.radius, rows); });
    std::size_t r2 = 0;
    double t2 = timed([&] { r2 = lapack_rank(z.centre.data().data(), T, H * d); });
    char note[160];
    std::snprintf(note, sizeof note, "Z %zux%zu: forward %.2f s + certificate %.2f s -> rank >= %zu (%s); LAPACK rank %zu",
                  T, H * d, tz, tc, cert ? cert->rows.size() : 0, cert ? cert->method.c_str() : "declined", r2);
    report("Theorem-1-size Z rank certificate", "Z enclosure + Rump tiers", tz + tc, "LAPACK dgesdd rank of Z (uncert.)",
           t2, note);
  }

  // 6. Theorem 1 at H=64, n=32, d=64, d_h=32 (T=1985).
  if (theorem1 && want(only, "theorem1")) {
    using namespace memcert::mahdavi24;
    AttentionDataset ds = generate_attention_dataset("general", 1985, 32, 64, std::nullopt, 1);
    Theorem1Options opt;
    opt.H = 64;
    opt.dh = 32;
    Theorem1Result res;
    double t = timed([&] { res = theorem1_construct(ds, opt); });
    std::printf("%-34s memcert theorem1_construct %9.3f s  memorized=%d rank_Z_lower=%zu (target < 120 s)\n",
                "Theorem 1 H=64 n=32 d=64 d_h=32", t, res.memorized ? 1 : 0, res.rank_Z_lower);
  } else if (want(only, "theorem1")) {
    std::printf("%-34s (run with --theorem1)\n", "Theorem 1 H=64 n=32 d=64 d_h=32");
  }
  return 0;
}
