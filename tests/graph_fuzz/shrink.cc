#include "tests/graph_fuzz/shrink.h"

#include <algorithm>
#include <set>

#include <cstring>

#include "graph/clone.h"
#include "ops/infer_shapes.h"
#include "session/session.h"

namespace aic::graph_fuzz {

namespace {

void MarkRead(const Graph& g, std::set<const Value*>& read) {
  for (const auto& n : g.nodes()) {
    for (const Value* v : n->inputs()) read.insert(v);
    for (const Graph* b : n->Subgraphs()) {
      MarkRead(*b, read);
      for (const Value* v : b->outputs()) read.insert(v);
    }
  }
  for (const Value* v : g.outputs()) read.insert(v);
}

// Every value the reference executor computes for `feeds`, by name.
std::map<std::string, Tensor> AllValues(const Model& model, const exec::Feeds& feeds) {
  std::map<std::string, Tensor> values;
  session::SessionOptions so;
  so.device = "reference";
  so.opt_level = 0;
  auto s = session::Session::Create(model, so);
  if (!s.ok()) return values;
  exec::NodeObserver observer = [&](const Node& n, const std::vector<RuntimeValue>& outs) {
    for (size_t i = 0; i < outs.size() && i < n.num_outputs(); ++i) {
      if (n.output(i) != nullptr && outs[i].is_tensor()) values[n.output(i)->name()] = outs[i].tensor;
    }
  };
  exec::RunOptions ro;
  ro.observer = &observer;
  if (!(*s)->Run(feeds, ro).ok()) values.clear();
  return values;
}

struct Candidate {
  std::unique_ptr<Model> model;
  exec::Feeds feeds;
};

// Node i of the main graph replaced by graph inputs carrying its values.
std::optional<Candidate> Cut(const Model& m, const exec::Feeds& feeds, size_t i,
                             const std::map<std::string, Tensor>& values) {
  Candidate c{CloneModel(m), feeds};
  Graph& g = *c.model->graph;
  const Node* node = g.nodes()[i].get();
  std::vector<Value*> outs = node->outputs();
  for (Value* v : outs) {
    if (v == nullptr) continue;
    auto it = values.find(v->name());
    if (it == values.end()) return std::nullopt;
  }
  g.RemoveNodesIf([&](const Node& n) { return &n == node; });
  std::set<const Value*> read;
  MarkRead(g, read);
  for (Value* v : outs) {
    if (v == nullptr || !read.count(v)) continue;
    const Tensor& t = values.at(v->name());
    v->set_type(TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
    g.AddInput(v);
    c.feeds[v->name()] = RuntimeValue(t);
  }
  RemoveUnread(*c.model, c.feeds);
  return c;
}

bool SameType(const Value* a, const Value* b) {
  return a->type().is_tensor() && b->type().is_tensor() && a->dtype() == b->dtype() &&
         a->type().shape.has_rank() && a->type().shape == b->type().shape;
}

// Node i's only output replaced by its first input of the same type.
std::optional<Candidate> Bypass(const Model& m, const exec::Feeds& feeds, size_t i) {
  Candidate c{CloneModel(m), feeds};
  Graph& g = *c.model->graph;
  const Node* node = g.nodes()[i].get();
  if (node->num_outputs() != 1 || node->output(0) == nullptr || !node->Subgraphs().empty()) return std::nullopt;
  Value* out = node->output(0);
  Value* in = nullptr;
  for (Value* v : node->inputs()) {
    if (v != nullptr && SameType(v, out)) {
      in = v;
      break;
    }
  }
  if (in == nullptr) return std::nullopt;
  for (const auto& n : g.nodes()) {
    for (size_t k = 0; k < n->num_inputs(); ++k) {
      if (n->input(k) == out) n->set_input(k, in);
    }
  }
  std::vector<Value*> graph_outs = g.outputs();
  for (Value*& v : graph_outs) {
    if (v == out) v = in;
  }
  // Two graph outputs may not be the same value.
  std::set<Value*> seen(graph_outs.begin(), graph_outs.end());
  if (seen.size() != graph_outs.size()) return std::nullopt;
  g.set_outputs(graph_outs);
  g.RemoveNodesIf([&](const Node& n) { return &n == node; });
  RemoveUnread(*c.model, c.feeds);
  return c;
}

// The first `n` entries of `t` along `axis`.
Tensor Head(const Tensor& t, size_t axis, int64_t n) {
  std::vector<int64_t> dims = t.dims();
  size_t width = ElementSize(t.dtype());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  int64_t old_n = dims[axis];
  dims[axis] = n;
  Tensor out(t.dtype(), dims);
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  size_t block = static_cast<size_t>(n * inner) * width;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * block, src + static_cast<size_t>(o * old_n * inner) * width, block);
  }
  return out;
}

// Graph input k's static dim `axis` halved (its feed cut to match), when
// the model still infers at that shape (constants of fixed shape often
// forbid it).
std::optional<Candidate> ShrinkDim(const Model& m, const exec::Feeds& feeds, size_t k, size_t axis) {
  Candidate c{CloneModel(m), feeds};
  Value* v = c.model->graph->inputs()[k];
  const TypeInfo& t = v->type();
  auto feed = c.feeds.find(v->name());
  if (!t.is_tensor() || !t.shape.has_rank() || axis >= t.shape.dims().size() || feed == c.feeds.end() ||
      !feed->second.is_tensor() || !t.shape[axis].is_value() || t.shape[axis].value() < 2 ||
      (!IsFloatingPoint(t.dtype) && !IsInteger(t.dtype))) {
    return std::nullopt;
  }
  int64_t n = t.shape[axis].value() / 2;
  std::vector<Dim> dims = t.shape.dims();
  dims[axis] = Dim(n);
  v->set_type(TypeInfo::Tensor(t.dtype, Shape(dims)));
  feed->second = RuntimeValue(Head(feed->second.tensor, axis, n));
  // Inferred types downstream are stale: forget them and infer strictly.
  for (const auto& node : c.model->graph->nodes()) {
    for (Value* out : node->outputs()) {
      if (out != nullptr) out->set_type(TypeInfo());
    }
  }
  InferOptions io;
  io.best_effort = false;
  if (!InferShapes(*c.model, io).ok()) return std::nullopt;
  return c;
}

}  // namespace

