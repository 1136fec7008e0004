#include "exec/cuda/kernels_host.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "exec/cuda/elt_ops.h"

namespace aic::cuda::host {

void Eltwise(const EltProgram& p, const float* const* inputs, float* out) {
  for (int64_t i = 0; i < p.count; ++i) {
    int64_t off[kMaxEltInputs] = {0, 0, 0, 0};
    int64_t rem = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      int64_t idx = rem % p.dims[d];
      rem /= p.dims[d];
      for (int j = 0; j < p.n_inputs; ++j) off[j] += idx * p.strides[j][d];
    }
    out[i] = EltApply(p, [&](int j) { return inputs[j][off[j]]; });
  }
}

void StridedCopyRun(const StridedCopy& c, const void* in, void* out) {
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < c.count; ++i) {
    int64_t rem = i, s = c.in_offset, t = c.out_offset;
    for (int d = c.rank - 1; d >= 0; --d) {
      int64_t idx = rem % c.dims[d];
      rem /= c.dims[d];
      s += idx * c.in_strides[d];
      t += idx * c.out_strides[d];
    }
    std::memcpy(dst + t * c.elem_size, src + s * c.elem_size, static_cast<size_t>(c.elem_size));
  }
}

void Softmax(const SoftmaxDesc& d, const float* in, float* out) {
  for (int64_t o = 0; o < d.outer; ++o) {
    for (int64_t i = 0; i < d.inner; ++i) {
      const float* x = in + o * d.n * d.inner + i;
      float* y = out + o * d.n * d.inner + i;
      float m = -FLT_MAX, s = 0;
      for (int64_t j = 0; j < d.n; ++j) m = std::max(m, x[j * d.inner]);
      for (int64_t j = 0; j < d.n; ++j) s += std::exp(x[j * d.inner] - m);
      for (int64_t j = 0; j < d.n; ++j) {
        y[j * d.inner] = d.log ? x[j * d.inner] - m - std::log(s) : std::exp(x[j * d.inner] - m) / s;
      }
    }
  }
}

void LayerNorm(const LayerNormDesc& d, const float* in, const float* scale, const float* bias, float* out) {
  for (int64_t r = 0; r < d.rows; ++r) {
    const float* x = in + r * d.cols;
    float* y = out + r * d.cols;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d.cols; ++j) mean += x[j];
    mean /= static_cast<double>(d.cols);
    for (int64_t j = 0; j < d.cols; ++j) var += (x[j] - mean) * (x[j] - mean);
    double inv = 1.0 / std::sqrt(var / static_cast<double>(d.cols) + d.epsilon);
    for (int64_t j = 0; j < d.cols; ++j) {
      float v = static_cast<float>((x[j] - mean) * inv) * scale[j];
      y[j] = d.has_bias ? v + bias[j] : v;
    }
  }
}

void Reduce(const ReduceDesc& d, const float* in, float* out) {
  for (int64_t o = 0; o < d.out_count; ++o) {
    int64_t base = 0, rem = o;
    for (int k = d.out_rank - 1; k >= 0; --k) {
      base += (rem % d.out_dims[k]) * d.out_in_strides[k];
      rem /= d.out_dims[k];
    }
    float acc = d.op == ReduceOp::kMax ? -INFINITY : (d.op == ReduceOp::kMin ? INFINITY : 0.0f);
    for (int64_t r = 0; r < d.red_count; ++r) {
      int64_t off = base, q = r;
      for (int k = d.red_rank - 1; k >= 0; --k) {
        off += (q % d.red_dims[k]) * d.red_strides[k];
        q /= d.red_dims[k];
      }
      float v = in[off];
      acc = d.op == ReduceOp::kMax ? std::max(acc, v) : (d.op == ReduceOp::kMin ? std::min(acc, v) : acc + v);
    }
    out[o] = d.op == ReduceOp::kMean ? acc / static_cast<float>(d.red_count) : acc;
  }
}

