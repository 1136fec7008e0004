// Concat and Split of dense tensors along one axis as block copies: viewed
// as outer x (axis part x inner), each part is one contiguous run of bytes
// per outer index, so either op is outer x parts memcpys (any dtype).
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

// part_bytes[p]: part p's run per outer index (its axis extent x inner x
// element size); part_offset[p]: where it starts in a row of row_bytes.
struct AxisParts {
  int64_t outer = 1;
  std::vector<int64_t> part_bytes, part_offset;
  int64_t row_bytes = 0;
  void Add(int64_t bytes) {
    part_offset.push_back(row_bytes);
    part_bytes.push_back(bytes);
    row_bytes += bytes;
  }
};

// out = the parts side by side (Concat); in[p] is part p.
void ConcatParts(const AxisParts& parts, const void* const* in, void* out);

// out[p] = part p of in (Split); a null out[p] is skipped.
void SplitParts(const AxisParts& parts, const void* in, void* const* out);

}  // namespace aic::cpu::kernels
