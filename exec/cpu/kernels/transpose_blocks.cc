// Rows of the 2-D problem are the output dim `k` the source reads
// contiguously (i), columns the innermost output dim (j): out[i][j] =
// in[i + j·S]. Work is cut into column chunks so that the source lines a
// chunk touches (one per column) stay in L1 while every row block of the
// chunk reads its part of them; chunks (times the outer dims, and row parts
// where those are few) are spread over threads.
#include "exec/cpu/kernels/transpose_blocks.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "ops/util/broadcast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AIC_TRANSPOSE_X86 1
#endif

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kTile = 8;
// Columns per chunk: 128 source lines (8 KiB) live while the chunk's row
// blocks each take their 8 elements of every line.
constexpr int64_t kColumnChunk = 128;

// One 8x8 tile: d[i·D + j] = s[i + j·S], i, j < 8.
template <typename T>
void TileScalar(const T* s, int64_t S, T* d, int64_t D) {
  for (int64_t i = 0; i < kTile; ++i) {
    for (int64_t j = 0; j < kTile; ++j) d[i * D + j] = s[i + j * S];
  }
}

#ifdef AIC_TRANSPOSE_X86
// 4-byte elements: eight 256-bit source runs transposed by unpack, shuffle
// and lane permutes. Only moves: any 4-byte type's bits pass unchanged.
__attribute__((target("avx2"))) void Tile4Avx2(const uint32_t* s, int64_t S, uint32_t* d, int64_t D) {
  const auto* sf = reinterpret_cast<const float*>(s);
  __m256 r0 = _mm256_loadu_ps(sf + 0 * S), r1 = _mm256_loadu_ps(sf + 1 * S);
  __m256 r2 = _mm256_loadu_ps(sf + 2 * S), r3 = _mm256_loadu_ps(sf + 3 * S);
  __m256 r4 = _mm256_loadu_ps(sf + 4 * S), r5 = _mm256_loadu_ps(sf + 5 * S);
  __m256 r6 = _mm256_loadu_ps(sf + 6 * S), r7 = _mm256_loadu_ps(sf + 7 * S);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  auto* df = reinterpret_cast<float*>(d);
  _mm256_storeu_ps(df + 0 * D, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(df + 1 * D, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(df + 2 * D, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(df + 3 * D, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(df + 4 * D, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(df + 5 * D, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(df + 6 * D, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(df + 7 * D, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// 2-byte elements: eight 128-bit runs through three rounds of unpacks
// (16-, 32-, 64-bit). SSE2, which every x86-64 has.
void Tile2Sse2(const uint16_t* s, int64_t S, uint16_t* d, int64_t D) {
  auto load = [&](int64_t j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j * S)); };
  __m128i a0 = load(0), a1 = load(1), a2 = load(2), a3 = load(3), a4 = load(4), a5 = load(5), a6 = load(6),
          a7 = load(7);
  __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  __m128i b4 = _mm_unpacklo_epi16(a4, a5), b5 = _mm_unpackhi_epi16(a4, a5);
  __m128i b6 = _mm_unpacklo_epi16(a6, a7), b7 = _mm_unpackhi_epi16(a6, a7);
  __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
  __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
  __m128i c4 = _mm_unpacklo_epi32(b4, b6), c5 = _mm_unpackhi_epi32(b4, b6);
  __m128i c6 = _mm_unpacklo_epi32(b5, b7), c7 = _mm_unpackhi_epi32(b5, b7);
  auto store = [&](int64_t i, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i * D), v); };
  store(0, _mm_unpacklo_epi64(c0, c4));
  store(1, _mm_unpackhi_epi64(c0, c4));
  store(2, _mm_unpacklo_epi64(c1, c5));
  store(3, _mm_unpackhi_epi64(c1, c5));
  store(4, _mm_unpacklo_epi64(c2, c6));
  store(5, _mm_unpackhi_epi64(c2, c6));
  store(6, _mm_unpacklo_epi64(c3, c7));
  store(7, _mm_unpackhi_epi64(c3, c7));
}

// 1-byte elements: eight 64-bit runs through three rounds of unpacks (8-,
// 16-, 32-bit), two output rows per register. SSE2. Element by element, the
// u8 NCHW <-> NHWC reorders around an int8 conv took 0.55 ms each for
// [1, 64, 112, 112], 78% of a QDQ depthwise conv's time on a Zen 4.
void Tile1Sse2(const uint8_t* s, int64_t S, uint8_t* d, int64_t D) {
  auto load = [&](int64_t j) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + j * S)); };
  const __m128i b0 = _mm_unpacklo_epi8(load(0), load(1)), b1 = _mm_unpacklo_epi8(load(2), load(3));
  const __m128i b2 = _mm_unpacklo_epi8(load(4), load(5)), b3 = _mm_unpacklo_epi8(load(6), load(7));
  const __m128i c0 = _mm_unpacklo_epi16(b0, b1), c1 = _mm_unpackhi_epi16(b0, b1);
  const __m128i c2 = _mm_unpacklo_epi16(b2, b3), c3 = _mm_unpackhi_epi16(b2, b3);
  const __m128i rows[4] = {_mm_unpacklo_epi32(c0, c2), _mm_unpackhi_epi32(c0, c2), _mm_unpacklo_epi32(c1, c3),
                           _mm_unpackhi_epi32(c1, c3)};
  for (int64_t r = 0; r < 4; ++r) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 2 * r * D), rows[r]);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (2 * r + 1) * D), _mm_unpackhi_epi64(rows[r], rows[r]));
  }
}
#endif

