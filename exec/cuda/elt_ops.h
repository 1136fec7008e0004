// The scalar functions of the elementwise programs, compiled for both the
// host emulation and the device kernel, so that the two cannot disagree.
#pragma once

#include <math.h>

#include "exec/cuda/kernels.h"

#ifdef __CUDACC__
#define AIC_HD __host__ __device__ __forceinline__
#else
#define AIC_HD inline
#endif

namespace aic::cuda {

AIC_HD float EltBinary(EltOp op, float x, float y) {
  switch (op) {
    case EltOp::kAdd:
      return x + y;
    case EltOp::kSub:
      return x - y;
    case EltOp::kMul:
      return x * y;
    case EltOp::kDiv:
      return x / y;
    case EltOp::kPow:
      return powf(x, y);
    case EltOp::kMax:
      return (x != x || y != y) ? x + y : fmaxf(x, y);  // NaN propagates, as ONNX
    case EltOp::kMin:
      return (x != x || y != y) ? x + y : fminf(x, y);
    case EltOp::kPRelu:
      return x < 0 ? x * y : x;
    default:
      return x;
  }
}

AIC_HD float EltUnary(const EltInstr& in, float x) {
  switch (in.op) {
    case EltOp::kRelu:
      return x > 0 ? x : 0.0f * x;  // keeps NaN
    case EltOp::kLeakyRelu:
      return x < 0 ? in.a * x : x;
    case EltOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case EltOp::kTanh:
      return tanhf(x);
    case EltOp::kExp:
      return expf(x);
    case EltOp::kLog:
      return logf(x);
    case EltOp::kSqrt:
      return sqrtf(x);
    case EltOp::kAbs:
      return fabsf(x);
    case EltOp::kNeg:
      return -x;
    case EltOp::kErf:
      return erff(x);
    case EltOp::kReciprocal:
      return 1.0f / x;
    case EltOp::kFloor:
      return floorf(x);
    case EltOp::kCeil:
      return ceilf(x);
    case EltOp::kClip:
      return x != x ? x : fminf(fmaxf(x, in.a), in.b);
    case EltOp::kElu:
      return x < 0 ? in.a * (expf(x) - 1.0f) : x;
    case EltOp::kHardSigmoid:
      return fmaxf(0.0f, fminf(1.0f, in.a * x + in.b));
    case EltOp::kHardSwish:
      return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    case EltOp::kGeluErf:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case EltOp::kGeluTanh:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case EltOp::kSoftplus:
      return x > 20.0f ? x : log1pf(expf(x));
    case EltOp::kAffine:
      return x * in.a + in.b;
    default:
      return x;
  }
}

AIC_HD bool EltIsBinary(EltOp op) { return op <= EltOp::kPRelu; }

// Runs the program on one element: `load(j)` reads input j at this element.
template <typename Load>
AIC_HD float EltApply(const EltProgram& p, Load load) {
  float acc = load(0);
  for (int i = 0; i < p.n_instr; ++i) {
    const EltInstr& in = p.instr[i];
    if (EltIsBinary(in.op)) {
      float y = in.operand < 0 ? in.a : load(in.operand);
      acc = in.swap ? EltBinary(in.op, y, acc) : EltBinary(in.op, acc, y);
    } else {
      acc = EltUnary(in, acc);
    }
  }
  return acc;
}

}  // namespace aic::cuda
