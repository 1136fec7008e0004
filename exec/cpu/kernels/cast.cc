// Value rules follow the reference (ops/util/float_convert.cc): floats to
// integers truncate, NaN and infinities become 0, values beyond int64 wrap;
// integers convert exactly between themselves (C++ wrap-around).
#include "exec/cpu/kernels/cast.h"

#include <cmath>
#include <map>
#include <utility>

#include "exec/cpu/kernels/parallel.h"
#include "support/half.h"

namespace aic::cpu::kernels {

namespace {

template <typename To>
inline To FloatToInt(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<To>(0);
  double tr = std::trunc(d);
  if (tr >= -9.2e18 && tr <= 9.2e18) return static_cast<To>(static_cast<int64_t>(tr));
  return static_cast<To>(static_cast<uint64_t>(tr));
}

template <typename From, typename To>
inline To Convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<From>) {
    return FloatToInt<To>(v);
  } else if constexpr (std::is_same_v<From, bool> || std::is_unsigned_v<From>) {
    return static_cast<To>(static_cast<uint64_t>(v));
  } else {
    return static_cast<To>(static_cast<int64_t>(v));
  }
}

template <typename From, typename To>
void CastLoop(const void* x, void* y, int64_t n) {
  const From* a = static_cast<const From*>(x);
  To* b = static_cast<To*>(y);
  ParallelFor((n + 8191) / 8192, 8192, [&](int64_t p) {
    int64_t end = (p + 1) * 8192 < n ? (p + 1) * 8192 : n;
    for (int64_t i = p * 8192; i < end; ++i) b[i] = Convert<From, To>(a[i]);
  });
}

void HalfToF32(const void* x, void* y, int64_t n) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  float* b = static_cast<float*>(y);
  for (int64_t i = 0; i < n; ++i) b[i] = HalfToFloat(a[i]);
}

void F32ToHalf(const void* x, void* y, int64_t n) {
  const float* a = static_cast<const float*>(x);
  uint16_t* b = static_cast<uint16_t*>(y);
  for (int64_t i = 0; i < n; ++i) b[i] = FloatToHalf(a[i]);
}

template <typename From>
void AddPairs(std::map<std::pair<DType, DType>, CastFn>& m) {
  constexpr DType f = DTypeOf<From>::value;
  m[{f, DType::kFloat}] = CastLoop<From, float>;
  m[{f, DType::kInt32}] = CastLoop<From, int32_t>;
  m[{f, DType::kInt64}] = CastLoop<From, int64_t>;
  m[{f, DType::kInt8}] = CastLoop<From, int8_t>;
  m[{f, DType::kUint8}] = CastLoop<From, uint8_t>;
  m[{f, DType::kBool}] = CastLoop<From, bool>;
}

}  // namespace

CastFn CastKernel(DType from, DType to) {
  static const auto* table = [] {
    auto* m = new std::map<std::pair<DType, DType>, CastFn>;
    AddPairs<float>(*m);
    AddPairs<int32_t>(*m);
    AddPairs<int64_t>(*m);
    AddPairs<int8_t>(*m);
    AddPairs<uint8_t>(*m);
    AddPairs<bool>(*m);
    (*m)[{DType::kFloat16, DType::kFloat}] = HalfToF32;
    (*m)[{DType::kFloat, DType::kFloat16}] = F32ToHalf;
    return m;
  }();
  if (from == to) return nullptr;
  auto it = table->find({from, to});
  return it == table->end() ? nullptr : it->second;
}

}  // namespace aic::cpu::kernels
