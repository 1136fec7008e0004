// Image codecs behind ImageDecoder (ops/misc/image_decoder.cc): the format
// told by its magic bytes, then a decoder per format. JPEG, PNG, TIFF, WebP
// and JPEG 2000 go through Debian's libraries (image_codecs_<format>.cc), whose
// default error paths (longjmp, exit, stderr) are replaced by ones that return
// here; BMP and PNM are parsed by hand (image_codecs.cc), every read bounds
// checked. Each decoder gives the image in its native channels, as Pillow
// (ONNX's reference) opens it: one for a grey source, three (RGB) otherwise;
// alpha is dropped and palettes are expanded. Errors are plain messages
// without the node, which the kernel adds.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace aic::image {

enum class ImageFormat { kUnknown, kBmp, kJpeg, kJpeg2000, kPng, kPnm, kTiff, kWebp };

ImageFormat DetectImageFormat(absl::Span<const uint8_t> data);

// Row-major [height, width, channels] bytes, channels 1 (grey) or 3 (RGB).
struct DecodedImage {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  // Not zeroed: a header that lies about its size costs no memory until rows
  // are written, and a decoder that succeeds has written every pixel.
  std::unique_ptr<uint8_t[]> pixels;
  size_t size() const { return static_cast<size_t>(height * width * channels); }
};

// Pillow's decompression-bomb limit (Image.MAX_IMAGE_PIXELS, 2x of which is its
// error): a few hundred bytes of PNG or TIFF header can claim gigapixels.
inline constexpr int64_t kMaxImagePixels = 2 * 89478485;

// Checks the claimed size against kMaxImagePixels and sizes `image`.
absl::Status AllocateImage(int64_t height, int64_t width, int64_t channels, DecodedImage& image);

// The format's decoder, or InvalidArgument for unknown bytes.
absl::StatusOr<DecodedImage> DecodeImage(absl::Span<const uint8_t> data);

// One per format; `data` holds the format's magic (checked by the caller).
absl::StatusOr<DecodedImage> DecodeBmp(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodePnm(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodeJpeg(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodePng(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodeTiff(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodeWebp(absl::Span<const uint8_t> data);
absl::StatusOr<DecodedImage> DecodeJpeg2000(absl::Span<const uint8_t> data);

}  // namespace aic::image
