// Repeated blocks; see blocks.h. A search for tandem repeats over the
// report's node order: at every start, every period that is not a multiple
// of one already found there (a run of 2p repeats hides fewer nodes than the
// run of p it is made of), extended while the next piece equals the one
// before it; then the runs hiding the most nodes are taken, disjoint,
// greedily. Early exits keep it about quadratic in the nodes (3000 logical
// nodes: 40 ms repeating, 150 ms not; blocks_test.cc).
#include "analysis/blocks.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace aic::analysis {

namespace {

bool Separator(const std::string& s, size_t at) { return at == s.size() || s[at] == '/' || s[at] == '.'; }

// The length of the longest common prefix of a and b that ends where a name
// component ends in both ("/m/layer.1" and "/m/layer.10" share "/m").
size_t CommonPrefix(const std::string& a, const std::string& b, size_t limit) {
  size_t n = std::min({a.size(), b.size(), limit}), l = 0;
  while (l < n && a[l] == b[l]) ++l;
  while (l > 0 && !(Separator(a, l) && Separator(b, l))) --l;
  return l;
}

// The digit runs of a that differ from b's at the same place become '*'
// ("layer.3" vs "layer.4": "layer.*"; "features.5.0" vs "features.5.1":
// "features.5.*"); all of them where the two are not alike.
std::string StarDiffering(const std::string& a, const std::string& b) {
  auto runs = [](const std::string& s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      bool digit = absl::ascii_isdigit(s[i]);
      while (j < s.size() && absl::ascii_isdigit(s[j]) == digit) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  };
  std::vector<std::string> ra = runs(a), rb = runs(b);
  std::string out;
  for (size_t k = 0; k < ra.size(); ++k) {
    bool digits = absl::ascii_isdigit(ra[k][0]);
    out += digits && (ra.size() != rb.size() || ra[k] != rb[k]) ? "*" : ra[k];
  }
  return out;
}

class Finder {
 public:
  Finder(const Report& r, const BlockOptions& o) : r_(r), o_(o), n_(static_cast<int>(r.nodes.size())) {
    // Nodes equal in themselves get equal tokens, so comparing two is one
    // integer compare and their edges.
    std::map<std::tuple<std::string, size_t, std::vector<int64_t>>, int> ids;
    for (const ReportNode& node : r.nodes) {
      auto key = std::make_tuple(node.name, node.sources.size(), node.weight_dims);
      token_.push_back(ids.emplace(key, static_cast<int>(ids.size())).first->second);
      first_input_.push_back(static_cast<int>(inputs_.size()));
      inputs_.insert(inputs_.end(), node.input_from.begin(), node.input_from.end());
      names_.push_back(node.sources.empty() ? "" : node.sources[0].name);
    }
    first_input_.push_back(static_cast<int>(inputs_.size()));
  }

