#pragma once
// Eigen's divide-and-conquer SVD (BDCSVD) of dynamic double matrices, compiled once: the engine
// instantiates it in src/linalg/fmat/eigen_svd.cpp (at the engine's full optimization) and every other file
// that includes this header links to that copy instead of instantiating its own. Why: one instantiation
// costs about 30 s of compile time (GCC 12), more than the rest of a typical file.
#include <Eigen/SVD>

extern template class Eigen::BDCSVD<Eigen::MatrixXd>;
