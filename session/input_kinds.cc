#include "session/input_kinds.h"

#include <algorithm>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace aic::session {

namespace {

bool IsIntegerOrBool(DType d) { return IsInteger(d) || d == DType::kBool; }

// Ops that pass an index tensor on with its values unchanged.
bool KeepsValues(const Node& n) {
  static const char* const kOps[] = {"Cast", "Reshape", "Squeeze", "Unsqueeze",
                                     "Flatten", "Identity", "Expand"};
  return n.domain.empty() &&
         std::find(std::begin(kOps), std::end(kOps), n.op_type) != std::end(kOps);
}

// The initializer a table is computed from without changing its shape
// (DequantizeLinear of int8 rows, a Cast, an Identity): its dims are the
// table's, and the file need not say the computed table's shape.
const Tensor* ConstantTableOf(const Value* v) {
  for (int hops = 0; v != nullptr && hops < 4; ++hops) {
    if (const Tensor* t = v->initializer()) return v->is_graph_input() ? nullptr : t;
    const Node* p = v->producer();
    if (p == nullptr || !p->domain.empty()) return nullptr;
    if (p->op_type != "DequantizeLinear" && p->op_type != "Cast" && p->op_type != "Identity") return nullptr;
    v = p->input(0);
  }
  return nullptr;
}

}  // namespace

bool HoldsSamples(DType d) {
  return d == DType::kInt8 || d == DType::kUint8 || d == DType::kInt16 || d == DType::kUint16;
}

std::map<std::string, IntegerInputKind> IntegerInputKinds(const Model& model) {
  const Graph& g = *model.graph;
  absl::flat_hash_map<const Value*, std::vector<std::pair<const Node*, size_t>>> readers;
  for (const auto& n : g.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      if (n->input(i) != nullptr) readers[n->input(i)].push_back({n.get(), i});
    }
  }
  std::map<std::string, IntegerInputKind> out;
  for (const Value* input : g.inputs()) {
    if (input->is_initializer() || !input->type().is_tensor() || !IsIntegerOrBool(input->dtype())) {
      continue;
    }
    IntegerInputKind kind;
    std::vector<const Value*> frontier = {input};
    for (size_t k = 0; k < frontier.size() && k < 64; ++k) {
      auto it = readers.find(frontier[k]);
      if (it == readers.end()) continue;
      for (const auto& [node, slot] : it->second) {
        if (node->domain.empty() && node->op_type == "Gather" && slot == 1) {
          // The table's rows: an initializer's, or what inference knows of a
          // computed table (a dequantized one: DequantizeLinear of int8 rows).
          const Value* data = node->input(0);
          if (data == nullptr || data->is_graph_input()) continue;
          const Tensor* table = ConstantTableOf(data);
          const Shape& shape = data->shape();
          if (table == nullptr && !data->type().is_tensor()) continue;
          int64_t rank = table != nullptr ? table->rank() : shape.rank();
          if (rank <= 0) continue;
          int64_t axis = node->GetInt("axis", 0);
          if (axis < 0) axis += rank;
          if (axis < 0 || axis >= rank) continue;
          if (table == nullptr && !shape[axis].is_value()) continue;
          int64_t rows = table != nullptr ? table->dim(axis) : shape[axis].value();
          kind.rows = kind.indexes_table ? std::min(kind.rows, rows) : rows;
          kind.indexes_table = true;
        } else if (slot == 0 && KeepsValues(*node) && node->output(0) != nullptr) {
          frontier.push_back(node->output(0));
        }
      }
    }
    DType d = input->dtype();
    kind.samples = !kind.indexes_table && HoldsSamples(d);
    out[input->name()] = kind;
  }
  return out;
}

void FillIntegerInput(const IntegerInputKind& kind, uint64_t seed, Tensor& t) {
  std::mt19937_64 rng(seed);
  int64_t lo = 0, hi = std::max<int64_t>(kind.rows, 1) - 1;
  if (kind.samples) {
    switch (t.dtype()) {
      case DType::kInt8: lo = -128, hi = 127; break;
      case DType::kUint8: lo = 0, hi = 255; break;
      case DType::kInt16: lo = -32768, hi = 32767; break;
      default: lo = 0, hi = 65535; break;
    }
  }
  std::uniform_int_distribution<int64_t> draw(lo, hi);
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = kind.indexes_table || kind.samples ? draw(rng) : 1;
    switch (t.dtype()) {
      case DType::kBool: case DType::kUint8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DType::kInt8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DType::kInt16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case DType::kUint16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case DType::kInt32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::kUint32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case DType::kInt64: t.mutable_data<int64_t>()[i] = v; break;
      case DType::kUint64: t.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      default: return;
    }
  }
}

}  // namespace aic::session
