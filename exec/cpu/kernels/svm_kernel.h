// A support vector machine's kernel row, K(x, svᵥ) for every support vector,
// 8 vectors at a time with AVX-512F (4 with AVX2 and FMA): the squared distances or dot products
// in double, each summed over features in order as the reference's
// (ops/ml/svm_models.h: SvmKernelRow), and RBF's exp by ExpPd (2 ulp). The
// reference's scalar libm exp took a third of an RBF SVM's time and its
// SSE2 loops another quarter.
#pragma once

#include "ops/ml/svm_models.h"

namespace aic::cpu::kernels {

// The fastest kernel-row function this CPU runs: the AVX-512F one, else the
// AVX2 one, else the reference's.
SvmKernelRowFn FastSvmKernelRow();

}  // namespace aic::cpu::kernels
