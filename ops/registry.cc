#include "ops/registry.h"

#include "graph/model.h"
#include "support/status.h"

namespace aic {

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterElementwiseUnaryOps(*r);
    RegisterElementwiseBinaryOps(*r);
    RegisterActivationOps(*r);
    RegisterMatMulOps(*r);
    RegisterConvOps(*r);
    RegisterPoolOps(*r);
    RegisterNormalizationOps(*r);
    RegisterSoftmaxOps(*r);
    RegisterAttentionOps(*r);
    RegisterStateSpaceOps(*r);
    RegisterShapeOps(*r);
    RegisterTensorOps(*r);
    RegisterIndexingOps(*r);
    RegisterReduceOps(*r);
    RegisterControlFlowOps(*r);
    RegisterSequenceOps(*r);
    RegisterRnnOps(*r);
    RegisterMiscOps(*r);
    RegisterMlOps(*r);
    RegisterFusedOps(*r);
    RegisterQuantizedElementwiseOps(*r);
    RegisterStandardAliasOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(OpDef def) {
  def.domain = NormalizeDomain(def.domain);
  auto& versions = defs_[{def.domain, def.op_type}];
  AIC_CHECK(versions.count(def.since_version) == 0, "op registered twice: ", def.op_type, "-",
            def.since_version);
  int v = def.since_version;
  versions.emplace(v, std::move(def));
}

const OpDef* OpRegistry::Find(std::string_view domain, std::string_view op_type,
                              int64_t opset) const {
  auto it = defs_.find(std::make_pair(NormalizeDomain(domain), std::string(op_type)));
  if (it == defs_.end()) return nullptr;
  const auto& versions = it->second;
  auto v = versions.upper_bound(static_cast<int>(opset));
  if (v == versions.begin()) return nullptr;
  return &std::prev(v)->second;
}

const OpDef* OpRegistry::FindAnyVersion(std::string_view domain, std::string_view op_type) const {
  auto it = defs_.find(std::make_pair(NormalizeDomain(domain), std::string(op_type)));
  if (it == defs_.end() || it->second.empty()) return nullptr;
  return &it->second.rbegin()->second;
}

std::vector<const OpDef*> OpRegistry::All() const {
  std::vector<const OpDef*> out;
  for (const auto& [key, versions] : defs_) {
    for (const auto& [v, def] : versions) out.push_back(&def);
  }
  return out;
}

}  // namespace aic
