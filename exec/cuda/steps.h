// The step kinds of a CUDA plan. Each holds the descriptor the lowering
// computed and the slots it reads and writes; Launch() runs it on the plan's
// stream, Emulate() runs the same descriptor on the host.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/cuda/epilogue.h"
#include "exec/cuda/internal.h"
#include "ops/op_def.h"

namespace aic::cuda {

// out[b] = epilogue(alpha · op(A[b]) · op(B[b]) + beta · C[b] + bias), all row-major.
struct MatMulDesc {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0;            // row-major leading dims of A and B as stored
  int64_t stride_a = 0, stride_b = 0;  // batch strides in elements (0: broadcast)
  float alpha = 1, beta = 0;           // beta applies to C (when c >= 0)
  Epilogue epilogue = Epilogue::kDefault;
};

// The host version of a MatMulStep (the emulation, and the oracle of tests).
void EmulateMatMul(const MatMulDesc& d, const float* a, const float* b, const float* bias, const float* c, float* out);

// The epilogue as an in-place elementwise program over the GEMM's output (and
// the bias), for when cuBLASLt has no algorithm with the fused epilogue: the
// step then runs a DEFAULT GEMM followed by this program.
EltProgram EpilogueAsProgram(const MatMulDesc& d, bool has_bias);

class MatMulStep : public Step {
 public:
  MatMulStep(const MatMulDesc& d, int a, int b, int bias, int c, int out);
  ~MatMulStep() override;
  absl::Status Prepare(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;
  size_t WorkspaceBytes() const override { return workspace_; }
  const MatMulDesc& desc() const { return d_; }
  int bias_slot() const { return bias_; }
  int c_slot() const { return c_; }

 private:
  MatMulDesc d_;
  int a_, b_, bias_, c_, out_;
  struct Lt;  // cuBLASLt descriptors and the chosen algorithm
  std::unique_ptr<Lt> lt_;
  size_t workspace_ = 0;
  bool split_epilogue_ = false;  // no algorithm with the fused epilogue: GEMM, then EpilogueAsProgram
};

class ConvStep : public Step {
 public:
  ConvStep(const ConvDesc& d, int x, int w, int y);
  ~ConvStep() override;
  absl::Status Prepare(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;
  size_t WorkspaceBytes() const override { return workspace_; }

 private:
  absl::Status PrepareCudnn(DeviceContext& ctx);
  ConvDesc d_;
  int x_, w_, y_;
  struct Dnn;  // cuDNN descriptors (null: the implicit-GEMM kernel)
  std::unique_ptr<Dnn> dnn_;
  size_t workspace_ = 0;
};

class EltStep : public Step {
 public:
  EltStep(const EltProgram& p, std::vector<int> inputs, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;
  const EltProgram& program() const { return p_; }

 private:
  EltProgram p_;
  std::vector<int> inputs_;
  int out_;
};

// One or more strided copies into one output (Concat: one part per input).
class CopyStep : public Step {
 public:
  struct Part {
    StridedCopy copy;
    int in;
  };
  CopyStep(std::vector<Part> parts, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;
  const std::vector<Part>& parts() const { return parts_; }

 private:
  std::vector<Part> parts_;
  int out_;
};

class SoftmaxStep : public Step {
 public:
  SoftmaxStep(const SoftmaxDesc& d, int in, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  SoftmaxDesc d_;
  int in_, out_;
};

class LayerNormStep : public Step {
 public:
  LayerNormStep(const LayerNormDesc& d, int in, int scale, int bias, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  LayerNormDesc d_;
  int in_, scale_, bias_, out_;
};

class ReduceStep : public Step {
 public:
  ReduceStep(const ReduceDesc& d, int in, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  ReduceDesc d_;
  int in_, out_;
};

class GatherStep : public Step {
 public:
  GatherStep(const GatherDesc& d, int data, int indices, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  GatherDesc d_;
  int data_, indices_, out_;
};

class PoolStep : public Step {
 public:
  PoolStep(const PoolDesc& d, int in, int out);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  PoolDesc d_;
  int in_, out_;
};

// A node the device path does not cover: inputs copied to the host, the
// reference kernel, outputs copied back. Synchronizes, so no CUDA Graph.
class FallbackStep : public Step {
 public:
  FallbackStep(const Node* node, int64_t opset, const OpDef* def, std::vector<int> inputs, std::vector<int> outputs);
  absl::Status Launch(const Plan& plan, DeviceContext& ctx) override;
  absl::Status Emulate(const Plan& plan, const Memory& mem) override;

 private:
  // Runs the kernel on host tensors; `in` reads an input slot into a tensor, `out` stores an output.
  absl::Status RunKernel(const Plan& plan, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  const Node* node_;
  int64_t opset_;
  const OpDef* def_;
  std::vector<int> inputs_;   // -1: omitted optional input
  std::vector<int> outputs_;  // -1: unrequested output
};

}  // namespace aic::cuda
