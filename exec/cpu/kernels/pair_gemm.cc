// A tile of up to 6 rows × one 16-column panel keeps 12 int32 accumulators
// in registers; each pair step loads the panel's two vectors once, broadcasts
// each row's pair (one 32-bit load) and issues one vpmaddwd and one vpaddd
// per accumulator. The loops over rows are unrolled (GCC pragmas) so the
// accumulators stay in registers (rolled, GCC spills such arrays). The
// finished sums go out through the output's conversion straight from the
// registers: no int32 round trip through memory for quantized outputs.
#include "exec/cpu/kernels/pair_gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/requantize_avx2.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/widen_avx2.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kP = kPairPanelCols;
constexpr int kTileRows = 6;

int32_t EightBit(const void* p, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
}

#ifdef AIC_HAVE_AVX2_MATH

// A partial panel's per-column values (bias, scales): v itself for a full
// panel, else its `cols` values copied into buf with zeros after them.
template <typename T>
const T* PanelColumns(const T* v, int64_t cols, T* buf) {
  if (cols == kP) return v;
  std::fill(buf, buf + kP, T{0});
  std::copy(v, v + cols, buf);
  return buf;
}

// What a tile does with each row's 16 finished sums (columns [col0,
// col0 + cols)): one writer per PairGemmOutput kind, its constants set once
// per product.
struct Int32Writer {
  int32_t* y;
  int64_t ldy;
  AIC_AVX2 void operator()(int64_t row, int64_t col0, int64_t cols, __m256i lo, __m256i hi) const {
    int32_t* dst = y + row * ldy + col0;
    if (cols == kP) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8), hi);
      return;
    }
    alignas(32) int32_t buf[kP];
    _mm256_store_si256(reinterpret_cast<__m256i*>(buf), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(buf + 8), hi);
    std::copy(buf, buf + cols, dst);
  }
};

struct ScaledWriter {
  float* y;
  int64_t ldy;
  float scale;
  const float* bias;  // per column, or null
  AIC_AVX2 __attribute__((always_inline)) void operator()(int64_t row, int64_t col0, int64_t cols, __m256i lo,
                                                          __m256i hi) const {
    float* dst = y + row * ldy + col0;
    const __m256 s = _mm256_set1_ps(scale);
    __m256 flo = _mm256_mul_ps(_mm256_cvtepi32_ps(lo), s);
    __m256 fhi = _mm256_mul_ps(_mm256_cvtepi32_ps(hi), s);
    if (bias != nullptr) {
      // Added after the rounded product, as the Add op does (no fused multiply-add).
      alignas(32) float bias_buf[kP];
      const float* b = PanelColumns(bias + col0, cols, bias_buf);
      flo = _mm256_add_ps(flo, _mm256_loadu_ps(b));
      fhi = _mm256_add_ps(fhi, _mm256_loadu_ps(b + 8));
    }
    if (cols == kP) {
      _mm256_storeu_ps(dst, flo);
      _mm256_storeu_ps(dst + 8, fhi);
      return;
    }
    alignas(32) float buf[kP];
    _mm256_store_ps(buf, flo);
    _mm256_store_ps(buf + 8, fhi);
    std::copy(buf, buf + cols, dst);
  }
};

struct QuantizeWriter {
  const PairGemmOutput* o;
  avx2::RequantizeConstants k;
  // Inlined into the tile: called once per row, a call cost more than the
  // requantization of a short-k product (MobileNet's 16-channel 1x1 convs).
  AIC_AVX2 __attribute__((always_inline)) void operator()(int64_t row, int64_t col0, int64_t cols, __m256i lo, __m256i hi) const {
    alignas(32) int32_t bias_buf[kP];
    alignas(32) double scale_buf[kP];
    if (o->bias != nullptr) {
      if (o->per_row) {
        const __m256i b = _mm256_set1_epi32(o->bias[row]);
        lo = _mm256_add_epi32(lo, b);
        hi = _mm256_add_epi32(hi, b);
      } else {
        const int32_t* b = PanelColumns(o->bias + col0, cols, bias_buf);
        lo = _mm256_add_epi32(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
        hi = _mm256_add_epi32(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8)));
      }
    }
    const double* s = nullptr;
    const __m256d s_all =
        _mm256_set1_pd(o->scales == nullptr ? o->scale_one : o->per_row ? o->scales[row] : 0.0);
    if (o->scales != nullptr && !o->per_row) s = PanelColumns(o->scales + col0, cols, scale_buf);
    const __m128i bytes = avx2::RequantizeSixteen(lo, hi, s, s_all, k);
    uint8_t* dst = static_cast<uint8_t*>(o->y) + row * o->ldy + col0;
    if (cols == kP) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), bytes);
      return;
    }
    alignas(16) uint8_t buf[kP];
    _mm_store_si128(reinterpret_cast<__m128i*>(buf), bytes);
    std::copy(buf, buf + cols, dst);
  }
};