void Gather(const GatherDesc& g, const void* data, const void* indices, void* out) {
  const auto* src = static_cast<const uint8_t*>(data);
  auto* dst = static_cast<uint8_t*>(out);
  size_t es = static_cast<size_t>(g.elem_size);
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t j = 0; j < g.n_indices; ++j) {
      int64_t k = g.indices_int64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
      if (k < 0) k += g.axis_dim;
      if (k < 0 || k >= g.axis_dim) k = 0;  // as the kernel does
      std::memcpy(dst + ((o * g.n_indices + j) * g.inner) * es, src + ((o * g.axis_dim + k) * g.inner) * es,
                  static_cast<size_t>(g.inner) * es);
    }
  }
}

void ConvDirect(const ConvDesc& d, const float* x, const float* w, float* y) {
  int64_t cg = d.c / d.groups, kg = d.k / d.groups;
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t k = 0; k < d.k; ++k) {
      int64_t g = k / kg;
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          float acc = 0;
          for (int64_t c = 0; c < cg; ++c) {
            const float* xc = x + (n * d.c + g * cg + c) * d.h * d.w;
            const float* wc = w + (k * cg + c) * d.kh * d.kw;
            for (int64_t ky = 0; ky < d.kh; ++ky) {
              int64_t iy = oy * d.sh - d.ph + ky * d.dh;
              if (iy < 0 || iy >= d.h) continue;
              for (int64_t kx = 0; kx < d.kw; ++kx) {
                int64_t ix = ox * d.sw - d.pw + kx * d.dw;
                if (ix >= 0 && ix < d.w) acc += xc[iy * d.w + ix] * wc[ky * d.kw + kx];
              }
            }
          }
          y[((n * d.k + k) * d.oh + oy) * d.ow + ox] = acc;
        }
      }
    }
  }
}

void ConvImplicitGemm(const ConvDesc& d, const float* x, const float* w, float* y) {
  const int64_t cg = d.c / d.groups, kg = d.k / d.groups;
  const int64_t red = cg * d.kh * d.kw, cols = d.n * d.oh * d.ow;
  for (int64_t g = 0; g < d.groups; ++g) {
    for (int64_t k = 0; k < kg; ++k) {
      for (int64_t col = 0; col < cols; ++col) {
        int64_t ox = col % d.ow, oy = (col / d.ow) % d.oh, n = col / (d.ow * d.oh);
        float acc = 0;
        for (int64_t r = 0; r < red; ++r) {
          int64_t kx = r % d.kw, ky = (r / d.kw) % d.kh, c = r / (d.kw * d.kh);
          int64_t iy = oy * d.sh - d.ph + ky * d.dh, ix = ox * d.sw - d.pw + kx * d.dw;
          if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
          acc += w[(g * kg + k) * red + r] * x[((n * d.c + g * cg + c) * d.h + iy) * d.w + ix];
        }
        y[((n * d.k + g * kg + k) * d.oh + oy) * d.ow + ox] = acc;
      }
    }
  }
}

void Pool(const PoolDesc& d, const float* x, float* y) {
  for (int64_t nc = 0; nc < d.n * d.c; ++nc) {
    const float* xc = x + nc * d.h * d.w;
    for (int64_t oy = 0; oy < d.oh; ++oy) {
      for (int64_t ox = 0; ox < d.ow; ++ox) {
        float acc = d.max ? -FLT_MAX : 0.0f;
        int64_t cnt = 0;
        for (int64_t ky = 0; ky < d.kh; ++ky) {
          int64_t iy = oy * d.sh - d.ph + ky;
          for (int64_t kx = 0; kx < d.kw; ++kx) {
            int64_t ix = ox * d.sw - d.pw + kx;
            if (iy >= 0 && iy < d.h && ix >= 0 && ix < d.w) {
              float v = xc[iy * d.w + ix];
              acc = d.max ? std::max(acc, v) : acc + v;
              ++cnt;
            } else if (d.count_include_pad && iy < d.h + d.ph && ix < d.w + d.pw) {
              ++cnt;
            }
          }
        }
        y[(nc * d.oh + oy) * d.ow + ox] = d.max ? acc : acc / static_cast<float>(cnt > 0 ? cnt : 1);
      }
    }
  }
}

}  // namespace aic::cuda::host
