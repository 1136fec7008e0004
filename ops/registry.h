// The one table of operator knowledge: OpDefs keyed by (domain, op_type,
// since_version). Nothing else in the code base matches op-type strings
// against opset version lists.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ops/op_def.h"

namespace aic {

class OpRegistry {
 public:
  // The registry with every op family registered (built on first use).
  static const OpRegistry& Global();

  void Register(OpDef def);
  // The definition covering `opset` for (domain, op_type): the one with the
  // largest since_version <= opset. nullptr when unknown.
  const OpDef* Find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // Any version, the newest, for tools that list ops.
  const OpDef* FindAnyVersion(std::string_view domain, std::string_view op_type) const;
  std::vector<const OpDef*> All() const;

 private:
  // (domain, op_type) -> since_version -> def
  std::map<std::pair<std::string, std::string>, std::map<int, OpDef>, std::less<>> defs_;
};

// Op families, one file each (ops/<area>/<family>.cc). Adding a family: declare
// its function here and call it from registry.cc.
void RegisterElementwiseUnaryOps(OpRegistry& r);
void RegisterElementwiseBinaryOps(OpRegistry& r);
void RegisterActivationOps(OpRegistry& r);
void RegisterMatMulOps(OpRegistry& r);
void RegisterConvOps(OpRegistry& r);
void RegisterPoolOps(OpRegistry& r);
void RegisterNormalizationOps(OpRegistry& r);
void RegisterSoftmaxOps(OpRegistry& r);
void RegisterAttentionOps(OpRegistry& r);  // Attention, RotaryEmbedding
void RegisterStateSpaceOps(OpRegistry& r);  // LinearAttention, CausalConvWithState
void RegisterShapeOps(OpRegistry& r);
void RegisterTensorOps(OpRegistry& r);
void RegisterIndexingOps(OpRegistry& r);
void RegisterReduceOps(OpRegistry& r);
void RegisterControlFlowOps(OpRegistry& r);
void RegisterSequenceOps(OpRegistry& r);
void RegisterRnnOps(OpRegistry& r);
void RegisterMiscOps(OpRegistry& r);
void RegisterMlOps(OpRegistry& r);  // ai.onnx.ml (ops/ml/)
void RegisterFusedOps(OpRegistry& r);  // ai.aic: our executors' fused ops
void RegisterQuantizedElementwiseOps(OpRegistry& r);  // ai.aic: QLinearLookup, QLinearAdd/Mul
void RegisterStandardAliasOps(OpRegistry& r);  // ai.aic: newer standard ops for older opsets

}  // namespace aic
