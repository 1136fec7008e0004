// Format detection, the dispatch to each format's decoder, and the two formats
// simple enough to read by hand: BMP (Windows bitmaps: palettes of 1, 4 and 8
// bits, 16/24/32-bit pixels, bit fields; RLE compression is refused) and PNM
// (PBM, PGM, PPM, ASCII and binary, up to 16-bit samples). Every read goes
// through Bytes, which refuses what lies past the end, so a truncated or
// lying file is an error, never a read out of bounds. Values follow Pillow,
// which produced ONNX's expected outputs.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"
#include "support/status.h"

namespace aic::image {

namespace {

bool StartsWith(absl::Span<const uint8_t> data, std::initializer_list<uint8_t> magic) {
  return data.size() >= magic.size() && std::equal(magic.begin(), magic.end(), data.begin());
}

absl::Status Truncated(const char* format) {
  return absl::InvalidArgumentError(absl::StrCat(format, " data is truncated"));
}

// Little-endian reads at absolute offsets; any read past the end fails.
class Bytes {
 public:
  explicit Bytes(absl::Span<const uint8_t> data) : data_(data) {}
  bool Has(uint64_t offset, uint64_t n) const { return offset <= data_.size() && n <= data_.size() - offset; }
  uint32_t U16(uint64_t at) const { return data_[at] | (uint32_t{data_[at + 1]} << 8); }
  uint32_t U32(uint64_t at) const { return U16(at) | (U16(at + 2) << 16); }
  int32_t I32(uint64_t at) const { return static_cast<int32_t>(U32(at)); }
  const uint8_t* At(uint64_t at) const { return data_.data() + at; }

 private:
  absl::Span<const uint8_t> data_;
};

// ---- BMP ----

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// One channel of a bit-field pixel, widened to 8 bits as Pillow's unpackers
// do (v * 255 / max, truncated: 5 bits 31 -> 255, 16 -> 131).
struct BitField {
  uint32_t mask = 0;
  int shift = 0;
  uint32_t max = 0;
  explicit BitField(uint32_t m) : mask(m) {
    if (m == 0) return;
    shift = std::countr_zero(m);
    max = m >> shift;
  }
  uint8_t Get(uint32_t pixel) const {
    if (max == 0) return 0;
    const uint32_t v = (pixel & mask) >> shift;
    return static_cast<uint8_t>(max == 255 ? v : static_cast<uint64_t>(v) * 255 / max);
  }
};

constexpr uint32_t kBiRgb = 0, kBiBitfields = 3, kBiAlphaBitfields = 6;  // BMP compressions

// ---- PNM ----

// The header's and ASCII raster's tokens: whitespace and '#' comments between.
class PnmTokens {
 public:
  explicit PnmTokens(absl::Span<const uint8_t> data) : data_(data), pos_(2) {}
  size_t pos() const { return pos_; }
  void Skip(size_t n) { pos_ += n; }

  void SkipSpaceAndComments() {
    while (pos_ < data_.size()) {
      if (data_[pos_] == '#') {
        while (pos_ < data_.size() && data_[pos_] != '\n' && data_[pos_] != '\r') ++pos_;
      } else if (std::isspace(data_[pos_])) {
        ++pos_;
      } else {
        break;
      }
    }
  }
  // A decimal number of at most `max_digits` digits (P1 packs pixels as
  // single digits with no space between them).
  absl::StatusOr<uint32_t> Number(int max_digits = 9) {
    SkipSpaceAndComments();
    if (pos_ >= data_.size()) return Truncated("PNM");
    if (!std::isdigit(data_[pos_])) {
      return absl::InvalidArgumentError(absl::StrCat("PNM: expected a number at byte ", pos_));
    }
    uint32_t v = 0;
    for (int d = 0; d < max_digits && pos_ < data_.size() && std::isdigit(data_[pos_]); ++d, ++pos_) {
      v = v * 10 + (data_[pos_] - '0');
    }
    if (pos_ < data_.size() && std::isdigit(data_[pos_]) && max_digits > 1) {
      return absl::InvalidArgumentError(absl::StrCat("PNM: number too large at byte ", pos_));
    }
    return v;
  }