// Columns [j0, j1) of one matrix, every row: full tiles through `tile`,
// the ragged edges element by element.
template <typename T, typename Tile>
void TransposeColumns(const T* s, int64_t S, T* d, int64_t D, int64_t rows, int64_t j0, int64_t j1, Tile tile) {
  int64_t i = 0;
  for (; i + kTile <= rows; i += kTile) {
    int64_t j = j0;
    for (; j + kTile <= j1; j += kTile) tile(s + i + j * S, S, d + i * D + j, D);
    for (int64_t ii = i; ii < i + kTile; ++ii) {
      for (int64_t jj = j; jj < j1; ++jj) d[ii * D + jj] = s[ii + jj * S];
    }
  }
  for (; i < rows; ++i) {
    for (int64_t j = j0; j < j1; ++j) d[i * D + j] = s[i + j * S];
  }
}

struct Geometry {
  int k = -1;               // the output dim the source reads contiguously
  int64_t rows = 0;         // its extent
  int64_t cols = 0;         // the innermost output dim's extent
  int64_t src_col = 0;      // source step from one column to the next
  int64_t dst_row = 0;      // output step from one row to the next
  std::vector<int64_t> outer_dims, outer_src, outer_dst;  // every other dim
  int64_t outer = 1;
};

template <typename T, typename Tile>
void Run(const StridedCopyPlan& p, const Geometry& g, const void* in, void* out, Tile tile) {
  const T* src = static_cast<const T*>(in) + p.offset;
  T* dst = static_cast<T*>(out);
  const int64_t chunks = (g.cols + kColumnChunk - 1) / kColumnChunk;
  // Rows are split too where matrices and column chunks are too few to
  // share among threads (an NCHW image of 3 channels going to NHWC is one
  // matrix of 3 columns), in multiples of the tile.
  const int64_t wanted = 4 * static_cast<int64_t>(omp_get_max_threads());
  int64_t row_parts = 1;
  if (g.outer * chunks < wanted) row_parts = std::min((wanted + g.outer * chunks - 1) / (g.outer * chunks), g.rows / kTile);
  row_parts = std::max<int64_t>(row_parts, 1);
  const int64_t part_rows = (g.rows / row_parts + kTile - 1) / kTile * kTile;
  const auto outer_rank = static_cast<int64_t>(g.outer_dims.size());
  const int64_t cols_per_item = std::min(g.cols, kColumnChunk);
  ParallelFor(g.outer * chunks * row_parts, part_rows * cols_per_item, [&](int64_t item) {
    int64_t part = item % row_parts, chunk = (item / row_parts) % chunks, rest = item / row_parts / chunks;
    int64_t s = 0, d = 0;
    for (int64_t a = outer_rank - 1; a >= 0; --a) {
      int64_t idx = rest % g.outer_dims[a];
      rest /= g.outer_dims[a];
      s += idx * g.outer_src[a];
      d += idx * g.outer_dst[a];
    }
    int64_t i0 = part * part_rows, i1 = part + 1 == row_parts ? g.rows : std::min(g.rows, i0 + part_rows);
    if (i0 >= i1) return;
    int64_t j0 = chunk * kColumnChunk, j1 = std::min(g.cols, j0 + kColumnChunk);
    // Rows from i0: the tiles' source and destination move with them.
    TransposeColumns(src + s + i0, g.src_col, dst + d + i0 * g.dst_row, g.dst_row, i1 - i0, j0, j1, tile);
  });
}

}  // namespace

bool TransposeInBlocks(const StridedCopyPlan& p, const void* in, void* out) {
  const auto rank = static_cast<int>(p.dims.size());
  if (p.elements == 0 || rank < 2 || p.strides.back() == 1) return false;
  Geometry g;
  for (int d = 0; d + 1 < rank; ++d) {
    if (p.strides[d] == 1) g.k = d;
  }
  if (g.k < 0) return false;
  const std::vector<int64_t> dense = ContiguousStrides(p.dims);  // the output's strides
  g.rows = p.dims[g.k];
  g.cols = p.dims.back();
  g.src_col = p.strides.back();
  g.dst_row = dense[g.k];
  for (int d = 0; d + 1 < rank; ++d) {
    if (d == g.k) continue;
    g.outer_dims.push_back(p.dims[d]);
    g.outer_src.push_back(p.strides[d]);
    g.outer_dst.push_back(dense[d]);
    g.outer *= p.dims[d];
  }
  switch (p.elem_size) {
    case 1:
#ifdef AIC_TRANSPOSE_X86
      Run<uint8_t>(p, g, in, out, Tile1Sse2);
#else
      Run<uint8_t>(p, g, in, out, TileScalar<uint8_t>);
#endif
      return true;
    case 2:
#ifdef AIC_TRANSPOSE_X86
      Run<uint16_t>(p, g, in, out, Tile2Sse2);
#else
      Run<uint16_t>(p, g, in, out, TileScalar<uint16_t>);
#endif
      return true;
    case 4: {
#ifdef AIC_TRANSPOSE_X86
      static const bool avx2 = __builtin_cpu_supports("avx2");
      if (avx2) {
        Run<uint32_t>(p, g, in, out, Tile4Avx2);
        return true;
      }
#endif
      Run<uint32_t>(p, g, in, out, TileScalar<uint32_t>);
      return true;
    }
    case 8: Run<uint64_t>(p, g, in, out, TileScalar<uint64_t>); return true;
    default: return false;
  }
}

}  // namespace aic::cpu::kernels
