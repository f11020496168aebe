#pragma once
// memcert's public C++ API in one header (docs/CPP.md). Link memcert::core and memcert::checker, plus
// memcert::mahdavi, memcert::ks, memcert::dana for the constructions (pkg-config: `memcert`).
// The Eigen / Boost.Multiprecision entry points are memcert/eigen.hpp (library memcert::eigen), not
// included here so that using memcert does not need Boost.
#include "memcert/version.hpp"

// Exact numbers.
#include "memcert/numeric/interval.hpp"
#include "memcert/numeric/rational.hpp"

// Exact linear algebra and its certificates.
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/fmat/numerical_rank.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/typed_matrix.hpp"

// The independent checker.
#include "memcert/checker/checker.hpp"

// Data sets and files.
#include "memcert/data/dataset.hpp"
#include "memcert/data/decimals.hpp"
#include "memcert/data/file_kind.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/data/typed_dataset.hpp"

// Trained models (`memcert certify`).
#include "memcert/model/dana24_aot.hpp"
#include "memcert/model/mahdavi24_baseline.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/model/mha_model.hpp"
#include "memcert/model/state_dict.hpp"
#include "memcert/model/verdicts.hpp"
#include "memcert/model/weights_npz.hpp"

// The papers' constructions.
#include "memcert/theory/dana24/assoc_data.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/theory/ks25/lemmas.hpp"
#include "memcert/theory/ks25/relu_net.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"
#include "memcert/theory/mahdavi24/joint_scales.hpp"
#include "memcert/theory/mahdavi24/proposition1.hpp"
#include "memcert/theory/mahdavi24/quantities.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

// The claims registry (link memcert::proofs, an object library, for the registered claims).
#include "memcert/proofs/registry.hpp"

// Errors, options and run-time settings.
#include "memcert/util/choice.hpp"
#include "memcert/util/error.hpp"
#include "memcert/util/progress.hpp"
#include "memcert/util/stage_times.hpp"
#include "memcert/util/threads.hpp"
