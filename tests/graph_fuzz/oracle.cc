#include "tests/graph_fuzz/oracle.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/clone.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "onnx_io/save.h"
#include "session/session.h"
#include "tests/graph_fuzz/generator.h"

namespace aic::graph_fuzz {

namespace {

namespace fs = std::filesystem;

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-4;  // times max(1, the largest |expected| of the output)
};

// "" when `got` matches `want`; else what differs, for the finding.
std::string CompareTensors(const std::string& name, const Tensor& want, const Tensor& got, bool bitwise,
                           Tolerance tol) {
  if (want.dtype() != got.dtype()) {
    return absl::StrCat("output '", name, "': dtype ", DTypeName(want.dtype()), " vs ", DTypeName(got.dtype()));
  }
  if (want.dims() != got.dims()) {
    return absl::StrCat("output '", name, "': shape ", DimsToString(want.dims()), " vs ", DimsToString(got.dims()));
  }
  if (want.dtype() == DType::kString) return want.strings() == got.strings() ? "" : "strings differ";
  bool is_float = IsFloatingPoint(want.dtype());
  double scale = 1;
  for (int64_t i = 0; i < want.num_elements(); ++i) scale = std::max(scale, std::fabs(want.ElementAsDouble(i)));
  size_t width = ElementSize(want.dtype());
  const auto* wb = static_cast<const uint8_t*>(want.raw_data());
  const auto* gb = static_cast<const uint8_t*>(got.raw_data());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double x = want.ElementAsDouble(i), y = got.ElementAsDouble(i);
    bool same;
    if (std::isnan(x) || std::isnan(y)) {
      same = std::isnan(x) && std::isnan(y);
    } else if (!is_float) {
      same = x == y;
    } else if (bitwise) {
      // +0 and -0 count as equal: x + 0 -> x may turn one into the other,
      // and nothing downstream but a division by it could tell.
      same = (x == 0 && y == 0) || std::memcmp(wb + i * width, gb + i * width, width) == 0;
    } else {
      same = x == y || std::fabs(x - y) <= tol.atol * scale + tol.rtol * std::fabs(x);
    }
    if (!same) {
      return absl::StrCat("output '", name, "' element ", i, ": expected ", x, ", got ", y,
                          bitwise ? " (must be bit for bit equal)" : "");
    }
  }
  return "";
}

std::set<std::string> LooseOutputs(const Model& m) {
  for (const auto& [k, v] : m.metadata_props) {
    if (k == kLooseOutputsKey) return absl::StrSplit(v, ',');
  }
  return {};
}

std::string CompareOutputs(const Model& model, const std::vector<RuntimeValue>& want,
                           const std::vector<RuntimeValue>& got, bool bitwise) {
  if (want.size() != got.size()) return absl::StrCat(got.size(), " outputs instead of ", want.size());
  std::set<std::string> loose = LooseOutputs(model);
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& name = model.graph->outputs()[i]->name();
    if (!want[i].is_tensor() || !got[i].is_tensor()) {
      if (want[i].kind != got[i].kind) return absl::StrCat("output '", name, "': kind differs");
      continue;
    }
    Tolerance tol;
    if (loose.count(name) || want[i].tensor.dtype() == DType::kFloat16) tol = {1e-2, 1e-2};
    std::string d = CompareTensors(name, want[i].tensor, got[i].tensor, bitwise, tol);
    if (!d.empty()) return d;
  }
  return "";
}

absl::StatusOr<std::vector<RuntimeValue>> RunOn(const Model& m, const exec::Feeds& feeds, const std::string& device,
                                                std::optional<int> level, rewrite::OptimizeStats* stats = nullptr) {
  session::SessionOptions so;
  so.device = device;
  so.threads = 1;
  so.opt_level = level;
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<session::Session> s, session::Session::Create(m, so));
  if (!s->optimize_error().empty()) {
    return absl::InternalError(absl::StrCat("the session's rewriter failed: ", s->optimize_error()));
  }
  if (stats != nullptr) *stats = s->optimize_stats();
  return s->Run(feeds);
}

void CollectOps(const Graph& g, std::set<std::string>& ops) {
  for (const auto& n : g.nodes()) {
    ops.insert(n->op_type);
    for (const Graph* b : n->Subgraphs()) CollectOps(*b, ops);
  }
}

void SaveForOnnxRuntime(const std::string& dir, const std::string& file, const Model& m) {
  fs::create_directories(dir);
  (void)SaveModel(m, (fs::path(dir) / file).string());
}

}  // namespace

