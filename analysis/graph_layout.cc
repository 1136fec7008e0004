// Graphviz through its library (libgvc + libcgraph) rather than the `dot`
// program: no child process, no temporary files, no parsing of dot's output,
// and the positions come back as numbers (ND_coord, ED_spl). Graphviz keeps
// global state and is not thread-safe; one layout runs at a time.
#include "analysis/graph_layout.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#if defined(__SANITIZE_ADDRESS__)
// Graphviz 2.42 (Debian 12) loses one buffer in gvContext(): gvconfig()'s
// plugin configuration, about 3.6 KB, which gvFreeContext() never frees. Not
// ours to fix; without this every ASan test that lays out a graph fails on
// LeakSanitizer. The library has no frame pointers, so the leak's stack ends
// in libgvc's own malloc wrapper: the suppression names that library (our
// graphs and layouts are cgraph's and the layout plugin's, still checked).
extern "C" const char* __lsan_default_suppressions() { return "leak:libgvc.so\n"; }
#endif

namespace aic::analysis {

namespace {

// cgraph's API takes `char*` for names and values it does not modify.
char* C(const char* s) { return const_cast<char*>(s); }

std::string Inches(double points) { return absl::StrCat(points / 72.0); }

// Graphviz prints its errors to stderr; collect them for the Status instead.
std::string* g_graphviz_errors = nullptr;
int CollectGraphvizError(char* message) {
  if (g_graphviz_errors == nullptr) return 0;
  // One line: the CLI prints the Status as a single line.
  for (const char* c = message; *c != '\0'; ++c) g_graphviz_errors->push_back(*c == '\n' ? ' ' : *c);
  return 0;
}

// One run of dot: vertices and edges in its own indices.
struct Piece {
  std::vector<LayoutInput::Node> nodes;
  std::vector<LayoutInput::Edge> edges;
  std::vector<bool> arrow;      // per edge: ends in an arrowhead
  std::vector<int> top, bottom; // vertices pinned to the first / last rank
};

absl::StatusOr<GraphLayout> RunDot(GVC_t* gvc, const Piece& piece, const std::string& errors) {
  Agraph_t* g = agopen(C("g"), Agdirected, nullptr);
  agattr(g, AGRAPH, C("rankdir"), C("TB"));
  agattr(g, AGRAPH, C("nodesep"), C("0.3"));
  // Room between ranks for the edges' shape labels, which are placed on the
  // splines afterwards rather than given to dot: dot makes each edge label a
  // node of its own rank, doubling the ranks and the layout time.
  agattr(g, AGRAPH, C("ranksep"), C("0.45"));
  // Crossing minimisation: fewer passes on big pieces (the drawing stays readable).
  if (piece.nodes.size() > 800) agattr(g, AGRAPH, C("mclimit"), C("0.3"));
  // Edges that skip many ranks (DenseNet's concatenations read every earlier
  // layer of their block) become chains of virtual nodes, one per rank
  // crossed, and network simplex over those took minutes: bound its passes.
  int64_t span = 0;
  for (const LayoutInput::Edge& e : piece.edges) span += std::abs(e.to - e.from);
  if (span > 20 * static_cast<int64_t>(piece.nodes.size())) {
    agattr(g, AGRAPH, C("mclimit"), C("0.1"));
    agattr(g, AGRAPH, C("nslimit"), C("2"));
    agattr(g, AGRAPH, C("nslimit1"), C("2"));
  }
  agattr(g, AGRAPH, C("rank"), C(""));
  agattr(g, AGNODE, C("shape"), C("box"));
  agattr(g, AGNODE, C("fixedsize"), C("true"));
  agattr(g, AGNODE, C("label"), C(""));
  Agsym_t* width = agattr(g, AGNODE, C("width"), C("1"));
  Agsym_t* height = agattr(g, AGNODE, C("height"), C("0.5"));
  Agsym_t* arrowhead = agattr(g, AGEDGE, C("arrowhead"), C("normal"));

  std::vector<Agnode_t*> nodes;
  nodes.reserve(piece.nodes.size());
  for (size_t i = 0; i < piece.nodes.size(); ++i) {
    std::string name = absl::StrCat("n", i);
    Agnode_t* n = agnode(g, C(name.c_str()), 1);
    agxset(n, width, C(Inches(piece.nodes[i].width).c_str()));
    agxset(n, height, C(Inches(piece.nodes[i].height).c_str()));
    nodes.push_back(n);
  }
  for (auto [name, rank, members] : {std::tuple{"top", "source", &piece.top},
                                      std::tuple{"bottom", "sink", &piece.bottom}}) {
    if (members->empty()) continue;
    Agraph_t* sub = agsubg(g, C(name), 1);
    agset(sub, C("rank"), C(rank));
    for (int v : *members) agsubnode(sub, nodes[v], 1);
  }
  std::vector<Agedge_t*> edges;
  edges.reserve(piece.edges.size());
  for (size_t i = 0; i < piece.edges.size(); ++i) {
    const LayoutInput::Edge& e = piece.edges[i];
    Agedge_t* edge = agedge(g, nodes[e.from], nodes[e.to], nullptr, 1);
    if (!piece.arrow[i]) agxset(edge, arrowhead, C("none"));
    edges.push_back(edge);
  }

  absl::StatusOr<GraphLayout> result;
  if (gvLayout(gvc, g, "dot") != 0) {
    result = absl::FailedPreconditionError(absl::StrCat(
        "Graphviz's dot layout is not available (install Debian's graphviz: apt-get install "
        "graphviz)",
        errors.empty() ? "" : ": ", absl::StripAsciiWhitespace(errors)));
  } else {
    GraphLayout layout;
    const boxf bb = GD_bb(g);
    auto at = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
    layout.width = bb.UR.x - bb.LL.x;
    layout.height = bb.UR.y - bb.LL.y;
    for (Agnode_t* n : nodes) layout.centers.push_back(at(ND_coord(n)));
    for (Agedge_t* e : edges) {
      GraphLayout::EdgePath path;
      const splines* spl = ED_spl(e);
      if (spl != nullptr && spl->size > 0) {
        const bezier& bz = spl->list[0];
        for (int k = 0; k < bz.size; ++k) path.points.push_back(at(bz.list[k]));
        if (bz.eflag) {
          path.has_arrow = true;
          path.arrow_tip = at(bz.ep);
        }
      }
      layout.edges.push_back(std::move(path));
    }
    gvFreeLayout(gvc, g);
    result = std::move(layout);
  }
  agclose(g);
  return result;
}

// dot's x-coordinate pass (network simplex over a graph several times the
// size of the input) grows faster than linearly: 3000 nodes take ~3 s, 6000
// ~28 s in one piece. Past kPieceNodes the graph is cut along its topological order where
// the fewest edges cross, each piece laid out alone and the pieces stacked;
// an edge between pieces leaves its piece at a stub on the last rank, enters
// the next at a stub on the first, and is drawn through the gap (along the
// right side when it skips pieces).
constexpr size_t kPieceNodes = 2000;
constexpr double kPieceGap = 40;
constexpr double kStub = 2;  // points

absl::StatusOr<GraphLayout> LayOutInPieces(GVC_t* gvc, const LayoutInput& input,
                                           const std::string& errors) {
  const size_t n = input.nodes.size();
  // Topological order, smallest index first: the caller's execution order.
  std::vector<std::vector<int>> out(n);
  std::vector<int> indegree(n, 0);
  for (const LayoutInput::Edge& e : input.edges) {
    out[e.from].push_back(e.to);
    ++indegree[e.to];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(static_cast<int>(v));
  }
  std::vector<int> order, pos(n, -1);
  while (!ready.empty()) {
    int v = ready.top();
    ready.pop();
    pos[v] = static_cast<int>(order.size());
    order.push_back(v);
    for (int w : out[v]) {
      if (--indegree[w] == 0) ready.push(w);
    }
  }
  for (size_t v = 0; v < n; ++v) {  // a cycle (not expected): the rest in index order
    if (pos[v] < 0) {
      pos[v] = static_cast<int>(order.size());
      order.push_back(static_cast<int>(v));
    }
  }
  // crossing[p]: edges over the cut just before position p.
  std::vector<int> crossing(n + 1, 0);
  for (const LayoutInput::Edge& e : input.edges) {
    if (pos[e.from] < pos[e.to]) {
      ++crossing[pos[e.from] + 1];
      --crossing[pos[e.to] + 1];
    }
  }
  for (size_t p = 1; p <= n; ++p) crossing[p] += crossing[p - 1];
  const size_t pieces = (n + kPieceNodes - 1) / kPieceNodes;
  std::vector<size_t> cuts = {0};
  for (size_t k = 1; k < pieces; ++k) {
    size_t target = k * n / pieces, best = target;
    size_t lo = std::max(cuts.back() + 1, target - kPieceNodes / 4), hi = std::min(n - 1, target + kPieceNodes / 4);
    for (size_t p = lo; p <= hi; ++p) {
      size_t d = p > target ? p - target : target - p, db = best > target ? best - target : target - best;
      if (crossing[p] < crossing[best] || (crossing[p] == crossing[best] && d < db)) best = p;
    }
    cuts.push_back(best);
  }
  cuts.push_back(n);
  std::vector<int> piece_of(n), local(n);
  std::vector<Piece> piece(pieces);
  for (size_t k = 0; k < pieces; ++k) {
    for (size_t p = cuts[k]; p < cuts[k + 1]; ++p) {
      int v = order[p];
      piece_of[v] = static_cast<int>(k);
      local[v] = static_cast<int>(piece[k].nodes.size());
      piece[k].nodes.push_back(input.nodes[v]);
    }
  }
  auto add_edge = [&](Piece& pc, int from, int to, bool arrow) {
    pc.edges.push_back({from, to});
    pc.arrow.push_back(arrow);
    return static_cast<int>(pc.edges.size()) - 1;
  };
  auto add_stub = [&](Piece& pc, std::vector<int>& rank) {
    pc.nodes.push_back({kStub, kStub});
    rank.push_back(static_cast<int>(pc.nodes.size()) - 1);
    return rank.back();
  };
  // Per input edge: its edge in its piece, or the edge to the exit stub and
  // the edge from the entry stub.
  struct Ref {
    int from_piece = -1, from_edge = -1, to_piece = -1, to_edge = -1;
  };
  std::vector<Ref> refs(input.edges.size());
  std::map<int, int> exit_edge;                  // source vertex -> its edge to its exit stub
  std::map<std::pair<int, int>, int> entry_stub; // (source vertex, piece) -> entry stub
  for (size_t i = 0; i < input.edges.size(); ++i) {
    const LayoutInput::Edge& e = input.edges[i];
    int a = piece_of[e.from], b = piece_of[e.to];
    if (a == b) {
      refs[i] = {a, add_edge(piece[a], local[e.from], local[e.to], true), -1, -1};
    } else if (a < b) {
      auto [it, fresh] = exit_edge.try_emplace(e.from, -1);
      if (fresh) {
        int stub = add_stub(piece[a], piece[a].bottom);
        it->second = add_edge(piece[a], local[e.from], stub, false);
      }
      auto [jt, fresh_entry] = entry_stub.try_emplace({e.from, b}, -1);
      if (fresh_entry) jt->second = add_stub(piece[b], piece[b].top);
      refs[i] = {a, it->second, b, add_edge(piece[b], jt->second, local[e.to], true)};
    }  // else: against the order (a cycle); not drawn
  }

  std::vector<GraphLayout> laid;
  for (const Piece& pc : piece) {
    absl::StatusOr<GraphLayout> l = RunDot(gvc, pc, errors);
    if (!l.ok()) return l.status();
    laid.push_back(*std::move(l));
  }
  GraphLayout layout;
  // Each piece shifted sideways so that the edges from the piece above come
  // down straight on average (dot lets a long chain drift sideways).
  std::vector<double> x_off(pieces, 0), y_off(pieces, 0);
  for (size_t k = 1; k < pieces; ++k) {
    double shift = 0;
    int count = 0;
    for (size_t i = 0; i < refs.size(); ++i) {
      const Ref& r = refs[i];
      if (r.to_piece != static_cast<int>(k) || r.from_piece != static_cast<int>(k) - 1) continue;
      const auto& a = laid[k - 1].edges[r.from_edge].points;
      const auto& b = laid[k].edges[r.to_edge].points;
      if (a.empty() || b.empty()) continue;
      shift += a.back().x + x_off[k - 1] - b.front().x;
      ++count;
    }
    x_off[k] = count > 0 ? shift / count : x_off[k - 1] + (laid[k - 1].width - laid[k].width) / 2;
    y_off[k] = y_off[k - 1] + laid[k - 1].height + kPieceGap;
  }
  const double left = *std::min_element(x_off.begin(), x_off.end());
  for (size_t k = 0; k < pieces; ++k) {
    x_off[k] -= left;
    layout.width = std::max(layout.width, x_off[k] + laid[k].width);
  }
  layout.height = y_off.back() + laid.back().height;
  auto moved = [&](LayoutPoint p, int k) { return LayoutPoint{p.x + x_off[k], p.y + y_off[k]}; };
  layout.centers.resize(n);
  for (size_t v = 0; v < n; ++v) layout.centers[v] = moved(laid[piece_of[v]].centers[local[v]], piece_of[v]);
  const double side = layout.width + 16;
  bool used_side = false;
  for (size_t i = 0; i < refs.size(); ++i) {
    const Ref& r = refs[i];
    GraphLayout::EdgePath path;
    if (r.from_piece >= 0) {
      const GraphLayout::EdgePath& first = laid[r.from_piece].edges[r.from_edge];
      for (const LayoutPoint& p : first.points) path.points.push_back(moved(p, r.from_piece));
      if (r.to_piece < 0) {
        path.has_arrow = first.has_arrow;
        path.arrow_tip = moved(first.arrow_tip, r.from_piece);
      } else {
        const GraphLayout::EdgePath& second = laid[r.to_piece].edges[r.to_edge];
        if (path.points.empty() || second.points.empty()) {
          path.points.clear();
        } else {
          LayoutPoint x = path.points.back(), e = moved(second.points.front(), r.to_piece);
          if (r.to_piece == r.from_piece + 1) {
            double d = (e.y - x.y) / 2;
            path.points.insert(path.points.end(), {{x.x, x.y + d}, {e.x, e.y - d}, e});
          } else {  // past the pieces between: down the right side
            used_side = true;
            LayoutPoint s1{side, y_off[r.from_piece] + laid[r.from_piece].height + kPieceGap / 2};
            LayoutPoint s2{side, y_off[r.to_piece] - kPieceGap / 2};
            path.points.insert(path.points.end(),
                               {{x.x, s1.y}, {x.x, s1.y}, s1,
                                {side, s1.y + (s2.y - s1.y) / 3}, {side, s1.y + 2 * (s2.y - s1.y) / 3}, s2,
                                {e.x, s2.y}, {e.x, s2.y}, e});
          }
          for (size_t k = 1; k < second.points.size(); ++k) {
            path.points.push_back(moved(second.points[k], r.to_piece));
          }
          path.has_arrow = second.has_arrow;
          path.arrow_tip = moved(second.arrow_tip, r.to_piece);
        }
      }
    }
    layout.edges.push_back(std::move(path));
  }
  if (used_side) layout.width = side + 16;
  return layout;
}

}  // namespace

absl::StatusOr<GraphLayout> LayOutTopToBottom(const LayoutInput& input) {
  static std::mutex graphviz_mutex;
  std::lock_guard<std::mutex> lock(graphviz_mutex);
  std::string errors;
  g_graphviz_errors = &errors;
  agseterr(AGERR);
  agseterrf(CollectGraphvizError);
  GVC_t* gvc = gvContext();
  absl::StatusOr<GraphLayout> result;
  if (input.nodes.size() <= kPieceNodes) {
    Piece whole;
    whole.nodes = input.nodes;
    whole.edges = input.edges;
    whole.arrow.assign(input.edges.size(), true);
    result = RunDot(gvc, whole, errors);
  } else {
    result = LayOutInPieces(gvc, input, errors);
  }
  gvFreeContext(gvc);
  g_graphviz_errors = nullptr;
  return result;
}

}  // namespace aic::analysis
