// Elementwise nodes as fused programs over the one broadcast driver: a node
// and the chain of single-consumer elementwise successors with its output
// shape become one kernel (the exact-erf GELU that exporters spell as
// Div/Erf/Add/Mul/Mul is one pass); scalar constants become immediates.
// Standalone BatchNormalization is a Mul/Add program with folded constants.
#include <cmath>
#include <limits>

#include "absl/strings/str_join.h"
#include "exec/cuda/index_math.h"
#include "ops/fused/standard_aliases.h"
#include "ops/nn/batch_norm_affine.h"
#include "ops/nn/clip_bounds.h"
#include "exec/cuda/lowering.h"

namespace aic::cuda {

namespace {

struct EltKind {
  EltOp op;
  bool binary;
};

// The elementwise ops the programs run, by op type.
const absl::flat_hash_map<std::string, EltKind>& EltKinds() {
  static const auto* table = new absl::flat_hash_map<std::string, EltKind>{
      {"Add", {EltOp::kAdd, true}},
      {"Sub", {EltOp::kSub, true}},
      {"Mul", {EltOp::kMul, true}},
      {"Div", {EltOp::kDiv, true}},
      {"Pow", {EltOp::kPow, true}},
      {"Max", {EltOp::kMax, true}},
      {"Min", {EltOp::kMin, true}},
      {"PRelu", {EltOp::kPRelu, true}},
      {"Relu", {EltOp::kRelu, false}},
      {"LeakyRelu", {EltOp::kLeakyRelu, false}},
      {"Sigmoid", {EltOp::kSigmoid, false}},
      {"Tanh", {EltOp::kTanh, false}},
      {"Exp", {EltOp::kExp, false}},
      {"Log", {EltOp::kLog, false}},
      {"Sqrt", {EltOp::kSqrt, false}},
      {"Abs", {EltOp::kAbs, false}},
      {"Neg", {EltOp::kNeg, false}},
      {"Erf", {EltOp::kErf, false}},
      {"Reciprocal", {EltOp::kReciprocal, false}},
      {"Floor", {EltOp::kFloor, false}},
      {"Ceil", {EltOp::kCeil, false}},
      {"Clip", {EltOp::kClip, false}},
      {"Elu", {EltOp::kElu, false}},
      {"HardSigmoid", {EltOp::kHardSigmoid, false}},
      {"HardSwish", {EltOp::kHardSwish, false}},
      {"Softplus", {EltOp::kSoftplus, false}},
      {"Gelu", {EltOp::kGeluErf, false}},
  };
  return *table;
}

std::optional<EltKind> KindOf(const Node& n) {
  if (!HasStandardSemantics(n) || n.num_outputs() != 1) return std::nullopt;
  auto it = EltKinds().find(n.op_type);
  if (it == EltKinds().end()) return std::nullopt;
  if (it->second.binary && n.num_inputs() != 2) return std::nullopt;
  return it->second;
}

// The unary instruction for n (attributes and constant inputs as parameters).
std::optional<EltInstr> UnaryInstr(Lowerer& L, const Node& n, EltOp op) {
  EltInstr in;
  in.op = op;
  switch (op) {
    case EltOp::kLeakyRelu:
      in.a = n.GetFloat("alpha", 0.01f);
      break;
    case EltOp::kElu:
      in.a = n.GetFloat("alpha", 1.0f);
      break;
    case EltOp::kHardSigmoid:
      in.a = n.GetFloat("alpha", 0.2f);
      in.b = n.GetFloat("beta", 0.5f);
      break;
    case EltOp::kGeluErf:
      if (n.GetString("approximate", "none") == "tanh") in.op = EltOp::kGeluTanh;
      break;
    case EltOp::kClip: {
      ClipBounds b = DecodeClipBounds(n, L.OpsetOf(n), [&](size_t i) { return L.Const(n.input(i)); });
      if (!b.known()) return std::nullopt;
      in.a = b.lo ? static_cast<float>(*b.lo) : -std::numeric_limits<float>::infinity();
      in.b = b.hi ? static_cast<float>(*b.hi) : std::numeric_limits<float>::infinity();
      break;
    }
    default:
      if (n.num_inputs() != 1) return std::nullopt;
  }
  return in;
}

}  // namespace

int EltChain::InputIndex(int slot, const std::vector<int64_t>& dims) {
  for (size_t j = 0; j < slots_.size(); ++j) {
    if (slots_[j] == slot) return static_cast<int>(j);
  }
  if (slots_.size() >= static_cast<size_t>(kMaxEltInputs) || !BroadcastStrides(dims, out_dims_)) return -1;
  slots_.push_back(slot);
  dims_.push_back(dims);
  return static_cast<int>(slots_.size()) - 1;
}

bool EltChain::Start(int slot, const std::vector<int64_t>& dims) {
  if (out_dims_.size() > static_cast<size_t>(kMaxRank)) return false;
  return InputIndex(slot, dims) == 0;
}

bool EltChain::AppendOperand(EltOp op, int slot, const std::vector<int64_t>& dims, const std::string& what) {
  if (instr_.size() >= static_cast<size_t>(kMaxEltInstr)) return false;
  int j = InputIndex(slot, dims);
  if (j < 0) return false;
  EltInstr in;
  in.op = op;
  in.operand = static_cast<int8_t>(j);
  instr_.push_back(in);
  names_.push_back(what);
  return true;
}

bool EltChain::Append(const Node& n, const Value* acc) {
  auto kind = KindOf(n);
  if (!kind || instr_.size() >= static_cast<size_t>(kMaxEltInstr)) return false;
  if (!kind->binary) {
    if (n.input(0) != acc) return false;
    auto in = UnaryInstr(L_, n, kind->op);
    if (!in) return false;
    instr_.push_back(*in);
    names_.push_back(n.op_type);
    return true;
  }
  bool swap = n.input(1) == acc && n.input(0) != acc;
  const Value* other = swap ? n.input(0) : n.input(1);
  if (n.input(swap ? 1 : 0) != acc || other == acc) return false;
  if (kind->op == EltOp::kPRelu && swap) return false;
  EltInstr in;
  in.op = kind->op;
  in.swap = swap;
  if (auto s = L_.ScalarConst(other)) {
    in.a = *s;
  } else {
    if (!L_.IsF32(other) || (L_.Const(other) == nullptr && L_.V(other).slot < 0)) return false;
    int j = InputIndex(L_.SlotOf(other), L_.V(other).dims);
    if (j < 0) return false;
    in.operand = static_cast<int8_t>(j);
  }
  instr_.push_back(in);
  names_.push_back(n.op_type);
  return true;
}

const Value* EltChain::Extend(const Value* v) {
  if (!L_.options().fuse_epilogues) return v;
  while (const Node* c = L_.SoleConsumer(v)) {
    const Value* y = c->output(0);
    if (!KindOf(*c) || y == nullptr || !L_.IsF32(y) || L_.V(y).dims != out_dims_) break;
    if (!Append(*c, v)) break;  // Append changes nothing when it declines
    L_.MarkFused(c);
    v = y;
  }
  return v;
}

void EltChain::Emit(const Value* final_value, const std::string& label) {
  EltProgram p;
  bool ok = SetEltShape(p, out_dims_, dims_);
  AIC_CHECK(ok, "elementwise program shape was checked when its inputs were added");
  p.n_instr = static_cast<int>(instr_.size());
  for (size_t i = 0; i < instr_.size(); ++i) p.instr[i] = instr_[i];
  int out = L_.OutputSlot(final_value);
  std::string text = label;
  if (!names_.empty()) absl::StrAppend(&text, " [", absl::StrJoin(names_, ","), "]");
  L_.AddStep(std::make_unique<EltStep>(p, slots_, out), text);
}

bool IsElementwiseOp(std::string_view op_type) { return EltKinds().contains(std::string(op_type)); }

bool LowerElementwise(Lowerer& L, const Node& n) {
  auto kind = KindOf(n);
  const Value* y = n.output(0);
  if (!kind || y == nullptr || !L.IsF32(y)) return false;
  for (const Value* in : n.inputs()) {
    if (in != nullptr && !L.IsF32(in) && !(n.op_type == "Clip" && L.ScalarConst(in))) return false;
  }
  EltChain chain(L, L.V(y).dims);
  const Value* start = n.input(0);
  if (kind->binary && L.ScalarConst(start) && !L.ScalarConst(n.input(1))) start = n.input(1);
  if (!chain.Start(L.SlotOf(start), L.V(start).dims)) return false;
  if (n.input(0) == n.input(1) && kind->binary) {
    if (!chain.AppendOperand(kind->op, L.SlotOf(start), L.V(start).dims, n.op_type)) return false;
  } else if (!chain.Append(n, start)) {
    return false;
  }
  const Value* last = chain.Extend(y);
  chain.Emit(last, n.Describe());
  return true;
}

bool FoldBatchNorm(Lowerer& L, const Node& bn, Tensor* scale, Tensor* shift) {
  if (bn.num_inputs() < 5) return false;
  const Tensor *s = L.Const(bn.input(1)), *b = L.Const(bn.input(2)), *mean = L.Const(bn.input(3)),
               *var = L.Const(bn.input(4));
  for (const Tensor* t : {s, b, mean, var}) {
    if (t != nullptr && t->dtype() != DType::kFloat && t->dtype() != DType::kDouble) return false;
  }
  std::optional<ChannelAffine> a = BatchNormAsAffine(bn, s, b, mean, var);
  if (!a) return false;
  *scale = a->ScaleF32();
  *shift = a->ShiftF32();
  return true;
}

bool LowerBatchNorm(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y) || L.V(x).dims.size() < 2) return false;
  Tensor scale, shift;
  if (!FoldBatchNorm(L, n, &scale, &shift) || scale.num_elements() != L.V(x).dims[1]) return false;
  // Per-channel operands broadcast as [C, 1, ..., 1] against [N, C, ...].
  std::vector<int64_t> cdims(L.V(x).dims.size() - 1, 1);
  cdims[0] = scale.num_elements();
  L.plan().constants.push_back(scale.WithDims(cdims));
  int ss = L.WeightSlot(L.plan().constants.back(), n.name + "/scale");
  L.plan().constants.push_back(shift.WithDims(cdims));
  int ts = L.WeightSlot(L.plan().constants.back(), n.name + "/shift");
  EltChain chain(L, L.V(y).dims);
  if (!chain.Start(L.SlotOf(x), L.V(x).dims) || !chain.AppendOperand(EltOp::kMul, ss, cdims, "scale") ||
      !chain.AppendOperand(EltOp::kAdd, ts, cdims, "shift")) {
    return false;
  }
  const Value* last = chain.Extend(y);
  chain.Emit(last, n.Describe());
  return true;
}

}  // namespace aic::cuda
