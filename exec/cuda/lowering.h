// The lowering pass of BuildPlan(): on the frame every backend shares
// (exec/common/lowering_frame.h: value facts, topological walk, folding,
// fallback kernel lookup, the lowering table), emits per node a device step (absorbing the
// single-consumer successors it can fuse: GEMM epilogues, BatchNorm into
// conv weights, elementwise chains into one program), a zero-copy view, or a
// host fallback. Constants every step reads go into one weights blob.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "exec/common/lowering_frame.h"
#include "exec/cuda/internal.h"
#include "exec/cuda/steps.h"

namespace aic::cuda {

using ValueInfo = exec::ValueFacts;

class Lowerer : public exec::LoweringFrame {
 public:
  explicit Lowerer(Plan& plan) : LoweringFrame(*plan.model, plan.constants), plan_(plan) {}
  absl::Status LowerAll();

  // --- used by the op lowerings (lower_*.cc) ---
  Plan& plan() { return plan_; }
  const CudaOptions& options() const { return plan_.options; }
  // Known at compile time with static dims and a device-storable dtype.
  bool IsF32(const Value* v);
  bool IsStorable(const Value* v);

  // A fresh arena slot holding value v (its dims and dtype).
  int OutputSlot(const Value* v);
  // A scratch arena slot (not a graph value).
  int ScratchSlot(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  // The slot holding v; constants get a weight slot (made once per value).
  int SlotOf(const Value* v);
  int WeightSlot(const Tensor& t, const std::string& name);
  void MarkFused(const Node* n) {
    MarkDone(n);
    ++plan_.stats.fused_nodes;
  }
  Step* AddStep(std::unique_ptr<Step> step, const std::string& label);

 private:
  absl::Status BindInput(const Value* in) override;
  absl::Status LowerNode(const Node& n) override;
  absl::Status BindOutput(const Value* out) override;
  absl::Status Fallback(const Node& n);

  Plan& plan_;
};

// The ai.aic ops this backend lowers (exec/cuda/backend.cc declares them).
std::set<std::string> LoweredAicOps();

// Op lowerings: true when they emitted steps for n; false leaves n to the fallback.
bool LowerView(Lowerer& L, const Node& n);
bool LowerMatMul(Lowerer& L, const Node& n);
bool LowerGemm(Lowerer& L, const Node& n);
bool LowerFusedLinearRelu(Lowerer& L, const Node& n);  // ai.aic FusedLinearReLU
bool LowerElementwise(Lowerer& L, const Node& n);
// Whether LowerElementwise's programs run op_type (standard semantics).
bool IsElementwiseOp(std::string_view op_type);
bool LowerBatchNorm(Lowerer& L, const Node& n);
bool LowerConv(Lowerer& L, const Node& n);
bool LowerPool(Lowerer& L, const Node& n);
bool LowerSoftmax(Lowerer& L, const Node& n);
bool LowerLayerNorm(Lowerer& L, const Node& n);
bool LowerReduce(Lowerer& L, const Node& n);
bool LowerTranspose(Lowerer& L, const Node& n);
bool LowerSlice(Lowerer& L, const Node& n);
bool LowerConcat(Lowerer& L, const Node& n);
bool LowerGather(Lowerer& L, const Node& n);
bool LowerExpand(Lowerer& L, const Node& n);

// Inference BatchNormalization with constant parameters as y = x·scale + shift
// per channel (scale, shift of dims [C]); false when it is not that.
bool FoldBatchNorm(Lowerer& L, const Node& bn, Tensor* scale, Tensor* shift);

// An elementwise program under construction: starts from one f32 value (or
// a fresh step's output) and absorbs single-consumer elementwise successors
// of the same output shape. Shared by the elementwise, conv and BatchNorm lowerings.
class EltChain {
 public:
  EltChain(Lowerer& L, std::vector<int64_t> out_dims) : L_(L), out_dims_(std::move(out_dims)) {}
  // input 0: the accumulator's start.
  bool Start(int slot, const std::vector<int64_t>& dims);
  // Appends node n (one of its inputs is `acc`, the current chain value).
  bool Append(const Node& n, const Value* acc);
  // A binary op with an operand given as a slot (e.g. a folded bias), named `what` in the label.
  bool AppendOperand(EltOp op, int slot, const std::vector<int64_t>& dims, const std::string& what);
  // Absorbs successors of `v` while they fit; returns the last value computed.
  const Value* Extend(const Value* v);
  // Emits the step writing `final_value`'s slot.
  void Emit(const Value* final_value, const std::string& label);
  int size() const { return static_cast<int>(instr_.size()); }

 private:
  int InputIndex(int slot, const std::vector<int64_t>& dims);
  Lowerer& L_;
  std::vector<int64_t> out_dims_;
  std::vector<int> slots_;
  std::vector<std::vector<int64_t>> dims_;
  std::vector<EltInstr> instr_;
  std::vector<std::string> names_;
};

}  // namespace aic::cuda