 private:
  absl::Span<const uint8_t> data_;
  size_t pos_;
};

}  // namespace

absl::StatusOr<DecodedImage> DecodeBmp(absl::Span<const uint8_t> data) {
  const Bytes in(data);
  if (!in.Has(0, 18)) return Truncated("BMP");
  const uint32_t pixel_offset = in.U32(10);
  const uint32_t header_size = in.U32(14);
  int64_t width = 0, height = 0;
  uint32_t bpp = 0, compression = kBiRgb, colors_used = 0;
  uint32_t palette_entry = 4;  // bytes per palette entry: BGRX, or BGR in the OS/2 1.x header
  if (header_size == 12) {
    if (!in.Has(14, 12)) return Truncated("BMP");
    width = in.U16(18);
    height = in.U16(20);
    bpp = in.U16(24);
    palette_entry = 3;
  } else if (header_size >= 40) {
    if (!in.Has(14, 40)) return Truncated("BMP");
    width = in.I32(18);
    height = in.I32(22);
    bpp = in.U16(28);
    compression = in.U32(30);
    colors_used = in.U32(46);
    // OS/2 2.x (64-byte header) numbers its compressions differently (3 is
    // Huffman, 4 RLE24): only its uncompressed form is read.
    if (header_size == 64 && compression != kBiRgb) {
      return absl::InvalidArgumentError(absl::StrCat("OS/2 BMP compression ", compression, " is not supported"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("BMP header of ", header_size, " bytes is not supported"));
  }
  if (compression != kBiRgb && compression != kBiBitfields && compression != kBiAlphaBitfields) {
    // RLE4/RLE8 (2, 1), and JPEG or PNG inside a BMP (4, 5).
    return absl::InvalidArgumentError(absl::StrCat("BMP compression ", compression, " is not supported"));
  }
  // A negative height stores the rows top-down.
  const bool top_down = height < 0;
  height = std::abs(height);
  if (width <= 0 || height <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("BMP size ", width, "x", height, " is invalid"));
  }
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
    return absl::InvalidArgumentError(absl::StrCat("BMP with ", bpp, " bits per pixel is not supported"));
  }
  if (compression != kBiRgb && bpp != 16 && bpp != 32) {
    return absl::InvalidArgumentError(absl::StrCat("BMP bit fields need 16 or 32 bits per pixel, got ", bpp));
  }

  // Bit fields lie inside a header of 52 bytes or more, else right after it.
  uint64_t after_header = 14 + uint64_t{header_size};
  std::vector<BitField> fields;
  if (compression != kBiRgb) {
    uint64_t at = after_header;
    if (header_size == 40) after_header += compression == kBiAlphaBitfields ? 16 : 12;
    else at = 14 + 40;
    if (!in.Has(at, 12)) return Truncated("BMP");
    fields = {BitField(in.U32(at)), BitField(in.U32(at + 4)), BitField(in.U32(at + 8))};
  } else if (bpp == 16) {
    fields = {BitField(0x7C00), BitField(0x03E0), BitField(0x001F)};  // 5-5-5
  }

  std::vector<Rgb> palette;
  if (bpp <= 8) {
    const uint32_t max_colors = 1u << bpp;
    const uint32_t colors = colors_used == 0 || colors_used > max_colors ? max_colors : colors_used;
    if (!in.Has(after_header, uint64_t{colors} * palette_entry)) return Truncated("BMP");
    for (uint32_t i = 0; i < colors; ++i) {
      const uint8_t* e = in.At(after_header + uint64_t{i} * palette_entry);
      palette.push_back({e[2], e[1], e[0]});
    }
  }

  DecodedImage image;
  AIC_RETURN_IF_ERROR(AllocateImage(height, width, 3, image));
  const uint64_t stride = (static_cast<uint64_t>(width) * bpp + 31) / 32 * 4;
  // The last row's padding may be left out.
  const uint64_t row_bytes = (static_cast<uint64_t>(width) * bpp + 7) / 8;
  if (!in.Has(pixel_offset, stride * static_cast<uint64_t>(height - 1) + row_bytes)) return Truncated("BMP");

  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = in.At(pixel_offset + stride * static_cast<uint64_t>(top_down ? y : height - 1 - y));
    uint8_t* out = image.pixels.get() + y * width * 3;
    for (int64_t x = 0; x < width; ++x, out += 3) {
      Rgb c;
      if (bpp <= 8) {
        const uint64_t bit = static_cast<uint64_t>(x) * bpp;
        const uint32_t index = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
        // An index past the palette reads black, as in most viewers.
        if (index < palette.size()) c = palette[index];
      } else if (bpp == 24 || (bpp == 32 && fields.empty())) {
        const uint8_t* p = row + x * (bpp / 8);
        c = {p[2], p[1], p[0]};
      } else {
        const uint8_t* p = row + x * (bpp / 8);
        const uint32_t v = bpp == 16 ? (p[0] | (uint32_t{p[1]} << 8))
                                     : (p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
                                        (uint32_t{p[3]} << 24));
        c = {fields[0].Get(v), fields[1].Get(v), fields[2].Get(v)};
      }
      out[0] = c.r;
      out[1] = c.g;
      out[2] = c.b;
    }
  }
  return image;
}

