// ImageDecoder-20: a 1-D uint8 tensor holding an encoded image (BMP, JPEG,
// JPEG 2000, PNG, PNM, TIFF, WebP; told by its magic bytes) -> uint8
// [H, W, C], C = 3 for pixel_format RGB/BGR and 1 for Grayscale. H and W are
// only known once decoded, so inference gives them fresh symbols. The codecs
// (ops/misc/image_codecs*.cc) decode to the image's native channels; this file
// turns those into the requested pixel format the way ONNX's reference
// (Pillow) does: Grayscale from colour is Pillow's convert("L"), a grey image
// is repeated into RGB. Data it cannot decode (empty, not an image, corrupt,
// truncated, unsupported, past the size limit) gives an empty [0, 0, C]
// image, as the spec says; a bad node or input type is an error.
#include <string>

#include "ops/misc/image_codecs.h"
#include "ops/misc/misc_ops.h"
#include "ops/util/cost_util.h"
#include "support/status.h"

namespace aic {

namespace {

enum class PixelFormat { kRgb, kBgr, kGrayscale };

absl::StatusOr<PixelFormat> ReadPixelFormat(const Node& n) {
  const std::string f = n.GetString("pixel_format", "RGB");
  if (f == "RGB") return PixelFormat::kRgb;
  if (f == "BGR") return PixelFormat::kBgr;
  if (f == "Grayscale") return PixelFormat::kGrayscale;
  return absl::InvalidArgumentError(
      absl::StrCat(n.Describe(), ": pixel_format must be RGB, BGR or Grayscale, got '", f, "'"));
}

int64_t Channels(PixelFormat f) { return f == PixelFormat::kGrayscale ? 1 : 3; }

// Pillow's convert("L") from RGB (ITU-R 601-2 luma in 16-bit fixed point):
// L = (R·19595 + G·38470 + B·7471 + 0x8000) >> 16. The weights sum to 65536,
// so a grey pixel (R = G = B) keeps its value.
uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
}

Tensor ToPixelFormat(const image::DecodedImage& img, PixelFormat format) {
  const int64_t c = Channels(format);
  Tensor out(DType::kUint8, {img.height, img.width, c});
  uint8_t* dst = out.mutable_data<uint8_t>();
  const uint8_t* src = img.pixels.get();
  const int64_t pixels = img.height * img.width;
  for (int64_t p = 0; p < pixels; ++p, src += img.channels, dst += c) {
    if (img.channels == 1) {
      for (int64_t k = 0; k < c; ++k) dst[k] = src[0];
    } else if (format == PixelFormat::kGrayscale) {
      dst[0] = Luma(src);
    } else if (format == PixelFormat::kBgr) {
      dst[0] = src[2], dst[1] = src[1], dst[2] = src[0];
    } else {
      dst[0] = src[0], dst[1] = src[1], dst[2] = src[2];
    }
  }
  return out;
}

absl::Status ImageDecoderKernel(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const PixelFormat format, ReadPixelFormat(ctx.node()));
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("encoded_stream is required");
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kUint8) return ctx.Error("encoded_stream must be uint8, got ", DTypeName(x.dtype()));
  if (x.rank() != 1) return ctx.Error("encoded_stream must be 1-D, got rank ", x.rank());
  const absl::Span<const uint8_t> bytes = x.span<uint8_t>();
  absl::StatusOr<image::DecodedImage> img = image::DecodeImage(bytes);
  if (!img.ok()) {
    ctx.set_output(0, Tensor(DType::kUint8, {0, 0, Channels(format)}));  // the spec's "empty matrix"
    return absl::OkStatus();
  }
  ctx.set_output(0, ToPixelFormat(*img, format));
  return absl::OkStatus();
}

absl::Status InferImageDecoder(OpContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const PixelFormat format, ReadPixelFormat(ctx.node()));
  if (ctx.input_type(0).known()) {
    if (ctx.input_dtype(0) != DType::kUint8) {
      return ctx.Error("encoded_stream must be uint8, got ", DTypeName(ctx.input_dtype(0)));
    }
    const Shape& s = ctx.input_shape(0);
    if (s.has_rank() && s.rank() != 1) return ctx.Error("encoded_stream must be 1-D, got rank ", s.rank());
  }
  ctx.set_output(0, DType::kUint8, Shape({ctx.FreshDim(), ctx.FreshDim(), Dim(Channels(format))}));
  return absl::OkStatus();
}

Traits ImageDecoderTraits(const OpContext&) {
  Traits t;
  t.semantic_name = "ImageDecoder";
  t.meaning = "image[H, W, C] = decode(encoded bytes)";
  t.linearity = Linearity::kNonlinear;
  // Different encodings (formats, metadata, lossy rounding) decode to one image.
  t.invertibility = Invertibility::kIrreversible;
  t.effect = RepresentationEffect::kExpands;
  t.effect_detail = "encoded bytes → pixels";
  return t;
}

}  // namespace

void RegisterImageDecoderOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "ImageDecoder",
      .since_version = 20,
      .infer = InferImageDecoder,
      .traits = ImageDecoderTraits,
      // Bytes only, and only known when both sizes are: H and W stay symbols
      // until the image is decoded. Entropy decoding is not counted as FLOPs.
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = ImageDecoderKernel,
  });
}

}  // namespace aic