// a: the tile's packed rows from its first pair step on, kRows pairs (one
// per row) a step; k_pairs steps. partial: null (the sums start at zero) or
// the tile's sums so far (int32, row stride ldp), when k is taken in chunks.
template <int kRows, typename Writer>
AIC_AVX2 void TileAvx2(const int16_t* a, const int16_t* panel, int64_t k_pairs, const int32_t* partial, int64_t ldp,
                       int64_t row0, int64_t col0, int64_t cols, const Writer& write) {
  __m256i acc[kRows][2];
  if (partial == nullptr) {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  } else {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      acc[r][0] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(partial + r * ldp));
      acc[r][1] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(partial + r * ldp + 8));
    }
  }
#pragma GCC unroll 2
  for (int64_t p = 0; p < k_pairs; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + p * 2 * kP));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + p * 2 * kP + kP));
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + (p * kRows + r) * 2, sizeof(pair));
      const __m256i av = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) write(row0 + r, col0, cols, acc[r][0], acc[r][1]);
}

// Which pair steps a pass over the tiles covers, and where the sums of the
// passes before it are (null: none).
struct PairChunk {
  int64_t k_pairs;  // all of the product's
  int64_t first, count;
  const int32_t* partial;
  int64_t ldp;
};

// Rows [row0, row0 + rows) against one panel, over one chunk of pairs.
template <typename Writer>
AIC_AVX2 void RowsAgainstPanel(const int16_t* a, int64_t row0, int64_t rows, const int16_t* panel,
                               const PairChunk& k, int64_t col0, int64_t cols, const Writer& write) {
  int64_t r = row0;
  const int64_t end = row0 + rows;
  const int16_t* chunk_panel = panel + k.first * 2 * kP;
  auto partial = [&](int64_t row) { return k.partial == nullptr ? nullptr : k.partial + row * k.ldp + col0; };
  // Tiles start at multiples of kTileRows, each at r·2·k_pairs in the packing.
  for (; r + kTileRows <= end; r += kTileRows) {
    TileAvx2<kTileRows>(a + r * 2 * k.k_pairs + k.first * kTileRows * 2, chunk_panel, k.count, partial(r), k.ldp, r,
                        col0, cols, write);
  }
  const int64_t rest = end - r;
  const int16_t* tail = a + r * 2 * k.k_pairs + k.first * rest * 2;
  switch (rest) {
    case 5: TileAvx2<5>(tail, chunk_panel, k.count, partial(r), k.ldp, r, col0, cols, write); break;
    case 4: TileAvx2<4>(tail, chunk_panel, k.count, partial(r), k.ldp, r, col0, cols, write); break;
    case 3: TileAvx2<3>(tail, chunk_panel, k.count, partial(r), k.ldp, r, col0, cols, write); break;
    case 2: TileAvx2<2>(tail, chunk_panel, k.count, partial(r), k.ldp, r, col0, cols, write); break;
    case 1: TileAvx2<1>(tail, chunk_panel, k.count, partial(r), k.ldp, r, col0, cols, write); break;
    default: break;
  }
}

