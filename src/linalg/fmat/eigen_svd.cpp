// The one instantiation of Eigen::BDCSVD<Eigen::MatrixXd> (see memcert/linalg/fmat/eigen_svd.hpp).
#include "memcert/linalg/fmat/eigen_svd.hpp"

template class Eigen::BDCSVD<Eigen::MatrixXd>;
