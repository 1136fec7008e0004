#include "session/optimize_and_verify.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "graph/clone.h"
#include "support/json.h"
#include "support/status.h"

// OpenBLAS (linked for the analyzer's SVDs) starts its worker threads when
// the library loads, and they spin in sched_yield for about 0.1 s: on a
// two-core machine that halves the CPU left to the optimizer, which never
// calls BLAS. Weak, so a BLAS without this entry point just keeps its threads;
// a later BLAS call would start them again.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace aic::session {

namespace {

void StopIdleBlasThreads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

// A type every field of which is known: what a value_info entry may say
// (elem_type 0 is invalid ONNX; ONNX Runtime refuses the model).
bool FullyTyped(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::kNone: return false;
    case TypeInfo::Kind::kTensor:
    case TypeInfo::Kind::kSparseTensor: return t.dtype != DType::kUndefined;
    case TypeInfo::Kind::kMap: return t.dtype != DType::kUndefined && t.element && FullyTyped(*t.element);
    case TypeInfo::Kind::kSequence:
    case TypeInfo::Kind::kOptional: return t.element && FullyTyped(*t.element);
  }
  return false;
}

// Lists every node output's inferred type as value_info (what onnxsim and
// onnxslim write, and what viewers and downstream compilers read), bodies
// included; graph outputs carry theirs already.
void RecordInferredShapes(Graph& g) {
  for (const auto& n : g.nodes()) {
    for (Value* v : n->outputs()) {
      if (v == nullptr || std::count(g.outputs().begin(), g.outputs().end(), v)) continue;
      if (FullyTyped(v->type())) v->in_value_info = true;
    }
    for (Graph* body : n->Subgraphs()) RecordInferredShapes(*body);
  }
}

}  // namespace

std::map<std::string, int64_t> OpTypeCounts(const Graph& g) {
  std::map<std::string, int64_t> counts;
  for (const auto& n : g.nodes()) ++counts[n->domain.empty() ? n->op_type : n->domain + "." + n->op_type];
  return counts;
}

std::vector<OpTableRow> OpTableRows(const std::map<std::string, int64_t>& before,
                                    const std::map<std::string, int64_t>& after) {
  std::map<std::string, OpTableRow> rows;
  for (const auto& [op, n] : before) rows[op] = {op, n, 0};
  for (const auto& [op, n] : after) {
    rows.try_emplace(op, OpTableRow{op, 0, 0});
    rows[op].after = n;
  }
  std::vector<OpTableRow> out;
  for (auto& [op, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const OpTableRow& x, const OpTableRow& y) {
    return std::max(x.before, x.after) > std::max(y.before, y.after);
  });
  return out;
}

