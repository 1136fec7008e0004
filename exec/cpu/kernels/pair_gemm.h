// Exact 8-bit integer products on CPUs with AVX2 but without VNNI. There the
// u8·s8 instruction (vpmaddubsw) sums two products into a saturating int16,
// wrong by up to dozens of steps once a pair passes 2^15 (what ONNX Runtime
// and oneDNN do on such CPUs). Here both operands are widened to int16 with
// their zero points subtracted (so |value| <= 255) and multiplied by
// vpmaddwd, which sums two int16 products into an int32 exactly, on the same
// two multiplier pipes (bench/int8_products.cc on a Zen 3 core: 76 G
// multiply-adds/s against the saturating form's 80 and f32 FMA's 48); every
// result exact modulo 2^32 as the reference's int64 sums narrowed to int32.
//
// Operands: A' as int16 with k in pairs (odd k padded with a zero), packed
// in tiles of rows (PackPairRows); B' in panels of 16 columns: panel q
// holds, for each pair p, the 16 columns' (B'[2p][j], B'[2p+1][j]) side by
// side (32 int16, 64 bytes); the last panel's missing columns are zero.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

inline constexpr int64_t kPairPanelCols = 16;

inline int64_t PairCount(int64_t k) { return (k + 1) / 2; }
inline int64_t PairPanelCount(int64_t n) { return (n + kPairPanelCols - 1) / kPairPanelCols; }
// int16 elements of B' packed: panels × pairs × 32.
inline int64_t PairPanelsSize(int64_t k, int64_t n) { return PairPanelCount(n) * PairCount(k) * 2 * kPairPanelCols; }

// Whether this CPU runs the kernels below (AVX2).
bool PairGemmAvailable();

// Packs B' = B - zero for the k×n 8-bit matrix B (row stride ldb; int8 when
// b_signed, else uint8). zero: null (none), one value, or n values
// (zero_per_column).
void PackPairPanels(const void* b, bool b_signed, int64_t k, int64_t n, int64_t ldb, const int32_t* zero,
                    bool zero_per_column, int16_t* panels);

// Writes pair p of every panel from two int16 rows of n values (r1 null: the
// pair's second row is zero, an odd k's last pair).
void InterleavePairRows(const int16_t* r0, const int16_t* r1, int64_t n, int64_t p, int64_t k_pairs,
                        int16_t* panels);

// As InterleavePairRows from two 8-bit rows (r1 null: zero), widened with
// `zero` subtracted on the way: a 1x1 convolution's patch rows are its
// input's channel planes.
void InterleavePairBytes(const void* r0, const void* r1, bool is_signed, int64_t n, int32_t zero, int64_t p,
                         int64_t k_pairs, int16_t* panels);

// dst[i] = src[i·stride] - zero for i < count, src int8 (is_signed) or
// uint8: a strided run of an input row widened (16 at a time for strides 1
// and 2).
void WidenStrided(const void* src, bool is_signed, int64_t stride, int64_t count, int32_t zero, int16_t* dst);

// A' in tiles of 6 rows: tile t (rows 6t..) holds, for each pair p, its
// rows' (A'[r][2p], A'[r][2p+1]) side by side, so a tile kernel reads one
// sequential stream; the last tile has the remaining rows. int16 elements:
// rows × 2·PairCount(k).
inline int64_t PairRowsSize(int64_t rows, int64_t k) { return rows * 2 * PairCount(k); }
// Packs the rows×k int16 matrix a (row stride lda).
void PackPairRows(const int16_t* a, int64_t lda, int64_t rows, int64_t k, int16_t* packed);
// Packs A' = A - zero for the rows×k 8-bit matrix A (row stride a_stride);
// row r's zero is zeros[r % zero_count] (none: null).
void WidenPairRows(const void* a, bool a_signed, int64_t rows, int64_t k, int64_t a_stride, const int32_t* zeros,
                   int64_t zero_count, int16_t* packed);

// What becomes of each finished int32 sum C[r][j].
struct PairGemmOutput {
  enum class Kind {
    kInt32,     // C, int32 at row stride ldy
    kScaled,    // float(C) * scale [+ column_bias[j]] (f32 rounding of each op: Cast, Mul, Add)
    kQuantize,  // saturate(nearbyint(double(C + bias) * scale) + zero) in uint8/int8
  };
  Kind kind = Kind::kInt32;
  void* y = nullptr;
  int64_t ldy = 0;
  float scale = 1;                      // kScaled
  const float* column_bias = nullptr;   // kScaled: n values, or null
  // kQuantize: bias (int32, added wrapping; null: none) and scales, each one
  // per row (per_row) or one per column; `scales` null: one value, scale_one.
  const int32_t* bias = nullptr;
  const double* scales = nullptr;
  double scale_one = 1;
  bool per_row = false;
  int32_t zero = 0;
  bool out_signed = false;
  // Whether every |(C + bias)·scale| is known to be below 2^31 (the caller's
  // bound on the sums): the conversion needs no clamp before it.
  bool sums_fit = false;
};

// C = A'·B' for rows×n, A' packed in row tiles, B' in panels, k_pairs pairs;
// the rows are in blocks sized for L2, each block against every panel.
// `threaded`: split the panels (or the row blocks, when panels are few)
// over threads when the product is big enough. Callers check
// PairGemmAvailable() first.
void PairGemm(const int16_t* a, int64_t rows, const int16_t* panels, int64_t k_pairs, int64_t n,
              const PairGemmOutput& out, bool threaded = true);

}  // namespace aic::cpu::kernels
