// JPEG through libjpeg-turbo with the defaults Pillow decodes with (ISLOW
// DCT, fancy upsampling, libjpeg's YCbCr -> RGB), so results match ONNX's
// expected outputs bit for bit. libjpeg reports errors by calling
// error_exit, which by default exits the process: ours longjmps back to
// DecodeJpeg, which owns no C++ object that the jump could skip. Running out
// of data is only a warning to libjpeg (it pads with grey rows); Pillow
// refuses a truncated image, and so do we.
#include <csetjmp>
#include <cstdio>
#include <cstring>

// jpeglib.h needs FILE and size_t declared first.
#include <jerror.h>
#include <jpeglib.h>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"

namespace aic::image {

namespace {

struct JpegErrorManager {
  jpeg_error_mgr mgr;  // first: libjpeg hands back a pointer to it
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void JpegEmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message), "JPEG data is truncated");
    std::longjmp(err->jump, 1);
  }
  // Other warnings (extraneous bytes, odd markers) are silent, as in Pillow.
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeJpeg(absl::Span<const uint8_t> data) {
  DecodedImage image;
  JpegErrorManager err;
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.emit_message = JpegEmitMessage;
  err.message[0] = '\0';
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return absl::InvalidArgumentError(absl::StrCat("JPEG: ", err.message));
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
  if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
    jpeg_destroy_decompress(&cinfo);
    return absl::InvalidArgumentError("JPEG holds tables but no image");
  }
  switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      cinfo.out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_YCbCr:
    case JCS_RGB:
      cinfo.out_color_space = JCS_RGB;
      break;
    default:  // CMYK, YCCK: Pillow's CMYK has four channels, which no pixel_format gives
      jpeg_destroy_decompress(&cinfo);
      return absl::InvalidArgumentError("JPEG in CMYK/YCCK colour is not supported");
  }
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.do_fancy_upsampling = TRUE;
  // Scoped to the if: no Status is alive while libjpeg may jump.
  if (absl::Status s = AllocateImage(cinfo.image_height, cinfo.image_width, cinfo.num_components == 1 ? 1 : 3,
                                     image);
      !s.ok()) {
    jpeg_destroy_decompress(&cinfo);
    return s;
  }
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_components != image.channels || cinfo.output_width != image.width ||
      cinfo.output_height != image.height) {
    jpeg_destroy_decompress(&cinfo);
    return absl::InternalError("JPEG: libjpeg's output differs from its header");
  }
  const size_t stride = static_cast<size_t>(image.width * image.channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = image.pixels.get() + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  // Every row is read: what follows the scan (a missing EOI, trailing bytes)
  // is not checked, as Pillow does not.
  jpeg_destroy_decompress(&cinfo);
  return image;
}

}  // namespace aic::image