// The product in row blocks sized for L2, each block against every panel,
// items (block, panel) split over threads. A long k is taken in chunks of
// about kChunkPairs: a panel's chunk (16 KB) then stays in L1 for the
// block's tiles and the block's chunk in L2 for every panel, where a whole
// panel of a deep convolution (147 KB at k = 4608) came from L2 or L3 for
// each tile. The chunks' sums pass through an int32 buffer; the last chunk's
// go to the output.
template <typename Writer>
AIC_AVX2 void ProductAvx2(const int16_t* a, int64_t rows, const int16_t* panels, int64_t k_pairs, int64_t n,
                          const Writer& write, bool threaded) {
  constexpr int64_t kChunkPairs = 256, kBlockBytes = 192 * 1024;
  const int64_t chunks = k_pairs <= kChunkPairs * 3 / 2 ? 1 : (k_pairs + kChunkPairs - 1) / kChunkPairs;
  const int64_t chunk = (k_pairs + chunks - 1) / chunks;
  // The block's chunk of A' (rows × pairs × 4 bytes) stays in L2 while every panel passes it.
  // Blocks of equal size (in whole tiles): threads split the items
  // (block, panel) in halves, so a 204-row block beside a 52-row one left a
  // thread idle for most of a product.
  const int64_t max_block =
      std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, chunk * 4) / kTileRows) * kTileRows;
  const int64_t wanted = (rows + max_block - 1) / max_block;
  const int64_t block = std::min(rows, (rows + wanted * kTileRows - 1) / (wanted * kTileRows) * kTileRows);
  const int64_t blocks = (rows + block - 1) / block, count = PairPanelCount(n);
  const int64_t panel_size = k_pairs * 2 * kP, ldp = count * kP;
  thread_local std::vector<int32_t> partial_sums;
  if (chunks > 1) partial_sums.resize(static_cast<size_t>(rows * ldp));
  int32_t* partial = partial_sums.data();
  const Int32Writer to_partial{partial, ldp};
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * chunk;
    const PairChunk k{k_pairs, first, std::min(chunk, k_pairs - first), c == 0 ? nullptr : partial, ldp};
    const bool last = c + 1 == chunks;
    ParallelFor(blocks * count, threaded ? block * k.count * 2 * kP : 0, [&](int64_t item) {
      const int64_t b = item / count, q = item % count;
      const int64_t row0 = b * block, block_rows = std::min(block, rows - row0);
      if (last) {
        RowsAgainstPanel(a, row0, block_rows, panels + q * panel_size, k, q * kP, std::min(kP, n - q * kP), write);
      } else {
        RowsAgainstPanel(a, row0, block_rows, panels + q * panel_size, k, q * kP, kP, to_partial);
      }
    });
  }
}

// 16 columns of two rows, x and y, as the panel's pairs (x[j], y[j]).
AIC_AVX2 inline void StorePairs(__m256i x, __m256i y, int16_t* dst) {
  // unpack works within 128-bit lanes: lo = cols 0-3 | 8-11, hi = 4-7 | 12-15.
  const __m256i lo = _mm256_unpacklo_epi16(x, y), hi = _mm256_unpackhi_epi16(x, y);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + kP), _mm256_permute2x128_si256(lo, hi, 0x31));
}

// 16 values at src as int16: loaded, or (8-bit) widened with zero subtracted.
template <typename T>
AIC_AVX2 inline __m256i SixteenAsInt16(const T* src, __m256i zero) {
  if constexpr (std::is_same_v<T, int16_t>) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  } else {
    return avx2::WidenSixteen<std::is_signed_v<T>>(src, zero);
  }
}

// Pair p of every panel from two rows of n values, int16 (zero 0) or 8-bit
// (widened with `zero` subtracted); r1 null: zeros.
template <typename T>
AIC_AVX2 void InterleaveAvx2(const T* r0, const T* r1, int64_t n, int32_t zero, int64_t p, int64_t k_pairs,
                             int16_t* panels) {
  const int64_t panel_size = k_pairs * 2 * kP;
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(zero));
  int64_t j = 0;
  for (; j + kP <= n; j += kP) {
    const __m256i x = SixteenAsInt16(r0 + j, z);
    const __m256i y = r1 != nullptr ? SixteenAsInt16(r1 + j, z) : _mm256_setzero_si256();
    StorePairs(x, y, panels + (j / kP) * panel_size + p * 2 * kP);
  }
  if (j < n) {
    int16_t* dst = panels + (j / kP) * panel_size + p * 2 * kP;
    for (int64_t c = 0; c < kP; ++c) {
      const bool in = j + c < n;
      dst[2 * c] = static_cast<int16_t>(in ? r0[j + c] - zero : 0);
      dst[2 * c + 1] = static_cast<int16_t>(in && r1 != nullptr ? r1[j + c] - zero : 0);
    }
  }
}

