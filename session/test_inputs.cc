#include "session/test_inputs.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/realistic_size.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "session/input_kinds.h"
#include "support/half.h"
#include "support/status.h"

namespace aic::session {

absl::StatusOr<std::map<std::string, RuntimeValue>> FeedsFromDir(const Model& m, const std::string& dir) {
  std::map<std::string, RuntimeValue> feeds;
  int index = 0;
  for (const Value* v : m.graph->inputs()) {
    std::string pb = absl::StrCat(dir, "/input_", index++, ".pb");
    std::string npy = absl::StrCat(dir, "/", SanitizeFileName(v->name()), ".npy");
    if (std::filesystem::exists(npy)) {
      AIC_ASSIGN_OR_RETURN(Tensor t, ReadNpy(npy));
      feeds[v->name()] = RuntimeValue(std::move(t));
    } else if (std::filesystem::exists(pb)) {
      AIC_ASSIGN_OR_RETURN(RuntimeValue rv, LoadValueProtoFile(pb, v->type()));
      feeds[v->name()] = std::move(rv);
    } else if (v->initializer() == nullptr) {
      return absl::NotFoundError(absl::StrCat(dir, ": no ", SanitizeFileName(v->name()), ".npy or input_",
                                              index - 1, ".pb for input '", v->name(), "'"));
    }
  }
  return feeds;
}

InputShapes TestShapes(const Model& model, InputShapes given) {
  for (const Value* v : model.graph->inputs()) {
    const TypeInfo& t = v->type();
    if (v->initializer() != nullptr || given.count(v->name()) || !t.is_tensor() || !t.shape.has_rank()) continue;
    const std::vector<Dim>& dims = t.shape.dims();
    bool symbolic = std::any_of(dims.begin(), dims.end(), [](const Dim& d) { return !d.is_value(); });
    if (!symbolic) continue;
    std::vector<int64_t>& out = given[v->name()];
    for (size_t i = 0; i < dims.size(); ++i) out.push_back(dims[i].is_value() ? dims[i].value() : RealisticDimSize(t, i));
  }
  return given;
}

std::vector<InputShapes> NearbyTestShapes(const Model& model, const InputShapes& shapes, const InputShapes& given,
                                          size_t limit) {
  // Each symbol's places: (input, axis). A named symbol is one size wherever
  // it appears; an unnamed dim is its own.
  std::vector<std::vector<std::pair<std::string, size_t>>> symbols;
  std::map<std::string, size_t> by_name;
  for (const Value* v : model.graph->inputs()) {
    const TypeInfo& t = v->type();
    auto it = shapes.find(v->name());
    if (given.count(v->name()) || it == shapes.end() || !t.is_tensor() || !t.shape.has_rank()) continue;
    for (size_t i = 0; i < t.shape.dims().size() && i < it->second.size(); ++i) {
      const Dim& d = t.shape.dims()[i];
      if (d.is_value()) continue;
      if (d.is_symbol()) {
        auto [slot, fresh] = by_name.emplace(d.symbol(), symbols.size());
        if (fresh) symbols.emplace_back();
        symbols[slot->second].emplace_back(v->name(), i);
      } else {
        symbols.push_back({{v->name(), i}});
      }
    }
  }
  std::vector<InputShapes> out;
  for (const auto& places : symbols) {
    int64_t size = shapes.at(places[0].first)[places[0].second];
    std::set<int64_t> tried = {size};
    for (int64_t other : {size + 1, size - 1, 2 * size, int64_t{1}}) {
      if (other < 1 || !tried.insert(other).second || out.size() >= limit) continue;
      InputShapes variant = shapes;
      for (const auto& [name, axis] : places) variant[name][axis] = other;
      out.push_back(std::move(variant));
    }
  }
  return out;
}

std::string ShapesText(const Model& model, const InputShapes& shapes) {
  std::vector<std::string> parts;
  std::set<std::string> seen;
  for (const Value* v : model.graph->inputs()) {
    auto it = shapes.find(v->name());
    if (it == shapes.end()) continue;
    parts.push_back(absl::StrCat(v->name(), "=", absl::StrJoin(it->second, ",")));
    seen.insert(v->name());
  }
  for (const auto& [name, dims] : shapes) {
    if (!seen.count(name)) parts.push_back(absl::StrCat(name, "=", absl::StrJoin(dims, ",")));
  }
  return absl::StrJoin(parts, " ");
}

std::string SanitizeFileName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

absl::StatusOr<Tensor> RandomTensorFor(const TypeInfo& type, const std::vector<int64_t>* fixed,
                                       uint64_t seed) {
  if (!type.is_tensor()) return absl::UnimplementedError("random data only for tensor inputs");
  std::vector<int64_t> dims;
  if (fixed != nullptr) {
    dims = *fixed;
    if (type.shape.has_rank() && static_cast<int64_t>(dims.size()) != type.shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("the shape given has rank ", dims.size(),
                                                     ", the input has rank ", type.shape.rank()));
    }
  } else {
    if (!type.shape.has_rank()) return absl::InvalidArgumentError("rank unknown: give its shape");
    for (const Dim& d : type.shape.dims()) dims.push_back(d.is_value() ? d.value() : 1);
  }
  Tensor t(type.dtype == DType::kUndefined ? DType::kFloat : type.dtype, dims);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kFloat: t.mutable_data<float>()[i] = static_cast<float>(normal(rng)); break;
      case DType::kDouble: t.mutable_data<double>()[i] = normal(rng); break;
      case DType::kFloat16: t.mutable_data<uint16_t>()[i] = FloatToHalf(static_cast<float>(normal(rng))); break;
      case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = FloatToBFloat16(static_cast<float>(normal(rng))); break;
      case DType::kBool: t.mutable_data<uint8_t>()[i] = small(rng) % 2; break;
      case DType::kInt8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(small(rng)); break;
      case DType::kUint8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(small(rng)); break;
      case DType::kInt16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(small(rng)); break;
      case DType::kUint16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(small(rng)); break;
      case DType::kInt32: t.mutable_data<int32_t>()[i] = small(rng); break;
      case DType::kUint32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(small(rng)); break;
      case DType::kInt64: t.mutable_data<int64_t>()[i] = small(rng); break;
      case DType::kUint64: t.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(small(rng)); break;
      default:
        return absl::UnimplementedError(
            absl::StrCat("no random data for dtype ", DTypeName(t.dtype())));
    }
  }
  return t;
}

