#include "analysis/approximate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/clone.h"
#include "ops/infer_shapes.h"
#include "session/session.h"

namespace aic::analysis {

namespace {

using Outputs = std::vector<RuntimeValue>;

// A step measured slower than the model before it by more than this share is
// refused (unless keep_slower): paired medians on a quiet machine differ by
// a percent or two between identical models.
constexpr double kSlowerTolerance = 0.03;

session::SessionOptions MeasuringSession(const ApproximateOptions& o) {
  session::SessionOptions so;
  so.device = "cpu";
  so.threads = o.threads;
  return so;
}

absl::StatusOr<std::vector<Outputs>> RunAll(session::Session& s, const std::vector<Feeds>& feeds) {
  std::vector<Outputs> out;
  for (const Feeds& f : feeds) {
    auto r = s.Run(f);
    if (!r.ok()) return r.status();
    out.push_back(*std::move(r));
  }
  return out;
}

// A relative error of f32 rounding: a few units in the last place.
constexpr double kFloatRounding = 1e-6;

// The relative error of `got` against `want` per output (see
// ApproximateOptions::max_error), the worst of them and its name.
double Error(const std::vector<Outputs>& got, const std::vector<Outputs>& want, const std::vector<session::IoInfo>& names,
             std::string* worst) {
  double worst_error = 0;
  for (size_t o = 0; o < names.size(); ++o) {
    double diff = 0, norm = 0;
    int64_t differing = 0, elements = 0;
    bool floating = true, mismatch = false;
    for (size_t s = 0; s < want.size(); ++s) {
      const RuntimeValue& a = got[s][o];
      const RuntimeValue& b = want[s][o];
      if (!a.is_tensor() || !b.is_tensor()) {
        // Sequences and maps: compared as equal or not.
        continue;
      }
      if (a.tensor.dims() != b.tensor.dims() || a.tensor.dtype() != b.tensor.dtype()) {
        mismatch = true;
        break;
      }
      floating = IsFloatingPoint(b.tensor.dtype());
      if (b.tensor.dtype() == DType::kString) {
        for (size_t i = 0; i < b.tensor.strings().size(); ++i) differing += a.tensor.strings()[i] != b.tensor.strings()[i];
        elements += b.tensor.num_elements();
        continue;
      }
      for (int64_t i = 0; i < b.tensor.num_elements(); ++i) {
        double x = a.tensor.ElementAsDouble(i), y = b.tensor.ElementAsDouble(i);
        if (floating) {
          if (std::isnan(x) != std::isnan(y)) mismatch = true;
          if (!std::isnan(x) && !std::isnan(y)) {
            diff += (x - y) * (x - y);
            norm += y * y;
          }
        } else {
          differing += x != y;
        }
        ++elements;
      }
    }
    double e = mismatch ? std::numeric_limits<double>::infinity()
               : floating ? (norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff))
                          : (elements > 0 ? static_cast<double>(differing) / static_cast<double>(elements) : 0);
    // Below kFloatRounding the two models differ only by float rounding: a
    // pruned or merged layer sums the same terms in another order (oneDNN
    // blocks channels by 8 on AVX2, by 16 on AVX-512). That is no error, even
    // against a budget of 0.
    if (floating && e < kFloatRounding) e = 0;
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    if (o == 0 || e > worst_error) {
      worst_error = e;
      *worst = names[o].name;
    }
  }
  return worst_error;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

double RunMs(session::Session& s, const Feeds& f) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = s.Run(f);
  auto t1 = std::chrono::steady_clock::now();
  return r.ok() ? std::chrono::duration<double, std::milli>(t1 - t0).count() : -1;
}

// Medians of `a` and `b` run alternately on one feed, about `budget_ms` in all
// (5 to 50 pairs), after a warm-up run each.
std::pair<double, double> PairedMs(session::Session& a, session::Session& b, const Feeds& f, double budget_ms) {
  double wa = RunMs(a, f), wb = RunMs(b, f);
  if (wa < 0 || wb < 0) return {-1, -1};
  int pairs = static_cast<int>(std::clamp(budget_ms / std::max(1e-3, wa + wb), 5.0, 50.0));
  std::vector<double> ta, tb;
  for (int i = 0; i < pairs; ++i) {
    ta.push_back(RunMs(a, f));
    tb.push_back(RunMs(b, f));
  }
  return {Median(ta), Median(tb)};
}

// Positions per run of every node's output at the feeds' shapes (see
// SitePositions), per graph of the model (by ModelGraph key).
using ModelPositions = std::map<std::string, SitePositions>;
ModelPositions Positions(const Model& model, const Feeds& feeds) {
  std::unique_ptr<Model> m = CloneModel(model);
  for (Value* in : m->graph->inputs()) {
    auto it = feeds.find(in->name());
    if (it != feeds.end() && it->second.is_tensor()) {
      in->set_type(TypeInfo::Tensor(it->second.tensor.dtype(), Shape::FromValues(it->second.tensor.dims())));
    }
  }
  const std::vector<ModelGraph> graphs = GraphsOf(*m);
  for (const ModelGraph& mg : graphs) {
    for (const auto& n : mg.graph->nodes()) {
      for (Value* v : n->outputs()) {
        if (v != nullptr) v->set_type(TypeInfo::Tensor(v->dtype(), Shape::UnknownRank()));
      }
    }
  }
  InferOptions io;
  io.best_effort = true;
  (void)InferShapes(*m, io);
  ModelPositions out;
  for (const ModelGraph& mg : graphs) {
    SitePositions& p = out[mg.key];
    p.assign(mg.graph->nodes().size(), -1);
    for (size_t i = 0; i < p.size(); ++i) {
      const Node& n = *mg.graph->nodes()[i];
      const Value* y = n.output(0);
      if (y == nullptr || !y->shape().has_rank() || y->shape().rank() < 1) continue;
      int64_t elements = 1;
      bool known = true;
      for (const Dim& d : y->shape().dims()) {
        if (!d.is_value()) known = false;
        else elements *= d.value();
      }
      if (!known) continue;
      int64_t features = n.op_type == "Conv" && y->shape().rank() >= 2 ? y->shape().dims()[1].value()
                                                                       : y->shape().dims().back().value();
      if (features > 0) p[i] = elements / features;
    }
  }
  return out;
}

// Runs `model` exactly as written (a reference session at -O0) on `feeds`,
// every node's outputs, bodies' included, to the observer `watch` makes from
// the session's copy of the model (the nodes it will see are the copy's).
absl::Status ObserveOnReference(const Model& model, const std::vector<Feeds>& feeds,
                                const std::function<exec::NodeObserver(const Model& copy)>& watch) {
  session::SessionOptions so;
  so.device = "reference";
  so.opt_level = 0;
  auto created = session::Session::Create(model, so);
  if (!created.ok()) return created.status();
  session::Session& s = **created;
  exec::NodeObserver observe = watch(s.model());
  exec::RunOptions ro;
  ro.observer = &observe;
  ro.observe_subgraphs = true;
  for (const Feeds& f : feeds) {
    auto r = s.Run(f, ro);
    if (!r.ok()) return r.status();
  }
  return absl::OkStatus();
}

// The graphs searched: the main graph and the bodies some calibration sample
// ran a node of (a branch no sample takes would be changed unmeasured), by
// key. Observed on the reference interpreter at -O0, only when a body holds
// a linear layer at all.
absl::StatusOr<std::set<std::string>> SearchedGraphs(const Model& model, const std::vector<Feeds>& feeds) {
  std::set<std::string> searched = {""};
  bool nested_sites = false;
  for (const ModelGraph& mg : GraphsOf(model)) nested_sites = nested_sites || (!mg.key.empty() && !FindLinearSites(*mg.graph).empty());
  if (!nested_sites) return searched;
  // The session runs a copy: its bodies are found by pointer, named by key.
  absl::flat_hash_map<const Graph*, std::string> key_of;
  absl::Status ran = ObserveOnReference(model, feeds, [&](const Model& copy) -> exec::NodeObserver {
    for (const ModelGraph& mg : GraphsOf(copy)) key_of[mg.graph] = mg.key;
    return [&](const Node& n, const std::vector<RuntimeValue>&) {
      auto it = key_of.find(n.owner());
      if (it != key_of.end()) searched.insert(it->second);
    };
  });
  if (!ran.ok()) return ran;
  return searched;
}

// For each prunable node of the searched graphs, the share of positions
// where each unit was not 0, on the reference interpreter at -O0 (the
// model's own nodes, observed; in a Loop body, over every iteration).
absl::StatusOr<std::vector<UnitActivity>> MeasureActivity(const Model& model, const std::set<std::string>& searched,
                                                          const std::vector<Feeds>& feeds) {
  std::vector<PrunableUnits> watched;
  for (const ModelGraph& mg : GraphsOf(model)) {
    if (!searched.count(mg.key)) continue;
    for (PrunableUnits& p : FindPrunableUnits(mg)) watched.push_back(std::move(p));
  }
  std::vector<UnitActivity> out;
  if (watched.empty()) return out;
  std::vector<std::vector<int64_t>> active(watched.size()), total(watched.size());
  for (size_t w = 0; w < watched.size(); ++w) {
    active[w].assign(static_cast<size_t>(watched[w].width), 0);
    total[w].assign(static_cast<size_t>(watched[w].width), 0);
  }
  // The session runs a copy with the same keys and names: watched nodes are
  // found by their graph's key and their output's name.
  absl::flat_hash_map<const Node*, size_t> slot;
  absl::Status ran = ObserveOnReference(model, feeds, [&](const Model& copy) -> exec::NodeObserver {
    std::map<std::pair<std::string, std::string>, size_t> by_value;
    for (size_t w = 0; w < watched.size(); ++w) by_value[{watched[w].graph, watched[w].value}] = w;
    for (const ModelGraph& mg : GraphsOf(copy)) {
      for (const auto& n : mg.graph->nodes()) {
        if (n->num_outputs() == 0 || n->output(0) == nullptr) continue;
        auto it = by_value.find({mg.key, n->output(0)->name()});
        if (it != by_value.end()) slot[n.get()] = it->second;
      }
    }
    return [&](const Node& n, const std::vector<RuntimeValue>& outs) {
      auto it = slot.find(&n);
      if (it == slot.end() || outs.empty() || !outs[0].is_tensor()) return;
      const PrunableUnits& p = watched[it->second];
      const Tensor& y = outs[0].tensor;
      if (p.axis >= y.rank() || y.dim(p.axis) != p.width) return;
      int64_t inner = 1;
      for (int64_t d = p.axis + 1; d < y.rank(); ++d) inner *= y.dim(d);
      for (int64_t i = 0; i < y.num_elements(); ++i) {
        int64_t u = (i / inner) % p.width;
        ++total[it->second][u];
        active[it->second][u] += y.ElementAsDouble(i) != 0;
      }
    };
  });
  if (!ran.ok()) return ran;
  for (size_t w = 0; w < watched.size(); ++w) {
    UnitActivity a;
    a.graph = watched[w].graph;
    a.value = watched[w].value;
    a.axis = watched[w].axis;
    a.positions = watched[w].width > 0 ? total[w][0] : 0;
    bool seen = false;
    for (int64_t u = 0; u < watched[w].width; ++u) {
      seen = seen || total[w][u] > 0;
      a.active_share.push_back(total[w][u] > 0 ? static_cast<double>(active[w][u]) / static_cast<double>(total[w][u]) : 1.0);
    }
    if (seen) out.push_back(std::move(a));
  }
  return out;
}

// Linear layers inside bodies no calibration sample ran: not searched, but said.
int64_t SitesNotSearched(const Model& model, const std::set<std::string>& searched) {
  int64_t n = 0;
  for (const ModelGraph& mg : GraphsOf(model)) {
    if (!searched.count(mg.key)) n += static_cast<int64_t>(FindLinearSites(*mg.graph).size());
  }
  return n;
}

std::string Count(int64_t v) {
  if (v < 0) return "?";
  if (v >= 10'000'000'000) return absl::StrFormat("%.1fG", static_cast<double>(v) / 1e9);
  if (v >= 10'000'000) return absl::StrFormat("%.1fM", static_cast<double>(v) / 1e6);
  if (v >= 10'000) return absl::StrFormat("%.1fK", static_cast<double>(v) / 1e3);
  return std::to_string(v);
}

}  // namespace

absl::Status AddApplySpec(const std::string& spec, ApproximateOptions& options) {
  if (spec == "merge-linear") {
    options.merge_linear = true;
  } else if (spec == "prune-dead") {
    options.prune_dead = true;
  } else if (spec == "low-rank") {
    options.low_rank = true;
    options.rank.automatic = true;
  } else if (spec.rfind("low-rank=", 0) == 0) {
    const std::string value = spec.substr(9);
    double energy = 0;
    int64_t rank = 0;
    if (value.find('.') == std::string::npos && absl::SimpleAtoi(value, &rank) && rank >= 1) {
      options.rank.rank = rank;
    } else if (absl::SimpleAtod(value, &energy) && energy > 0 && energy < 1) {
      options.rank.energy = energy;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("low-rank=", value,
                                                     ": expected an energy share in (0, 1) or a rank >= 1"));
    }
    options.low_rank = true;
    options.rank.automatic = false;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(spec, ": expected low-rank[=E|R], prune-dead or merge-linear"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ApproximateResult> ApplyApproximations(const Model& original, std::unique_ptr<Model>& model,
                                                      const ApproximateOptions& options) {
  ApproximateResult result;
  result.max_error = options.max_error;
  result.random_data = options.calibration.random;
  result.samples = options.calibration.samples;
  result.threads = options.threads;
  const CalibrationData& cal = options.calibration;
  result.data = absl::StrCat(cal.samples, cal.random ? " random" : "", cal.samples == 1 ? " sample" : " samples");
  if (cal.random) {
    // "random:8 at x=1,3,224,224": the shapes, where the caller says them.
    size_t at = cal.source.find(" at ");
    if (at != std::string::npos) absl::StrAppend(&result.data, cal.source.substr(at));
    absl::StrAppend(&result.data, " (generated, not real data)");
  } else {
    absl::StrAppend(&result.data, " from ", cal.source);
  }
  auto say = [&options](const std::string& m) {
    if (options.progress) options.progress(m);
  };
  std::vector<Feeds> feeds;
  for (int64_t i = 0; i < options.calibration.samples; ++i) {
    auto f = options.calibration.feed(i);
    if (!f.ok()) return absl::InvalidArgumentError(absl::StrCat("calibration sample ", i + 1, ": ", f.status().message()));
    feeds.push_back(*std::move(f));
  }
  if (feeds.empty()) return absl::InvalidArgumentError("no calibration samples");
  // Every k-th sample is held out: never decided on, it tells at the end how
  // far the result is from the original on samples the decisions did not see.
  std::vector<Feeds> held_out;
  if (options.holdout_share > 0 && feeds.size() >= 8) {
    const size_t every = std::max<size_t>(2, static_cast<size_t>(std::llround(1.0 / options.holdout_share)));
    std::vector<Feeds> decide;
    for (size_t i = 0; i < feeds.size(); ++i) (i % every == every - 1 ? held_out : decide).push_back(std::move(feeds[i]));
    feeds = std::move(decide);
  }
  result.samples = static_cast<int64_t>(feeds.size());
  result.holdout_samples = static_cast<int64_t>(held_out.size());
  if (!held_out.empty()) absl::StrAppend(&result.data, ": ", feeds.size(), " decided on, ", held_out.size(), " held out");
  say("running the original on the calibration samples");
  auto reference = session::Session::Create(original, MeasuringSession(options));
  if (!reference.ok()) return reference.status();
  auto want = RunAll(**reference, feeds);
  if (!want.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the model does not run on the calibration samples: ", want.status().message()));
  }
  const std::vector<session::IoInfo> outputs = (*reference)->outputs();
  std::unique_ptr<Model> current = CloneModel(*model);
  // Before IR 4 every initializer is also listed as a graph input: those are
  // weights here (not inputs a caller may feed), listed again at the end.
  const bool initializers_are_inputs = current->ir_version < 4;
  if (initializers_are_inputs) {
    std::vector<Value*> inputs;
    for (Value* v : current->graph->inputs()) {
      if (!v->is_initializer()) inputs.push_back(v);
    }
    current->graph->set_inputs(inputs);
  }
  {
    // The candidates read dtypes and ranks of intermediate values.
    InferOptions io;
    io.best_effort = true;
    (void)InferShapes(*current, io);
  }
  auto current_session = session::Session::Create(*current, MeasuringSession(options));
  if (!current_session.ok()) return current_session.status();
  std::unique_ptr<session::Session> running = *std::move(current_session);
  double current_error = 0;
  {
    auto got = RunAll(*running, feeds);
    if (!got.ok()) return got.status();
    current_error = Error(*got, *want, outputs, &result.final_worst_output);
  }

  // Bodies are searched where a sample ran them.
  std::set<std::string> searched = {""};
  if (options.merge_linear || options.prune_dead || options.low_rank) {
    say("finding the If/Loop/Scan bodies the calibration samples run");
    auto found = SearchedGraphs(*current, feeds);
    if (found.ok()) {
      searched = *std::move(found);
    } else {
      result.notes.push_back(absl::StrCat("bodies not searched: the reference interpreter could not run the samples (",
                                          found.status().message(), ")"));
    }
  }

  // One trial: the candidate applied to a clone of the current model, run on
  // the samples. Returns the clone and its session when the edit ran.
  struct Trial {
    std::unique_ptr<Model> model;
    std::unique_ptr<session::Session> session;
    double error = 0;
    std::string worst;
    absl::Status status;
  };
  auto try_candidate = [&](const ApproximateCandidate& c) {
    Trial t;
    t.model = CloneModel(*current);
    t.status = c.apply(*t.model);
    if (t.status.ok()) {
      auto s = session::Session::Create(*t.model, MeasuringSession(options));
      if (s.ok()) t.session = *std::move(s);
      else t.status = s.status();
    }
    if (t.status.ok()) {
      auto got = RunAll(*t.session, feeds);
      if (got.ok()) t.error = Error(*got, *want, outputs, &t.worst);
      else t.status = got.status();
    }
    return t;
  };
  auto step_of = [](const ApproximateCandidate& c) {
    ApproximateStep step;
    step.kind = c.kind;
    step.where = c.where;
    step.detail = c.detail;
    step.params_before = c.params_before;
    step.params_after = c.params_after;
    step.macs_before = c.macs_before;
    step.macs_after = c.macs_after;
    return step;
  };
  // The model the steps start from, kept to time each step's result against.
  std::unique_ptr<session::Session> start_session;
  if (options.measure_latency && !options.keep_slower) {
    auto s = session::Session::Create(*current, MeasuringSession(options));
    if (s.ok()) start_session = *std::move(s);
  }
  // Measures `t` against the budget and, timed, against the model so far;
  // keeps it (it becomes the current model) or says why not.
  auto decide = [&](Trial& t, ApproximateStep& step) {
    step.error = t.error;
    step.worst_output = t.worst;
    if (!t.status.ok()) {
      step.refused = absl::StrCat("the edited model did not run: ", t.status.message());
      return;
    }
    if (!(t.error <= options.max_error)) {
      step.refused = absl::StrFormat("error %.3g at %s > budget %g", t.error, t.worst, options.max_error);
      return;
    }
    if (options.measure_latency) {
      auto [before, after] = PairedMs(*running, *t.session, feeds[0], 400);
      step.latency_before_ms = before;
      step.latency_after_ms = after;
      if (!options.keep_slower && before > 0 && after > before * (1 + kSlowerTolerance)) {
        step.refused = absl::StrFormat("slower: %.3f -> %.3f ms (error %.3g)", before, after, t.error);
        return;
      }
      // And against the model the steps started from, paired too (a baseline
      // timed once drifts with the machine): small slowdowns must not add up.
      if (!options.keep_slower && start_session != nullptr && result.kept() > 0) {
        auto [start, now] = PairedMs(*start_session, *t.session, feeds[0], 400);
        if (start > 0 && now > start * (1 + kSlowerTolerance)) {
          step.refused = absl::StrFormat("slower than before the first step: %.3f -> %.3f ms (error %.3g)", start, now,
                                         t.error);
          return;
        }
      }
    }
    step.kept = true;
    current = std::move(t.model);
    running = std::move(t.session);
    current_error = t.error;
    result.final_worst_output = t.worst;
  };
  auto saving = [](const ApproximateCandidate& c) {
    return static_cast<double>(c.macs_before >= 0 ? c.macs_before - c.macs_after : c.params_before - c.params_after);
  };

  // Greedy: the candidate that saves most first, found again on the model
  // each kept step leaves (a merge makes the next pair).
  std::set<std::string> tried;
  auto phase = [&](const std::string& kind, const std::function<std::vector<ApproximateCandidate>(const Model&)>& find) {
    while (true) {
      std::vector<ApproximateCandidate> candidates = find(*current);
      const ApproximateCandidate* best = nullptr;
      for (const ApproximateCandidate& c : candidates) {
        if (tried.count(c.key)) continue;
        if (best == nullptr || c.params_before - c.params_after > best->params_before - best->params_after) best = &c;
      }
      if (best == nullptr) return;
      tried.insert(best->key);
      ApproximateStep step = step_of(*best);
      say(absl::StrCat(kind, " ", result.steps.size() + 1, ": measuring ", best->where));
      Trial t = try_candidate(*best);
      decide(t, step);
      result.steps.push_back(std::move(step));
    }
  };
  // Ranked: every candidate measured alone first, then applied in order of
  // saving per error (MACs, else parameters), at most one of a group (the
  // ranks of one layer), each re-measured on the model so far. The budget
  // goes to the layers that give most for it, not to the largest.
  auto ranked_phase = [&](const std::string& kind, std::vector<ApproximateCandidate> candidates) {
    std::vector<std::pair<double, size_t>> order;
    std::vector<double> alone(candidates.size(), 0);
    std::vector<std::string> alone_failure(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      say(absl::StrCat(kind, ": measuring ", i + 1, " of ", candidates.size(), " alone: ", candidates[i].where));
      Trial t = try_candidate(candidates[i]);
      alone[i] = t.error;
      if (!t.status.ok()) {
        alone_failure[i] = absl::StrCat("the edited model did not run: ", t.status.message());
      } else if (!(t.error <= options.max_error)) {
        alone_failure[i] = absl::StrFormat("error %.3g at %s > budget %g (alone)", t.error, t.worst, options.max_error);
      } else {
        order.push_back({saving(candidates[i]) / std::max(t.error, 1e-9), i});
      }
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    auto group_of = [&](size_t i) { return candidates[i].group.empty() ? candidates[i].key : candidates[i].group; };
    // A group's best option alone may not fit once others are kept: its
    // next option (fewer savings, less error) gets its turn.
    std::set<std::string> done, fitted;
    for (const auto& o : order) fitted.insert(group_of(o.second));
    for (const auto& [score, i] : order) {
      const ApproximateCandidate& c = candidates[i];
      if (done.count(group_of(i))) continue;
      ApproximateStep step = step_of(c);
      say(absl::StrCat(kind, " ", result.steps.size() + 1, ": applying ", c.where));
      Trial t = try_candidate(c);
      decide(t, step);
      if (step.kept) done.insert(group_of(i));
      result.steps.push_back(std::move(step));
    }
    // A group none of whose options fits even alone: one refused line, its
    // least costly option (the highest rank) and that option's error.
    std::map<std::string, size_t> unfit;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (fitted.count(group_of(i))) continue;
      auto it = unfit.find(group_of(i));
      if (it == unfit.end() || candidates[i].params_after > candidates[it->second].params_after) unfit[group_of(i)] = i;
    }
    for (const auto& [group, i] : unfit) {
      ApproximateStep step = step_of(candidates[i]);
      step.error = alone[i];
      step.refused = alone_failure[i];
      result.steps.push_back(std::move(step));
    }
  };
  // Every searched graph's candidates, each with its own nodes' positions.
  auto per_graph = [&](const Model& m, const std::function<std::vector<ApproximateCandidate>(const ModelGraph&, const SitePositions&)>& find) {
    ModelPositions positions = Positions(m, feeds[0]);
    std::vector<ApproximateCandidate> all;
    for (const ModelGraph& mg : GraphsOf(m)) {
      if (!searched.count(mg.key)) continue;
      for (ApproximateCandidate& c : find(mg, positions[mg.key])) all.push_back(std::move(c));
    }
    return all;
  };
  if (options.merge_linear) {
    phase("merge-linear", [&](const Model& m) { return per_graph(m, MergeLinearCandidates); });
  }
  if (options.prune_dead) {
    // Measured once, on the model after merging; a kept prune changes no
    // other unit's activity (dead units contribute exact zeros), and node
    // indices stay (the edit only shrinks weights). Rare units (a share
    // above 0) do change downstream activity a little: the error measures it.
    say("prune-dead: measuring unit activity on the reference interpreter");
    auto activity = MeasureActivity(*current, searched, feeds);
    if (activity.ok()) {
      int64_t few = 0;
      for (const UnitActivity& a : *activity) few += a.positions < kMinPositionsToPrune;
      if (few > 0) {
        result.notes.push_back(absl::StrCat("prune-dead: ", few, few == 1 ? " layer's" : " layers'",
                                            " units were seen at fewer than ", kMinPositionsToPrune,
                                            " positions and were not considered (more calibration samples would)"));
      }
      phase("prune-dead", [&](const Model& m) {
        return per_graph(m, [&](const ModelGraph& g, const SitePositions& p) {
          return PruneDeadCandidates(g, *activity, options.min_activation, p);
        });
      });
    } else {
      ApproximateStep step;
      step.kind = "prune-dead";
      step.refused = absl::StrCat("unit activity not measured: ", activity.status().message());
      result.steps.push_back(std::move(step));
    }
  }
  if (options.low_rank) {
    say("low-rank: decomposing weights");
    ranked_phase("low-rank", per_graph(*current, [&](const ModelGraph& g, const SitePositions& p) {
                   return LowRankCandidates(g, options.rank, p);
                 }));
  }
  if (int64_t unsearched = SitesNotSearched(*current, searched); unsearched > 0) {
    result.notes.push_back(absl::StrCat(unsearched, " linear layer", unsearched == 1 ? "" : "s",
                                        " inside If/Loop/Scan bodies no calibration sample ran: not searched (a "
                                        "change there would go unmeasured)"));
  }
  result.final_error = current_error;
  if (!held_out.empty() && result.kept() > 0) {
    say("checking the result on the held-out samples");
    auto want_held = RunAll(**reference, held_out);
    auto got_held = RunAll(*running, held_out);
    if (want_held.ok() && got_held.ok()) {
      result.holdout_error = Error(*got_held, *want_held, outputs, &result.holdout_worst_output);
      if (!(result.holdout_error <= options.max_error)) {
        result.notes.push_back(absl::StrFormat(
            "the held-out samples' error %.3g (%s) is past the budget: the samples decided on do not stand for "
            "the data well enough (more of them, or a smaller --max-error)",
            result.holdout_error, result.holdout_worst_output));
      }
    }
  }
  if (options.measure_latency && result.kept() > 0) {
    say("timing the original against the result");
    auto [before, after] = PairedMs(**reference, *running, feeds[0], 2000);
    result.latency_original_ms = before;
    result.latency_final_ms = after;
  }
  if (result.kept() > 0) {
    InferOptions io;
    io.best_effort = true;
    (void)InferShapes(*current, io);
    if (initializers_are_inputs) {
      for (Value* v : current->graph->initializers()) {
        if (!v->is_graph_input()) current->graph->AddInput(v);
      }
    }
    model = std::move(current);
  }
  return result;
}

std::string FormatApproximations(const ApproximateResult& r) {
  std::string out = absl::StrCat("approximations: on ", r.data, ", error budget ", absl::StrFormat("%g", r.max_error),
                                 " (relative L2 per output)\n");
  int64_t params_saved = 0, macs_saved = 0;
  bool macs_known = true;
  for (const ApproximateStep& s : r.steps) {
    if (s.where.empty()) {
      absl::StrAppend(&out, "  ", s.kind, ": ", s.refused, "\n");
      continue;
    }
    absl::StrAppend(&out, "  ", s.kept ? "kept   " : "refused", " ", s.kind, " ", s.where, ": ", s.detail, "\n");
    absl::StrAppend(&out, "          params ", Count(s.params_before), " -> ", Count(s.params_after), ", MACs ",
                    Count(s.macs_before), " -> ", Count(s.macs_after));
    if (s.kept) {
      absl::StrAppend(&out, ", error ", absl::StrFormat("%.3g", s.error));
      if (s.latency_before_ms >= 0) {
        absl::StrAppend(&out, absl::StrFormat(", latency %.3f -> %.3f ms", s.latency_before_ms, s.latency_after_ms));
      }
      params_saved += s.params_before - s.params_after;
      if (s.macs_before >= 0) macs_saved += s.macs_before - s.macs_after;
      else macs_known = false;
    } else {
      absl::StrAppend(&out, "; ", s.refused);
    }
    absl::StrAppend(&out, "\n");
  }
  for (const std::string& note : r.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  absl::StrAppend(&out, "  ", r.kept(), " kept of ", r.steps.size(), " tried: ", Count(params_saved),
                  " params and ", macs_known ? Count(macs_saved) : "?", " MACs a run saved; output error ",
                  absl::StrFormat("%.3g", r.final_error));
  if (!r.final_worst_output.empty()) absl::StrAppend(&out, " (", r.final_worst_output, ")");
  if (r.holdout_error >= 0) {
    absl::StrAppend(&out, absl::StrFormat(", on the %d held-out samples %.3g", r.holdout_samples, r.holdout_error));
  }
  if (r.latency_original_ms >= 0) {
    absl::StrAppend(&out, absl::StrFormat("; latency %.3f -> %.3f ms (%.2fx) on cpu", r.latency_original_ms,
                                          r.latency_final_ms, r.latency_final_ms / r.latency_original_ms));
  }
  absl::StrAppend(&out, "\n");
  return out;
}

void WriteApproximationsJson(JsonWriter& json, const ApproximateResult& r) {
  json.BeginObject();
  json.Field("data", r.data);
  json.Field("random_data", r.random_data);
  json.Field("samples", r.samples);
  json.Field("max_error", r.max_error);
  json.Field("error_metric", "relative L2 per output (integer outputs: share of elements that differ)");
  json.Field("final_error", r.final_error);
  json.Field("final_worst_output", r.final_worst_output);
  json.Field("holdout_samples", r.holdout_samples);
  if (r.holdout_error >= 0) {
    json.Field("holdout_error", r.holdout_error);
    json.Field("holdout_worst_output", r.holdout_worst_output);
  }
  if (r.latency_original_ms >= 0) {
    json.Field("latency_original_ms", r.latency_original_ms);
    json.Field("latency_final_ms", r.latency_final_ms);
  }
  json.Key("notes");
  json.InlineStrings(r.notes);
  json.Key("steps");
  json.BeginArray();
  for (const ApproximateStep& s : r.steps) {
    json.BeginObject();
    json.Field("kind", s.kind);
    json.Field("where", s.where);
    json.Field("detail", s.detail);
    json.Field("kept", s.kept);
    if (!s.refused.empty()) json.Field("refused", s.refused);
    json.Field("params_before", s.params_before);
    json.Field("params_after", s.params_after);
    json.Field("macs_before", s.macs_before);
    json.Field("macs_after", s.macs_after);
    json.Field("error", s.error);
    if (!s.worst_output.empty()) json.Field("worst_output", s.worst_output);
    if (s.latency_before_ms >= 0) {
      json.Field("latency_before_ms", s.latency_before_ms);
      json.Field("latency_after_ms", s.latency_after_ms);
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace aic::analysis