#endif  // AIC_HAVE_AVX2_MATH

// dst[i] = src[i·stride] - zero for i < count.
template <typename T>
void WidenRunPortable(const T* src, int64_t stride, int64_t count, int32_t zero, int16_t* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<int16_t>(src[i * stride] - zero);
}

#ifdef AIC_HAVE_AVX2_MATH
template <bool kSigned>
AIC_AVX2 void WidenRunAvx2(const void* src_bytes, int64_t stride, int64_t count, int32_t zero, int16_t* dst) {
  using T = std::conditional_t<kSigned, int8_t, uint8_t>;
  const T* src = static_cast<const T*>(src_bytes);
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(zero));
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= count; i += 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), avx2::WidenSixteen<kSigned>(src + i, z));
    }
    // The short runs of small images (rows of 7 to 28): a last, overlapping
    // 16, or 8 at once.
    if (i < count && count >= 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + count - 16),
                          avx2::WidenSixteen<kSigned>(src + count - 16, z));
      return;
    }
    if (i + 8 <= count) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
      const __m128i v = kSigned ? _mm_cvtepi8_epi16(bytes) : _mm_cvtepu8_epi16(bytes);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_sub_epi16(v, _mm256_castsi256_si128(z)));
      i += 8;
    }
  } else if (stride == 2) {
    // 32 bytes hold 16 even ones; the last load stays inside the run's span.
    for (; i + 17 <= count; i += 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), avx2::WidenSixteenEven<kSigned>(src + 2 * i, z));
    }
  }
  WidenRunPortable(src + i * stride, stride, count - i, zero, dst + i);
}
#endif

}  // namespace

bool PairGemmAvailable() { return avx2::HaveAvx2Fma(); }

void PackPairPanels(const void* b, bool b_signed, int64_t k, int64_t n, int64_t ldb, const int32_t* zero,
                    bool zero_per_column, int16_t* panels) {
  const int64_t k_pairs = PairCount(k), panel_size = k_pairs * 2 * kP;
  std::fill(panels, panels + PairPanelsSize(k, n), int16_t{0});
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int32_t z = zero == nullptr ? 0 : zero[zero_per_column ? j : 0];
      panels[(j / kP) * panel_size + (i / 2) * 2 * kP + (j % kP) * 2 + i % 2] =
          static_cast<int16_t>(EightBit(b, b_signed, i * ldb + j) - z);
    }
  }
}

void InterleavePairRows(const int16_t* r0, const int16_t* r1, int64_t n, int64_t p, int64_t k_pairs,
                        int16_t* panels) {
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return InterleaveAvx2(r0, r1, n, 0, p, k_pairs, panels);
#endif
  const int64_t panel_size = k_pairs * 2 * kP;
  for (int64_t j = 0; j < PairPanelCount(n) * kP; ++j) {
    int16_t* dst = panels + (j / kP) * panel_size + p * 2 * kP + (j % kP) * 2;
    dst[0] = j < n ? r0[j] : 0;
    dst[1] = j < n && r1 != nullptr ? r1[j] : 0;
  }
}

void WidenStrided(const void* src, bool is_signed, int64_t stride, int64_t count, int32_t zero, int16_t* dst) {
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) {
    return is_signed ? WidenRunAvx2<true>(src, stride, count, zero, dst)
                     : WidenRunAvx2<false>(src, stride, count, zero, dst);
  }
#endif
  if (is_signed) return WidenRunPortable(static_cast<const int8_t*>(src), stride, count, zero, dst);
  WidenRunPortable(static_cast<const uint8_t*>(src), stride, count, zero, dst);
}