absl::StatusOr<DecodedImage> DecodePnm(absl::Span<const uint8_t> data) {
  const int kind = data[1] - '0';  // 1..6, checked by DetectImageFormat
  const bool ascii = kind <= 3;
  const bool bitmap = kind == 1 || kind == 4;
  const int64_t channels = kind == 3 || kind == 6 ? 3 : 1;
  PnmTokens tokens(data);
  AIC_ASSIGN_OR_RETURN(const uint32_t width, tokens.Number());
  AIC_ASSIGN_OR_RETURN(const uint32_t height, tokens.Number());
  uint32_t maxval = 1;
  if (!bitmap) {
    AIC_ASSIGN_OR_RETURN(maxval, tokens.Number());
  }
  if (width == 0 || height == 0) {
    return absl::InvalidArgumentError(absl::StrCat("PNM size ", width, "x", height, " is invalid"));
  }
  if (maxval == 0 || maxval > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("PNM maxval ", maxval, " is outside 1..65535"));
  }
  DecodedImage image;
  AIC_RETURN_IF_ERROR(AllocateImage(height, width, channels, image));
  // Pillow: min(v, maxval), then round(v / maxval * 255), half to even.
  auto widen = [maxval](uint32_t v) -> uint8_t {
    if (maxval == 255) return static_cast<uint8_t>(v);
    return static_cast<uint8_t>(std::nearbyint(static_cast<double>(std::min(v, maxval)) / maxval * 255.0));
  };
  const size_t samples = image.size();
  if (ascii) {
    for (size_t i = 0; i < samples; ++i) {
      AIC_ASSIGN_OR_RETURN(const uint32_t v, tokens.Number(bitmap ? 1 : 9));
      image.pixels[i] = bitmap ? (v ? 0 : 255) : widen(v);  // PBM: 1 is black
    }
    return image;
  }
  // One whitespace byte ends the header of a binary raster.
  if (tokens.pos() >= data.size() || !std::isspace(data[tokens.pos()])) return Truncated("PNM");
  tokens.Skip(1);
  const size_t start = tokens.pos();
  const uint64_t w = width, h = height;
  if (bitmap) {
    const uint64_t row = (w + 7) / 8;
    if (data.size() - start < row * h) return Truncated("PNM");
    for (uint64_t y = 0; y < h; ++y) {
      for (uint64_t x = 0; x < w; ++x) {
        const bool black = (data[start + y * row + x / 8] >> (7 - x % 8)) & 1;
        image.pixels[y * w + x] = black ? 0 : 255;
      }
    }
    return image;
  }
  const uint64_t sample_bytes = maxval > 255 ? 2 : 1;
  if ((data.size() - start) / sample_bytes < samples) return Truncated("PNM");
  const uint8_t* p = data.data() + start;
  for (size_t i = 0; i < samples; ++i) {
    const uint32_t v = sample_bytes == 2 ? (uint32_t{p[2 * i]} << 8) | p[2 * i + 1] : p[i];
    image.pixels[i] = widen(v);
  }
  return image;
}

ImageFormat DetectImageFormat(absl::Span<const uint8_t> data) {
  if (StartsWith(data, {0xFF, 0xD8, 0xFF})) return ImageFormat::kJpeg;
  if (StartsWith(data, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'})) return ImageFormat::kPng;
  if (StartsWith(data, {'B', 'M'})) return ImageFormat::kBmp;
  if (StartsWith(data, {'I', 'I', 42, 0}) || StartsWith(data, {'M', 'M', 0, 42}) ||
      StartsWith(data, {'I', 'I', 43, 0}) || StartsWith(data, {'M', 'M', 0, 43})) {
    return ImageFormat::kTiff;
  }
  if (data.size() >= 12 && StartsWith(data, {'R', 'I', 'F', 'F'}) && std::memcmp(data.data() + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  // The JP2 file's signature box, or a bare codestream's SOC + SIZ markers.
  if (StartsWith(data, {0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n'}) ||
      StartsWith(data, {0xFF, 0x4F, 0xFF, 0x51})) {
    return ImageFormat::kJpeg2000;
  }
  if (data.size() >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' && std::isspace(data[2])) {
    return ImageFormat::kPnm;
  }
  return ImageFormat::kUnknown;
}

absl::Status AllocateImage(int64_t height, int64_t width, int64_t channels, DecodedImage& image) {
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("image size ", width, "x", height, " is invalid"));
  }
  if (height > kMaxImagePixels / width) {
    return absl::InvalidArgumentError(
        absl::StrCat("image of ", width, "x", height, " pixels exceeds the limit of ", kMaxImagePixels, " pixels"));
  }
  image.height = height;
  image.width = width;
  image.channels = channels;
  image.pixels = std::make_unique_for_overwrite<uint8_t[]>(image.size());
  return absl::OkStatus();
}

absl::StatusOr<DecodedImage> DecodeImage(absl::Span<const uint8_t> data) {
  switch (DetectImageFormat(data)) {
    case ImageFormat::kBmp: return DecodeBmp(data);
    case ImageFormat::kJpeg: return DecodeJpeg(data);
    case ImageFormat::kJpeg2000: return DecodeJpeg2000(data);
    case ImageFormat::kPng: return DecodePng(data);
    case ImageFormat::kPnm: return DecodePnm(data);
    case ImageFormat::kTiff: return DecodeTiff(data);
    case ImageFormat::kWebp: return DecodeWebp(data);
    case ImageFormat::kUnknown: break;
  }
  if (data.empty()) return absl::InvalidArgumentError("the encoded stream is empty");
  return absl::InvalidArgumentError(
      "the encoded stream is not in a supported image format (BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP)");
}

}  // namespace aic::image