OracleReport CheckModel(const Model& model, const exec::Feeds& feeds, const OracleOptions& options) {
  OracleReport report;
  CollectOps(*model.graph, report.ops);
  auto add = [&](std::string kind, std::string config, std::string detail) {
    report.findings.push_back({std::move(kind), std::move(config), std::move(detail)});
  };
  auto count_rules = [&](const rewrite::OptimizeStats& st) {
    for (const auto& [rule, n] : st.rule_counts) report.rule_counts[rule] += n;
  };

  absl::StatusOr<std::vector<RuntimeValue>> expected = RunOn(model, feeds, "reference", 0);
  ++report.configs;
  if (!expected.ok()) {
    add("reference error", "reference -O0", std::string(expected.status().message()));
    return report;
  }
  if (!options.save_dir.empty()) {
    SaveForOnnxRuntime(options.save_dir, "model.onnx", model);
    fs::create_directories(fs::path(options.save_dir) / "inputs");
    fs::create_directories(fs::path(options.save_dir) / "expected");
    for (const auto& [name, v] : feeds) {
      (void)WriteNpy(v.tensor, (fs::path(options.save_dir) / "inputs" / (name + ".npy")).string());
    }
    for (size_t i = 0; i < expected->size(); ++i) {
      if ((*expected)[i].is_tensor()) {
        (void)WriteNpy((*expected)[i].tensor,
                       (fs::path(options.save_dir) / "expected" / absl::StrCat(i, ".npy")).string());
      }
    }
  }

  // opt at every level and target, through bytes as `aic-onnx opt` writes them.
  std::unique_ptr<Model> opt_o2;
  for (int level = 1; level <= 3; ++level) {
    for (bool aic : {false, true}) {
      std::string config = absl::StrCat("opt -O", level, " --target ", aic ? "aic" : "onnx");
      std::unique_ptr<Model> copy = CloneModel(model);
      rewrite::OptimizeOptions oo;
      oo.level = level;
      if (aic) oo.aic_ops = rewrite::AllAicOps();
      oo.extra_rules = options.extra_rules;
      oo.time_budget_s = 20;
      absl::StatusOr<rewrite::OptimizeStats> st = rewrite::Optimize(*copy, oo);
      ++report.configs;
      if (!st.ok()) {
        add("opt error", config, std::string(st.status().message()));
        continue;
      }
      count_rules(*st);
      absl::StatusOr<std::string> bytes = SerializeModel(*copy);
      if (!bytes.ok()) {
        add("opt output not writable", config, std::string(bytes.status().message()));
        continue;
      }
      absl::StatusOr<std::unique_ptr<Model>> loaded = LoadModelFromBytes(bytes->data(), bytes->size());
      if (!loaded.ok()) {
        add("opt output not loadable", config, std::string(loaded.status().message()));
        continue;
      }
      absl::StatusOr<std::vector<RuntimeValue>> got = RunOn(**loaded, feeds, "reference", 0);
      if (!got.ok()) {
        add("error", config + ", reference", std::string(got.status().message()));
        continue;
      }
      std::string diff = CompareOutputs(model, *expected, *got, /*bitwise=*/level == 1);
      if (!diff.empty()) add(level == 1 ? "not bitwise equal" : "mismatch", config + ", reference", diff);
      if (!aic && !options.save_dir.empty()) {
        SaveForOnnxRuntime(options.save_dir, absl::StrCat("opt_O", level, ".onnx"), **loaded);
      }
      if (level == 2 && !aic) opt_o2 = std::move(*loaded);
    }
  }

  if (options.cpu) {
    struct CpuRun {
      const Model* m;
      std::optional<int> level;
      std::string config;
    };
    std::vector<CpuRun> runs = {{&model, 0, "cpu -O0"}, {&model, 2, "cpu -O2"}, {&model, 3, "cpu -O3"}};
    if (opt_o2) runs.push_back({opt_o2.get(), std::nullopt, "opt -O2 --target onnx, then cpu"});
    for (const CpuRun& r : runs) {
      rewrite::OptimizeStats st;
      absl::StatusOr<std::vector<RuntimeValue>> got = RunOn(*r.m, feeds, "cpu", r.level, &st);
      ++report.configs;
      count_rules(st);
      if (!got.ok()) {
        add("error", r.config, std::string(got.status().message()));
        continue;
      }
      std::string diff = CompareOutputs(model, *expected, *got, /*bitwise=*/false);
      if (!diff.empty()) add("mismatch", r.config, diff);
    }
  }
  return report;
}

}  // namespace aic::graph_fuzz