namespace {

// A QuantizeLinear or DynamicQuantizeLinear of a computed value (not of a
// weight), in the graph or its bodies.
bool QuantizesActivations(const Graph& g) {
  for (const auto& n : g.nodes()) {
    if (n->domain.empty() && (n->op_type == "QuantizeLinear" || n->op_type == "DynamicQuantizeLinear") &&
        n->input(0) != nullptr && n->input(0)->initializer() == nullptr) {
      return true;
    }
    for (const Attribute& a : n->attributes) {
      if (a.g != nullptr && QuantizesActivations(*a.g)) return true;
      for (const auto& body : a.graphs) {
        if (body != nullptr && QuantizesActivations(*body)) return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<OptimizeOutcome> OptimizeAndVerify(std::unique_ptr<Model>& model, const ModelLoader& reload,
                                                  const OptimizeJob& job) {
  OptimizeOutcome outcome;
  AIC_ASSIGN_OR_RETURN(auto fixed, rewrite::FixedShapes(*model, job.optimize));
  outcome.verify_wanted = job.verify_runs > 0 || !job.verify_feeds.empty();
  auto step = [&job](const std::string& what) {
    if (job.progress) job.progress(what);
  };
  // The test inputs are made, and the original starts running on them, before
  // the rewriter: on two cores the original's side of the verification runs
  // while the model is optimized (session/compare.h). The original is a
  // copy of the graph whose weights share the loaded buffers (the rewriter
  // makes new tensors, never writes a weight in place): reading the model a
  // second time took 2 of the 55 ms of a verified optimize of PP-OCR rec.
  std::unique_ptr<Model> original;
  std::unique_ptr<Comparison> comparison;
  size_t feed_sets = job.verify_feeds.size();
  CompareOptions compare;
  compare.rtol = job.rtol;
  compare.atol = job.atol;
  InputShapes given;   // test shapes asked for or fixed: never varied
  InputShapes shapes;  // the test shapes, when we chose them
  if (outcome.verify_wanted) {
    original = CloneModel(*model);
    if (!job.tolerance_given && QuantizesActivations(*original->graph)) {
      compare.rtol = std::max(compare.rtol, 1e-2);
      compare.atol = std::max(compare.atol, 1e-2);
    }
    outcome.verify_rtol = compare.rtol;
    outcome.verify_atol = compare.atol;
    absl::StatusOr<std::vector<std::map<std::string, RuntimeValue>>> feeds = job.verify_feeds;
    if (job.verify_feeds.empty()) {
      // Test shapes: those asked for, else the fixed inputs at their new
      // shapes, else a realistic size for every symbolic dim.
      given = job.verify_shapes;
      for (const auto& [name, type] : fixed) {
        if (type.shape.IsStatic() && !given.count(name)) given[name] = type.shape.Values();
      }
      shapes = TestShapes(*original, given);
      outcome.verify_inputs = ShapesText(*original, shapes);
      outcome.verify_shapes = shapes;
      feeds = RandomFeedSets(*original, shapes, job.verify_runs);
    } else {
      outcome.verify_inputs = job.verify_feeds_source;
    }
    if (!feeds.ok()) {
      outcome.verify_skipped = std::string(feeds.status().message());
    } else {
      feed_sets = feeds->size();
      comparison = std::make_unique<Comparison>(*original, *std::move(feeds), compare);
    }
  }

  StopIdleBlasThreads();
  step("optimizing");
  outcome.ops_before = OpTypeCounts(*model->graph);
  absl::StatusOr<rewrite::OptimizeStats> stats = rewrite::Optimize(*model, job.optimize);
  if (!stats.ok()) {
    // The model stays as it was; the caller says why.
    comparison.reset();  // before the original it reads goes
    outcome.unchanged_reason = std::string(stats.status().message());
    if (original != nullptr) {
      model = std::move(original);
    } else {
      AIC_ASSIGN_OR_RETURN(model, reload());
    }
    outcome.ops_after = outcome.ops_before;
    return outcome;
  }
  outcome.stats = *std::move(stats);
  if (job.write_shapes) RecordInferredShapes(*model->graph);
  outcome.ops_after = OpTypeCounts(*model->graph);
  if (comparison == nullptr) return outcome;

  step(absl::StrCat("verifying on ", feed_sets, " input set(s)",
                    outcome.verify_inputs.empty() ? "" : " at ", outcome.verify_inputs));
  absl::StatusOr<CompareReport> report = comparison->Against(*model);
  comparison.reset();
  if (!report.ok() && absl::IsFailedPrecondition(report.status()) && job.verify_feeds.empty()) {
    // The original cannot run at the sizes we chose (dims it ties by
    // arithmetic got one size): try nearby sizes, and keep the first that runs.
    // Two tries at least, more while they took under 0.3 s: a model that
    // cannot run for another reason (a value, not a size) costs little.
    auto start = std::chrono::steady_clock::now();
    int tries = 0;
    for (const InputShapes& other : NearbyTestShapes(*original, shapes, given)) {
      std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      if (tries++ >= 2 && spent.count() > 0.3) break;
      absl::StatusOr<std::vector<std::map<std::string, RuntimeValue>>> feeds =
          RandomFeedSets(*original, other, job.verify_runs);
      if (!feeds.ok()) continue;
      absl::StatusOr<CompareReport> retry = CompareModels(*original, *model, *feeds, compare);
      if (!retry.ok() && absl::IsFailedPrecondition(retry.status())) continue;
      report = std::move(retry);
      outcome.verify_inputs = ShapesText(*original, other);
      outcome.verify_shapes = other;
      break;
    }
  }
  if (!report.ok()) {
    outcome.verify_skipped = std::string(report.status().message());
  } else {
    outcome.verify = *std::move(report);
  }
  return outcome;
}

std::string OptimizeOutcomeJson(const OptimizeOutcome& outcome, const std::string& version,
                                const std::string& input, const std::string& output,
                                const std::string& approximations) {
  const rewrite::OptimizeStats& stats = outcome.stats;
  JsonWriter json;
  json.BeginObject();
  json.Field("version", version);
  json.Field("input", input);
  json.Field("output", output);
  if (!outcome.unchanged_reason.empty()) json.Field("unchanged", outcome.unchanged_reason);
  json.Field("nodes_before", stats.nodes_before);
  json.Field("nodes_after", stats.nodes_after);
  json.Field("initializer_bytes_before", stats.initializer_bytes_before);
  json.Field("initializer_bytes_after", stats.initializer_bytes_after);
  json.Field("iterations", stats.iterations);
  json.Field("stop_reason", stats.stop_reason);
  json.Field("enodes", stats.enodes);
  json.Field("eclasses", stats.eclasses);
  json.Field("seconds", stats.seconds);
  json.Key("rules");
  json.BeginObject();
  for (const auto& [name, count] : stats.rule_counts) json.Field(name, count);
  json.EndObject();
  json.Key("phase_seconds");
  json.BeginObject();
  for (const auto& [phase, sec] : stats.phase_seconds) json.Field(phase, sec);
  json.EndObject();
  json.Key("rule_seconds");
  json.BeginObject();
  for (const auto& [rule, sec] : stats.rule_seconds) json.Field(rule, sec);
  json.EndObject();
  json.Key("op_types");  // op type -> [before, after]
  json.BeginObject();
  std::set<std::string> all_ops;
  for (const auto& [op, n] : outcome.ops_before) all_ops.insert(op);
  for (const auto& [op, n] : outcome.ops_after) all_ops.insert(op);
  auto count = [](const std::map<std::string, int64_t>& m, const std::string& op) -> int64_t {
    auto it = m.find(op);
    return it == m.end() ? 0 : it->second;
  };
  for (const std::string& op : all_ops) {
    json.Key(op);
    json.InlineInts({count(outcome.ops_before, op), count(outcome.ops_after, op)});
  }
  json.EndObject();
  json.Key("verify");
  if (!outcome.verify_wanted) {
    json.Null();
  } else {
    json.BeginObject();
    json.Field("shapes", outcome.verify_inputs);
    if (!outcome.verify_skipped.empty()) {
      json.Field("skipped", outcome.verify_skipped);
    } else {
      const CompareReport& report = outcome.verify;
      json.Field("ok", report.ok());
      json.Field("runs", report.runs);
      json.Field("device", report.device);
      json.Field("rtol", outcome.verify_rtol);
      json.Field("atol", outcome.verify_atol);
      json.Key("outputs");
      json.BeginArray();
      for (const auto& o : report.outputs) {
        json.BeginObject();
        json.Field("name", o.name);
        json.Field("max_abs", o.max_abs);
        json.Field("max_rel", o.max_rel);
        json.Field("ok", o.ok);
        json.EndObject();
      }
      json.EndArray();
    }
    json.EndObject();
  }
  if (!approximations.empty()) {
    json.Key("approximations");
    json.Raw(approximations);
  }
  json.EndObject();
  return json.str();
}

}  // namespace aic::session
