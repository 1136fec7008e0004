// The launch descriptors of our own CUDA kernels and the functions that
// launch them. The descriptors are plain structs filled by the host-side
// lowering (no CUDA headers here), so the same index math is run by the
// host emulation in tests (emulate.cc) and by the kernels on the device
// (kernels_*.cu). Launch functions return a cudaError_t as int (0: OK).
#pragma once

#include <cstdint>

struct CUstream_st;

namespace aic::cuda {

using Stream = CUstream_st*;  // cudaStream_t without the CUDA headers

inline constexpr int kMaxRank = 8;
inline constexpr int kMaxEltInputs = 4;
inline constexpr int kMaxEltInstr = 12;

// One elementwise operation of a fused program (see EltProgram).
enum class EltOp : uint8_t {
  // binary: acc = acc op operand (operand op acc when `swap`)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kPRelu,
  // unary on acc
  kRelu,
  kLeakyRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kNeg,
  kErf,
  kReciprocal,
  kFloor,
  kCeil,
  kClip,
  kElu,
  kHardSigmoid,
  kHardSwish,
  kGeluErf,
  kGeluTanh,
  kSoftplus,
  kAffine,  // acc * a + b (scalar BatchNorm-like folds)
};

struct EltInstr {
  EltOp op = EltOp::kAdd;
  int8_t operand = -1;  // binary: input index, or -1 for the immediate `a`
  bool swap = false;    // binary: the accumulator is the right-hand side
  float a = 0, b = 0;   // immediate operand / unary parameters (alpha, beta, min, max)
};

// out[i] = program applied to acc = input0[i]; every input is read through
// its own broadcast strides (0 along broadcast dims) over the output dims.
struct EltProgram {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int n_inputs = 0;
  int64_t strides[kMaxEltInputs][kMaxRank] = {};
  int n_instr = 0;
  EltInstr instr[kMaxEltInstr] = {};
  int64_t count = 0;
};

// out[out_offset + Σ idx·out_strides] = in[in_offset + Σ idx·in_strides] over
// `dims`: transpose, slice, concat (one per input), expand, plain copies.
struct StridedCopy {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};
  int64_t in_offset = 0;
  int64_t out_offset = 0;
  int64_t count = 0;
  int elem_size = 4;
};

// Softmax / LogSoftmax over the middle axis of [outer, n, inner].
struct SoftmaxDesc {
  int64_t outer = 0, n = 0, inner = 0;
  bool log = false;
};

// LayerNormalization over the last `cols` of [rows, cols]; scale/bias of cols.
struct LayerNormDesc {
  int64_t rows = 0, cols = 0;
  float epsilon = 1e-5f;
  bool has_bias = false;
};

enum class ReduceOp : uint8_t { kSum, kMean, kMax, kMin };

// out[o] = reduce over r of in[base(o) + Σ r_idx·reduce_strides], base(o) = Σ o_idx·out_in_strides.
struct ReduceDesc {
  ReduceOp op = ReduceOp::kSum;
  int out_rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t out_in_strides[kMaxRank] = {};
  int red_rank = 0;
  int64_t red_dims[kMaxRank] = {};
  int64_t red_strides[kMaxRank] = {};
  int64_t out_count = 0;
  int64_t red_count = 0;
};

// out[o, j, i] = data[o, idx[j], i] for data [outer, axis_dim, inner].
struct GatherDesc {
  int64_t outer = 0, axis_dim = 0, inner = 0, n_indices = 0;
  bool indices_int64 = true;
  int elem_size = 4;
};

// Convolution without cuDNN: NCHW, groups, dilations (an implicit GEMM per group).
struct ConvDesc {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t k = 0, oh = 0, ow = 0;       // output channels and size
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
};

// Pooling, NCHW 2-D: max or average (count_include_pad as ONNX says).
struct PoolDesc {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool max = true;
  bool count_include_pad = false;
};

int LaunchEltwise(const EltProgram& p, const float* const* inputs, float* out, Stream stream);
int LaunchStridedCopy(const StridedCopy& c, const void* in, void* out, Stream stream);
int LaunchSoftmax(const SoftmaxDesc& d, const float* in, float* out, Stream stream);
int LaunchLayerNorm(const LayerNormDesc& d, const float* in, const float* scale, const float* bias, float* out,
                    Stream stream);
int LaunchReduce(const ReduceDesc& d, const float* in, float* out, Stream stream);
int LaunchGather(const GatherDesc& d, const void* data, const void* indices, void* out, Stream stream);
int LaunchConvImplicitGemm(const ConvDesc& d, const float* x, const float* w, float* y, Stream stream);
int LaunchPool(const PoolDesc& d, const float* x, float* y, Stream stream);

}  // namespace aic::cuda