void InterleavePairBytes(const void* r0, const void* r1, bool is_signed, int64_t n, int32_t zero, int64_t p,
                         int64_t k_pairs, int16_t* panels) {
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) {
    if (is_signed) {
      return InterleaveAvx2(static_cast<const int8_t*>(r0), static_cast<const int8_t*>(r1), n, zero, p, k_pairs,
                            panels);
    }
    return InterleaveAvx2(static_cast<const uint8_t*>(r0), static_cast<const uint8_t*>(r1), n, zero, p, k_pairs,
                          panels);
  }
#endif
  thread_local std::vector<int16_t> rows;
  rows.resize(static_cast<size_t>(2 * n));
  WidenStrided(r0, is_signed, 1, n, zero, rows.data());
  if (r1 != nullptr) WidenStrided(r1, is_signed, 1, n, zero, rows.data() + n);
  InterleavePairRows(rows.data(), r1 != nullptr ? rows.data() + n : nullptr, n, p, k_pairs, panels);
}

void PackPairRows(const int16_t* a, int64_t lda, int64_t rows, int64_t k, int16_t* packed) {
  const int64_t k_pairs = PairCount(k);
  for (int64_t t = 0; t < rows; t += kTileRows) {
    const int64_t tile_rows = std::min<int64_t>(kTileRows, rows - t);
    int16_t* tile = packed + t * 2 * k_pairs;
    for (int64_t r = 0; r < tile_rows; ++r) {
      const int16_t* row = a + (t + r) * lda;
      for (int64_t i = 0; i < k; ++i) tile[((i / 2) * tile_rows + r) * 2 + i % 2] = row[i];
      if (k % 2 != 0) tile[((k / 2) * tile_rows + r) * 2 + 1] = 0;
    }
  }
}

void WidenPairRows(const void* a, bool a_signed, int64_t rows, int64_t k, int64_t a_stride, const int32_t* zeros,
                   int64_t zero_count, int16_t* packed) {
  const int64_t k_pairs = PairCount(k);
  thread_local std::vector<int16_t> widened;
  widened.resize(static_cast<size_t>(kTileRows * 2 * k_pairs));
  for (int64_t t = 0; t < rows; t += kTileRows) {
    const int64_t tile_rows = std::min<int64_t>(kTileRows, rows - t);
    for (int64_t r = 0; r < tile_rows; ++r) {
      int16_t* w = widened.data() + r * 2 * k_pairs;
      const int32_t zero = zeros == nullptr ? 0 : zeros[(t + r) % zero_count];
      WidenStrided(static_cast<const uint8_t*>(a) + (t + r) * a_stride, a_signed, 1, k, zero, w);
      if (k % 2 != 0) w[k] = 0;
    }
    // Pair p of the tile's rows side by side: 32-bit moves.
    int16_t* tile = packed + t * 2 * k_pairs;
    for (int64_t p = 0; p < k_pairs; ++p) {
      for (int64_t r = 0; r < tile_rows; ++r) {
        std::memcpy(tile + (p * tile_rows + r) * 2, widened.data() + r * 2 * k_pairs + 2 * p, 4);
      }
    }
  }
}

void PairGemm(const int16_t* a, int64_t rows, const int16_t* panels, int64_t k_pairs, int64_t n,
              const PairGemmOutput& out, bool threaded) {
#ifdef AIC_HAVE_AVX2_MATH
  if (rows <= 0 || n <= 0) return;
  switch (out.kind) {
    case PairGemmOutput::Kind::kInt32:
      return ProductAvx2(a, rows, panels, k_pairs, n, Int32Writer{static_cast<int32_t*>(out.y), out.ldy},
                         threaded);
    case PairGemmOutput::Kind::kScaled:
      return ProductAvx2(a, rows, panels, k_pairs, n,
                         ScaledWriter{static_cast<float*>(out.y), out.ldy, out.scale, out.column_bias}, threaded);
    case PairGemmOutput::Kind::kQuantize:
      return ProductAvx2(a, rows, panels, k_pairs, n,
                         QuantizeWriter{&out, avx2::MakeRequantizeConstants(out.zero, out.out_signed, out.sums_fit)}, threaded);
  }
#else
  (void)a, (void)rows, (void)panels, (void)k_pairs, (void)n, (void)out, (void)threaded;
#endif
}

}  // namespace aic::cpu::kernels
