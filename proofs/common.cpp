// Exhaustive exact subset tests shared by the claim files.
#include "common.hpp"

namespace memcert::proofs::detail {

QVector row_dependency(const QMatrix& v, const std::vector<std::size_t>& idx) {
  // Kernel of the d x |idx| matrix whose columns are the chosen rows.
  QMatrix cols = mat_transpose(mat_select_rows(v, idx));
  QMatrix K = qmat_kernel(cols);
  if (K.cols() == 0) return {};
  QVector c(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) c[i] = K(i, 0);
  return c;
}

bool kruskal_at_least(const QMatrix& v, std::size_t k, std::vector<std::size_t>* dep) {
  std::size_t T = v.rows();
  if (k == 0) return true;
  if (k > T) return false;
  std::vector<std::size_t> idx(k);
  for (std::size_t i = 0; i < k; ++i) idx[i] = i;
  while (true) {
    if (rank_of_rows(v, idx) < k) {
      if (dep) *dep = idx;
      return false;
    }
    std::size_t i = k;
    while (i > 0 && idx[i - 1] == T - k + i - 1) --i;
    if (i == 0) return true;
    ++idx[i - 1];
    for (std::size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}

}  // namespace memcert::proofs::detail
