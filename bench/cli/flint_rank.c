/* Whole-process peer of `memcert rank`: reads a 2-d int64 .npy (C order, little endian; the files
 * bench/cli/run.sh writes) and prints its rank, by FLINT's nmod_mat_rank modulo the prime memcert's
 * lower side uses (mode "modp": a rank mod p, uncertified as a rank over Q) or fmpz_mat_rank (mode
 * "exact": the exact rank, no certificate).
 *   flint_rank modp|exact FILE.npy                                                                    */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flint/flint.h>
#include <flint/fmpz_mat.h>
#include <flint/nmod_mat.h>

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: flint_rank modp|exact FILE.npy\n"); return 2; }
  FILE* f = fopen(argv[2], "rb");
  if (!f) { perror(argv[2]); return 2; }
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) { fprintf(stderr, "not .npy v1\n"); return 2; }
  size_t hlen = pre[8] | (pre[9] << 8);
  char* h = malloc(hlen + 1);
  if (fread(h, 1, hlen, f) != hlen) return 2;
  h[hlen] = 0;
  if (!strstr(h, "'<i8'") || strstr(h, "True")) { fprintf(stderr, "expected C-order <i8\n"); return 2; }
  long rows, cols;
  char* s = strstr(h, "'shape': (");
  if (!s || sscanf(s, "'shape': (%ld, %ld)", &rows, &cols) != 2) { fprintf(stderr, "expected a 2-d shape\n"); return 2; }
  int64_t* v = malloc(sizeof(int64_t) * rows * cols);
  if (fread(v, sizeof(int64_t), rows * cols, f) != (size_t)(rows * cols)) return 2;
  fclose(f);
  long r;
  if (strcmp(argv[1], "modp") == 0) {
    nmod_mat_t a;
    const mp_limb_t p = 8388593; /* memcert's first prime (prime_fast(0)) */
    nmod_mat_init(a, rows, cols, p);
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < cols; ++j) {
        int64_t x = v[i * cols + j] % (int64_t)p;
        nmod_mat_entry(a, i, j) = (mp_limb_t)(x < 0 ? x + (int64_t)p : x);
      }
    r = nmod_mat_rank(a);
    nmod_mat_clear(a);
  } else {
    fmpz_mat_t a;
    fmpz_mat_init(a, rows, cols);
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < cols; ++j) fmpz_set_si(fmpz_mat_entry(a, i, j), v[i * cols + j]);
    r = fmpz_mat_rank(a);
    fmpz_mat_clear(a);
  }
  printf("%ld\n", r);
  free(v);
  free(h);
  return 0;
}
