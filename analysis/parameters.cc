#include "analysis/parameters.h"

#include <algorithm>

namespace aic::analysis {

// Whether a stored tensor behind a constant operand is a learned parameter.
// Index and shape tensors (an embedding's position ids) are stored but not
// learned. torch.onnx writes every parameter as an initializer and keeps
// Constant nodes for values traced from Python (normalisation means, the
// all-ones scale of its GroupNorm-as-InstanceNorm export): in its files a
// Constant node's value is not a parameter. Other producers (paddle2onnx)
// keep their weights in Constant nodes.
bool IsLearnedOrigin(const Model& model, const Value* origin, const Tensor& t) {
  DType d = t.dtype();
  if (d == DType::kInt64 || d == DType::kInt32 || d == DType::kBool) return false;
  const Node* p = origin->producer();
  return !(p != nullptr && p->op_type == "Constant" && model.producer_name == "pytorch");
}

// Exporters write a tied weight (GPT-2's token embedding, read again by the
// language-model head) a second time, often as its transpose for a MatMul.
// torch counts it once; so does the report, when the values are identical.
std::vector<TiedCopy> TiedCopies(const std::vector<const Value*>& counted,
                                 const ConstantValues& constants) {
  constexpr int64_t kMinElements = 4096;  // small tensors equal by chance (zeros) are not ties
  struct Entry {
    const Value* v;
    const Tensor* t;
  };
  std::vector<Entry> candidates;
  for (const Value* v : counted) {
    const Tensor* t = constants.Find(v);
    if (t->rank() != 2 || t->num_elements() < kMinElements || t->dtype() != DType::kFloat) continue;
    // An all-equal tensor (a zero init) equals every other one by chance.
    const float* p = t->data<float>();
    if (std::all_of(p, p + t->num_elements(), [&](float x) { return x == p[0]; })) continue;
    candidates.push_back({v, t});
  }
  std::vector<TiedCopy> out;
  std::vector<bool> is_copy(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (is_copy[i]) continue;
    const Tensor& a = *candidates[i].t;
    const float* pa = a.data<float>();
    for (size_t j = i + 1; j < candidates.size(); ++j) {
      const Tensor& b = *candidates[j].t;
      if (is_copy[j] || b.num_elements() != a.num_elements()) continue;
      const float* pb = b.data<float>();
      bool same = a.dims() == b.dims() && std::equal(pa, pa + a.num_elements(), pb);
      bool transposed = false;
      if (!same && a.dim(0) == b.dim(1) && a.dim(1) == b.dim(0)) {
        const int64_t rows = a.dim(0), cols = a.dim(1);
        transposed = true;
        for (int64_t r = 0; transposed && r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) {
            if (pa[r * cols + c] != pb[c * rows + r]) {
              transposed = false;
              break;
            }
          }
        }
      }
      if (!same && !transposed) continue;
      is_copy[j] = true;
      out.push_back({candidates[i].v, candidates[j].v, transposed, b.num_elements()});
    }
  }
  return out;
}

}  // namespace aic::analysis
