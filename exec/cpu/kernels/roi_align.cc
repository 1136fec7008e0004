#include "exec/cpu/kernels/roi_align.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// One valid sample of a bin: four taps into the plane.
struct Tap4 {
  int64_t off[4];
  float w[4];
};

// The samples of every bin of one region, bins in output order; `first`
// has bins + 1 entries.
struct RegionTaps {
  std::vector<Tap4> taps;
  std::vector<int32_t> first;
  float inv_count = 1.0f;
};

RegionTaps TapsOf(const RoiAlignParams& p, const double roi[4], int64_t h, int64_t w) {
  const RoiGeometry g = RoiGeometry::Of(p, roi);
  RegionTaps r;
  r.inv_count = static_cast<float>(1.0 / g.count);
  r.first.reserve(static_cast<size_t>(p.out_h * p.out_w + 1));
  for (int64_t ph = 0; ph < p.out_h; ++ph) {
    for (int64_t pw = 0; pw < p.out_w; ++pw) {
      r.first.push_back(static_cast<int32_t>(r.taps.size()));
      for (int64_t iy = 0; iy < g.grid_h; ++iy) {
        for (int64_t ix = 0; ix < g.grid_w; ++ix) {
          RoiSample s = BilinearRoiSample(g.SampleY(ph, iy), g.SampleX(pw, ix), h, w);
          if (!s.valid) continue;
          Tap4 t;
          for (int q = 0; q < 4; ++q) {
            t.off[q] = s.off[q];
            t.w[q] = static_cast<float>(s.w[q]);
          }
          r.taps.push_back(t);
        }
      }
    }
  }
  r.first.push_back(static_cast<int32_t>(r.taps.size()));
  return r;
}

}  // namespace

absl::Status RoiAlignF32(const float* x, const float* rois, const int64_t* batch_indices, float* y,
                         const RoiAlignShape& shape, const RoiAlignParams& params) {
  const int64_t bins = params.out_h * params.out_w;
  const int64_t plane = shape.height * shape.width;
  std::vector<RegionTaps> regions(static_cast<size_t>(shape.regions));
  for (int64_t r = 0; r < shape.regions; ++r) {
    if (batch_indices[r] < 0 || batch_indices[r] >= shape.batch) {
      return absl::InvalidArgumentError(absl::StrCat("RoiAlign: batch index ", batch_indices[r], " out of range"));
    }
    const double roi[4] = {rois[r * 4], rois[r * 4 + 1], rois[r * 4 + 2], rois[r * 4 + 3]};
    regions[static_cast<size_t>(r)] = TapsOf(params, roi, shape.height, shape.width);
  }
  ParallelFor(shape.regions * shape.channels, bins * 16, [&](int64_t item) {
    const int64_t r = item / shape.channels, c = item % shape.channels;
    const RegionTaps& t = regions[static_cast<size_t>(r)];
    const float* src = x + (batch_indices[r] * shape.channels + c) * plane;
    float* out = y + item * bins;
    for (int64_t b = 0; b < bins; ++b) {
      const int32_t begin = t.first[static_cast<size_t>(b)], end = t.first[static_cast<size_t>(b) + 1];
      if (params.is_max) {
        // As the reference: the largest weighted tap, 0 for a bin of no sample.
        float acc = begin == end ? 0.0f : -std::numeric_limits<float>::infinity();
        for (int32_t k = begin; k < end; ++k) {
          const Tap4& s = t.taps[static_cast<size_t>(k)];
          for (int q = 0; q < 4; ++q) acc = std::max(acc, s.w[q] * src[s.off[q]]);
        }
        out[b] = acc;
      } else {
        float acc = 0.0f;
        for (int32_t k = begin; k < end; ++k) {
          const Tap4& s = t.taps[static_cast<size_t>(k)];
          acc += s.w[0] * src[s.off[0]] + s.w[1] * src[s.off[1]] + s.w[2] * src[s.off[2]] + s.w[3] * src[s.off[3]];
        }
        out[b] = acc * t.inv_count;
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace aic::cpu::kernels
