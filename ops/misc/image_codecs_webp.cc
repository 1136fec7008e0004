// WebP (lossy and lossless stills) through libwebp, decoded straight to RGB
// with libwebp's default fancy upsampling: the values Pillow's decoder gives
// a still image (its animation decoder decodes a first frame the same way).
// libwebp returns status codes; it neither jumps nor prints.
#include <webp/decode.h>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"
#include "support/status.h"

namespace aic::image {

namespace {

const char* Vp8StatusName(VP8StatusCode code) {
  switch (code) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "data is truncated";
  }
  return "unknown error";
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeWebp(absl::Span<const uint8_t> data) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return absl::InternalError("WebP: libwebp version mismatch");
  if (VP8StatusCode code = WebPGetFeatures(data.data(), data.size(), &config.input); code != VP8_STATUS_OK) {
    return absl::InvalidArgumentError(absl::StrCat("WebP: ", Vp8StatusName(code)));
  }
  if (config.input.has_animation) return absl::InvalidArgumentError("WebP: animations are not supported");
  DecodedImage image;
  AIC_RETURN_IF_ERROR(AllocateImage(config.input.height, config.input.width, 3, image));
  config.output.colorspace = MODE_RGB;  // alpha, if any, dropped
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = image.pixels.get();
  config.output.u.RGBA.stride = static_cast<int>(image.width * 3);
  config.output.u.RGBA.size = image.size();
  const VP8StatusCode code = WebPDecode(data.data(), data.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (code != VP8_STATUS_OK) return absl::InvalidArgumentError(absl::StrCat("WebP: ", Vp8StatusName(code)));
  return image;
}

}  // namespace aic::image
