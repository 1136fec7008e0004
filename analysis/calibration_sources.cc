#include "analysis/calibration_sources.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "session/input_kinds.h"
#include "session/test_inputs.h"
#include "support/status.h"

namespace aic::analysis {

namespace {

bool HasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file holding graph input k (named `name`) in sample directory `dir`.
std::optional<std::string> FindInputFile(const std::filesystem::path& dir, const std::string& name,
                                         size_t k) {
  for (const std::string& base : {name, session::SanitizeFileName(name), absl::StrCat("input_", k)}) {
    for (const char* ext : {".npy", ".pb"}) {
      std::filesystem::path p = dir / (base + ext);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return p.string();
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<CalibrationData> CalibrationFromDir(const Model& model,
                                                             const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("calibration data ", dir, ": not a directory"));
  }
  std::vector<const Value*> inputs;
  for (const Value* v : model.graph->inputs()) {
    if (!v->is_initializer()) inputs.push_back(v);
  }
  // One sample in DIR itself, or one per subdirectory.
  std::vector<std::filesystem::path> samples;
  bool flat = !inputs.empty() && FindInputFile(dir, inputs[0]->name(), 0).has_value();
  if (flat) {
    samples.push_back(dir);
  } else {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_directory()) samples.push_back(entry.path());
    }
    std::sort(samples.begin(), samples.end());
  }
  if (samples.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("calibration data ", dir, ": no sample found (expected ",
                     inputs.empty() ? "input" : inputs[0]->name(),
                     ".npy/.pb or input_0.pb, in DIR or in its subdirectories)"));
  }
  CalibrationData data;
  data.source = dir;
  data.samples = static_cast<int64_t>(samples.size());
  data.feed = [inputs, samples](int64_t i) -> absl::StatusOr<Feeds> {
    Feeds feeds;
    for (size_t k = 0; k < inputs.size(); ++k) {
      auto file = FindInputFile(samples[static_cast<size_t>(i)], inputs[k]->name(), k);
      if (!file) {
        return absl::InvalidArgumentError(absl::StrCat(samples[static_cast<size_t>(i)].string(),
                                                       ": no file for input '", inputs[k]->name(),
                                                       "'"));
      }
      if (HasSuffix(*file, ".npy")) {
        AIC_ASSIGN_OR_RETURN(Tensor t, ReadNpy(*file));
        feeds[inputs[k]->name()] = RuntimeValue(std::move(t));
      } else {
        AIC_ASSIGN_OR_RETURN(RuntimeValue v, LoadValueProtoFile(*file, inputs[k]->type()));
        feeds[inputs[k]->name()] = std::move(v);
      }
    }
    return feeds;
  };
  return data;
}

absl::StatusOr<int64_t> RandomSampleCount(const std::string& spec) {
  if (spec.rfind("random:", 0) != 0) return 0;
  int64_t n = 0;
  if (!absl::SimpleAtoi(spec.substr(7), &n) || n < 1) {
    return absl::InvalidArgumentError(absl::StrCat("expects a positive N, got '", spec, "'"));
  }
  return n;
}

CalibrationData RandomCalibration(const Model& model, int64_t n, uint64_t seed,
                                  const std::map<std::string, std::vector<int64_t>>& shapes) {
  CalibrationData data;
  data.random = true;
  data.source = absl::StrCat("random:", n);
  data.samples = n;
  // Floats are normal; integers what the graph does with them (ids within
  // their embedding table, masks of ones).
  std::map<std::string, session::IntegerInputKind> kinds = session::IntegerInputKinds(model);
  data.feed = [&model, seed, kinds, shapes](int64_t i) -> absl::StatusOr<Feeds> {
    Feeds feeds;
    uint64_t s = seed + static_cast<uint64_t>(i) * 7919;
    for (const Value* v : model.graph->inputs()) {
      if (v->is_initializer()) continue;
      uint64_t input_seed = s++;
      auto given = shapes.find(v->name());
      auto t = session::RandomTensorFor(v->type(), given == shapes.end() ? nullptr : &given->second, input_seed);
      if (!t.ok()) {
        return absl::Status(t.status().code(),
                            absl::StrCat("input '", v->name(), "': ", t.status().message()));
      }
      if (auto kind = kinds.find(v->name()); kind != kinds.end()) {
        session::FillIntegerInput(kind->second, input_seed, *t);
      }
      feeds[v->name()] = RuntimeValue(*std::move(t));
    }
    return feeds;
  };
  return data;
}

CalibrationData RandomCalibrationAtTestShapes(const Model& model, int64_t n, uint64_t seed,
                                              const std::map<std::string, std::vector<int64_t>>& given) {
  session::InputShapes shapes = session::TestShapes(model, given);
  CalibrationData data = RandomCalibration(model, n, seed, shapes);
  data.source = absl::StrCat("random:", n, " at ", session::ShapesText(model, shapes));
  return data;
}

}  // namespace aic::analysis