void RemoveUnread(Model& model, exec::Feeds& feeds) {
  Graph& g = *model.graph;
  for (bool changed = true; changed;) {
    changed = false;
    std::set<const Value*> read;
    MarkRead(g, read);
    size_t before = g.num_nodes();
    g.RemoveNodesIf([&](const Node& n) {
      return std::none_of(n.outputs().begin(), n.outputs().end(), [&](const Value* v) { return v && read.count(v); });
    });
    changed = g.num_nodes() != before;
  }
  std::set<const Value*> read;
  MarkRead(g, read);
  std::vector<Value*> inits(g.initializers().begin(), g.initializers().end());
  for (Value* v : inits) {
    if (!read.count(v)) g.ClearInitializer(v);
  }
  std::vector<Value*> inputs;
  for (Value* v : g.inputs()) {
    if (read.count(v)) {
      inputs.push_back(v);
    } else {
      feeds.erase(v->name());
    }
  }
  g.set_inputs(inputs);
}

ShrinkResult Shrink(const Model& model, const exec::Feeds& feeds, const StillFails& still_fails, int max_attempts) {
  ShrinkResult best{CloneModel(model), feeds, 0};
  auto accept = [&](std::optional<Candidate>& c) {
    if (!c || best.attempts >= max_attempts) return false;
    ++best.attempts;
    if (!still_fails(*c->model, c->feeds)) return false;
    best.model = std::move(c->model);
    best.feeds = std::move(c->feeds);
    return true;
  };
  for (bool progress = true; progress && best.attempts < max_attempts;) {
    progress = false;
    // One output at a time.
    // best.model changes when a candidate is accepted: never hold on to its graph.
    for (size_t k = 0; best.model->graph->outputs().size() > 1 && k < best.model->graph->outputs().size() && !progress;
         ++k) {
      std::optional<Candidate> c = Candidate{CloneModel(*best.model), best.feeds};
      c->model->graph->set_outputs({c->model->graph->outputs()[k]});
      RemoveUnread(*c->model, c->feeds);
      progress = accept(c);
    }
    if (progress) continue;
    // Cut nodes, the ones near the inputs first (what is left is the end of the chain).
    std::map<std::string, Tensor> values = AllValues(*best.model, best.feeds);
    for (size_t i = 0; i < best.model->graph->num_nodes() && !progress; ++i) {
      std::optional<Candidate> c = Cut(*best.model, best.feeds, i, values);
      progress = accept(c);
    }
    if (progress) continue;
    for (size_t i = best.model->graph->num_nodes(); i-- > 0 && !progress;) {
      std::optional<Candidate> c = Bypass(*best.model, best.feeds, i);
      progress = accept(c);
    }
    if (progress) continue;
    // Smaller inputs.
    for (size_t k = 0; k < best.model->graph->inputs().size() && !progress; ++k) {
      size_t rank = static_cast<size_t>(std::max<int64_t>(0, best.model->graph->inputs()[k]->type().shape.rank()));
      for (size_t axis = 0; axis < rank && !progress; ++axis) {
        std::optional<Candidate> c = ShrinkDim(*best.model, best.feeds, k, axis);
        progress = accept(c);
      }
    }
    if (progress) continue;
    // Graph inputs as constants.
    for (size_t k = 0; k < best.model->graph->inputs().size() && !progress; ++k) {
      std::optional<Candidate> c = Candidate{CloneModel(*best.model), best.feeds};
      Graph& cg = *c->model->graph;
      Value* v = cg.inputs()[k];
      auto it = c->feeds.find(v->name());
      if (it == c->feeds.end() || !it->second.is_tensor()) continue;
      cg.SetInitializer(v, it->second.tensor);
      std::vector<Value*> rest;
      for (Value* in : cg.inputs()) {
        if (in != v) rest.push_back(in);
      }
      cg.set_inputs(rest);
      c->feeds.erase(it);
      progress = accept(c);
    }
  }
  RemoveUnread(*best.model, best.feeds);  // what the last accepted step left unread
  return best;
}

}  // namespace aic::graph_fuzz