  std::vector<RepeatedBlock> Find() {
    struct Candidate {
      int start, size, count;
      bool aligned;
      int hidden() const { return (count - 1) * size; }
    };
    std::vector<Candidate> candidates;
    for (int s = 0; s < n_; ++s) {
      std::vector<int> periods;
      for (int p = o_.min_size; s + 2 * p <= n_; ++p) {
        if (std::any_of(periods.begin(), periods.end(), [&](int f) { return p % f == 0; })) continue;
        if (!Same(s, s + p, p, s)) continue;
        periods.push_back(p);
        int count = 2;
        while (s + (count + 1) * p <= n_ && Same(s + (count - 1) * p, s + count * p, p, s)) ++count;
        if ((count - 1) * p >= o_.min_hidden) candidates.push_back({s, p, count, Aligned(s, p)});
      }
    }
    // Most hidden first; among equals (the same run shifted by a node, where
    // the node after it matches the first of a repeat) the one starting
    // where a name prefix starts, then the earliest.
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.hidden() != b.hidden()) return a.hidden() > b.hidden();
      if (a.aligned != b.aligned) return a.aligned;
      return a.start < b.start;
    });
    std::vector<bool> taken(n_, false);
    std::vector<RepeatedBlock> blocks;
    for (const Candidate& c : candidates) {
      if (static_cast<int>(blocks.size()) >= o_.max_blocks) break;
      int end = c.start + c.count * c.size;
      bool free = true;
      for (int i = c.start; i < end && free; ++i) free = !taken[i];
      if (!free) continue;
      std::fill(taken.begin() + c.start, taken.begin() + end, true);
      blocks.push_back({c.start, c.size, c.count, Label(c.start, c.size)});
    }
    std::sort(blocks.begin(), blocks.end(),
              [](const RepeatedBlock& a, const RepeatedBlock& b) { return a.start < b.start; });
    return blocks;
  }

 private:
  // Whether the p nodes from b repeat those from a, the repeat before them
  // in a run starting at `run`. An edge from outside a repeat comes from as
  // far back in both, or from the same node (a mask every layer reads, a
  // graph input), or, in the first repeat, from before the run where the
  // second's comes from the first (layer 0 reads the stem, layer 1 layer 0).
  bool Same(int a, int b, int p, int run) const {
    for (int k = 0; k < p; ++k) {
      int i = a + k, j = b + k, ni = first_input_[i + 1] - first_input_[i];
      if (token_[i] != token_[j] || ni != first_input_[j + 1] - first_input_[j]) return false;
      for (int m = 0; m < ni; ++m) {
        int fx = inputs_[first_input_[i] + m], fy = inputs_[first_input_[j] + m];
        bool inside_x = fx >= a && fx < a + p, inside_y = fy >= b && fy < b + p;
        if (inside_x != inside_y || (inside_x && fx - a != fy - b)) return false;
        if (inside_x || fx - a == fy - b) continue;
        if (fx != fy && !(a == run && fx < run && fy >= a)) return false;
      }
    }
    return true;
  }

  // The common name prefix of the p nodes from s (unnamed nodes say nothing).
  std::string Prefix(int s, int p) const {
    const std::string* first = nullptr;
    size_t l = 0;
    for (int i = s; i < s + p; ++i) {
      if (names_[i].empty()) continue;
      if (first == nullptr) {
        first = &names_[i];
        l = first->size();
      } else {
        l = CommonPrefix(*first, names_[i], l);
      }
    }
    return first == nullptr ? "" : first->substr(0, l);
  }

  // The run starts where its name prefix starts: the node before it lies outside the prefix.
  bool Aligned(int s, int p) const {
    std::string prefix = Prefix(s, p);
    if (prefix.empty()) return false;
    return s == 0 || CommonPrefix(names_[s - 1], names_[s], names_[s].size()) < prefix.size();
  }

  // "encoder/layer.*" from /m/encoder/layer.0/... and /m/encoder/layer.1/...;
  // a repeat of several named pieces (Swin's pairs of blocks) by the prefix
  // they share; without telling names, the repeat's first and last ops.
  std::string Label(int s, int p) const {
    std::string p0 = Prefix(s, p), p1 = Prefix(s + p, p);
    auto components = [](const std::string& s) {
      std::vector<std::string> parts;
      size_t at = 0;
      while (at <= s.size()) {
        size_t slash = s.find('/', at);
        if (slash == std::string::npos) slash = s.size();
        if (slash > at) parts.push_back(s.substr(at, slash - at));
        at = slash + 1;
      }
      return parts;
    };
    std::vector<std::string> parts = components(p0);
    bool varies = p0 != p1;
    if (!parts.empty() && (varies || parts.size() >= 2)) {
      std::string last = parts.back();
      if (varies) last = StarDiffering(last, components(p1).empty() ? "" : components(p1).back());
      // torch's module paths repeat their parent: /features/features.5/features.5.0.
      if (parts.size() >= 2 && last.rfind(parts[parts.size() - 2], 0) != 0) {
        return absl::StrCat(parts[parts.size() - 2], "/", last);
      }
      return last;
    }
    auto op = [&](int i) { return r_.nodes[i].name.empty() && !r_.nodes[i].sources.empty()
                                      ? r_.nodes[i].sources[0].op_type : r_.nodes[i].name; };
    return absl::StrCat(op(s), " … ", op(s + p - 1));
  }

  const Report& r_;
  const BlockOptions& o_;
  int n_;
  std::vector<int> token_;
  // The nodes' data inputs (ReportNode::input_from) in one array: node i's
  // are inputs_[first_input_[i] .. first_input_[i + 1]).
  std::vector<int> first_input_, inputs_;
  std::vector<std::string> names_;
};

}  // namespace

std::vector<RepeatedBlock> FindRepeatedBlocks(const Report& report, const BlockOptions& options) {
  return Finder(report, options).Find();
}

}  // namespace aic::analysis
