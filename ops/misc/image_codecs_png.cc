// PNG through libpng, with the transforms that give Pillow's values in 8-bit
// RGB or grey: palettes expanded, grey of 1/2/4 bits scaled to 8 (Pillow's
// "L;2"/"L;4" unpackers scale the same), 16-bit samples cut to their high
// byte (Pillow's "RGB;16B"), alpha dropped, no gamma applied. libpng reports
// errors through a callback that must not return: ours longjmps back to
// DecodePng, which owns no C++ object that the jump could skip.
#include <png.h>

#include <csetjmp>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"

namespace aic::image {

namespace {

struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char message[256] = {};
};

void PngRead(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) png_error(png, "data is truncated");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

[[noreturn]] void PngError(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof(src->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}  // bad ancillary chunks are skipped, as in Pillow

}  // namespace

absl::StatusOr<DecodedImage> DecodePng(absl::Span<const uint8_t> data) {
  DecodedImage image;
  PngSource src;
  src.data = data.data();
  src.size = data.size();
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, PngError, PngWarning);
  if (png == nullptr) return absl::ResourceExhaustedError("PNG: cannot create a decoder");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return absl::ResourceExhaustedError("PNG: cannot create a decoder");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return absl::InvalidArgumentError(absl::StrCat("PNG: ", src.message));
  }
  png_set_read_fn(png, &src, PngRead);
  png_read_info(png, info);
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  // A tRNS chunk would become an alpha channel under the expansions above.
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) png_set_strip_16(png);
  png_set_strip_alpha(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  if (png_get_bit_depth(png, info) != 8 || (channels != 1 && channels != 3)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return absl::InternalError("PNG: libpng's transforms gave an unexpected layout");
  }
  // Scoped to the if: no Status is alive while libpng may jump.
  if (absl::Status s = AllocateImage(png_get_image_height(png, info), png_get_image_width(png, info), channels,
                                     image);
      !s.ok()) {
    png_destroy_read_struct(&png, &info, nullptr);
    return s;
  }
  const size_t stride = static_cast<size_t>(image.width * image.channels);
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t y = 0; y < image.height; ++y) png_read_row(png, image.pixels.get() + y * stride, nullptr);
  }
  // Chunks after the image data (text, time) are not read: nothing there
  // changes the pixels.
  png_destroy_read_struct(&png, &info, nullptr);
  return image;
}

}  // namespace aic::image