absl::StatusOr<std::map<std::string, RuntimeValue>> RandomFeeds(const Model& model, const InputShapes& shapes,
                                                                uint64_t seed) {
  std::map<std::string, RuntimeValue> feeds;
  // Token ids index their embedding table: ids past it are an error, not a test.
  std::map<std::string, IntegerInputKind> kinds = IntegerInputKinds(model);
  for (const Value* v : model.graph->inputs()) {
    if (v->is_initializer()) continue;
    auto it = shapes.find(v->name());
    uint64_t input_seed = seed++;
    auto t = RandomTensorFor(v->type(), it == shapes.end() ? nullptr : &it->second, input_seed);
    if (!t.ok()) {
      return absl::Status(t.status().code(), absl::StrCat("input '", v->name(), "': ", t.status().message()));
    }
    auto kind = kinds.find(v->name());
    if (kind != kinds.end() && kind->second.indexes_table) FillIntegerInput(kind->second, input_seed, *t);
    feeds[v->name()] = RuntimeValue(*std::move(t));
  }
  return feeds;
}

absl::StatusOr<std::vector<std::map<std::string, RuntimeValue>>> RandomFeedSets(const Model& model,
                                                                              const InputShapes& shapes, int runs,
                                                                              uint64_t seed) {
  std::vector<std::map<std::string, RuntimeValue>> sets;
  for (int k = 0; k < runs; ++k) {
    AIC_ASSIGN_OR_RETURN(auto feeds, RandomFeeds(model, shapes, seed + static_cast<uint64_t>(k) * 7919));
    sets.push_back(std::move(feeds));
  }
  return sets;
}

}  // namespace aic::session
