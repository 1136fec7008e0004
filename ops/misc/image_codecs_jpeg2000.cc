// JPEG 2000 (JP2 files and bare J2K codestreams) through OpenJPEG, read
// from memory by a stream of our own. Samples are widened or narrowed to 8
// bits as Pillow's unpackers do (shifted by 8 - precision, signed samples
// offset to unsigned); subsampled components are read at the nearest sample.
// OpenJPEG reports errors to a per-codec handler and returns false; it does
// not jump. Strict mode (its default) refuses a truncated codestream.
#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"
#include "support/status.h"

namespace aic::image {

namespace {

struct J2kSource {
  absl::Span<const uint8_t> data;
  uint64_t pos = 0;
  std::string message;  // the first error OpenJPEG reported
};

OPJ_SIZE_T J2kRead(void* out, OPJ_SIZE_T n, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (src->pos >= src->data.size()) return static_cast<OPJ_SIZE_T>(-1);
  const uint64_t count = std::min<uint64_t>(n, src->data.size() - src->pos);
  std::memcpy(out, src->data.data() + src->pos, count);
  src->pos += count;
  return count;
}

OPJ_OFF_T J2kSkip(OPJ_OFF_T n, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (n < 0) {
    const uint64_t back = std::min<uint64_t>(static_cast<uint64_t>(-n), src->pos);
    src->pos -= back;
    return -static_cast<OPJ_OFF_T>(back);
  }
  const uint64_t ahead = std::min<uint64_t>(static_cast<uint64_t>(n), src->data.size() - src->pos);  // pos <= size
  src->pos += ahead;
  return static_cast<OPJ_OFF_T>(ahead);
}

OPJ_BOOL J2kSeek(OPJ_OFF_T to, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (to < 0 || static_cast<uint64_t>(to) > src->data.size()) return OPJ_FALSE;
  src->pos = static_cast<uint64_t>(to);
  return OPJ_TRUE;
}

void J2kOnError(const char* message, void* user) {
  auto* src = static_cast<J2kSource*>(user);
  if (!src->message.empty()) return;
  src->message = message;
  while (!src->message.empty() && (src->message.back() == '\n' || src->message.back() == ' ')) {
    src->message.pop_back();
  }
}

void J2kQuiet(const char*, void*) {}

struct CodecCloser {
  void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
};
struct StreamCloser {
  void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
};
struct ImageCloser {
  void operator()(opj_image_t* i) const { opj_image_destroy(i); }
};

absl::Status J2kError(const J2kSource& src, const char* what) {
  return absl::InvalidArgumentError(
      absl::StrCat("JPEG 2000: ", what, src.message.empty() ? "" : ": ", src.message));
}

// Pillow's j2ku_shift: value + signed offset, shifted by 8 - precision.
uint8_t To8Bits(int32_t v, const opj_image_comp_t& comp) {
  const int prec = static_cast<int>(std::clamp<OPJ_UINT32>(comp.prec, 1, 31));
  int64_t u = int64_t{v} + (comp.sgnd ? int64_t{1} << (prec - 1) : 0);
  u = prec > 8 ? u >> (prec - 8) : u << (8 - prec);
  return static_cast<uint8_t>(std::clamp<int64_t>(u, 0, 255));
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeJpeg2000(absl::Span<const uint8_t> data) {
  J2kSource src;
  src.data = data;
  const bool jp2 = data.size() >= 4 && data[0] == 0 && data[3] == 12;  // the JP2 signature box
  std::unique_ptr<opj_codec_t, CodecCloser> codec(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
  std::unique_ptr<opj_stream_t, StreamCloser> stream(opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE));
  if (codec == nullptr || stream == nullptr) return absl::ResourceExhaustedError("JPEG 2000: cannot create a decoder");
  opj_set_error_handler(codec.get(), J2kOnError, &src);
  opj_set_warning_handler(codec.get(), J2kQuiet, nullptr);
  opj_set_info_handler(codec.get(), J2kQuiet, nullptr);
  opj_stream_set_user_data(stream.get(), &src, nullptr);
  opj_stream_set_user_data_length(stream.get(), data.size());
  opj_stream_set_read_function(stream.get(), J2kRead);
  opj_stream_set_skip_function(stream.get(), J2kSkip);
  opj_stream_set_seek_function(stream.get(), J2kSeek);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  if (!opj_setup_decoder(codec.get(), &params)) return J2kError(src, "cannot set up the decoder");

  opj_image_t* raw_image = nullptr;
  const bool header_ok = opj_read_header(stream.get(), codec.get(), &raw_image);
  std::unique_ptr<opj_image_t, ImageCloser> j2k(raw_image);
  if (!header_ok || j2k == nullptr) return J2kError(src, "cannot read the header");
  if (j2k->numcomps == 0 || j2k->x1 <= j2k->x0 || j2k->y1 <= j2k->y0) return J2kError(src, "empty image");
  if (j2k->color_space == OPJ_CLRSPC_SYCC || j2k->color_space == OPJ_CLRSPC_EYCC ||
      j2k->color_space == OPJ_CLRSPC_CMYK) {
    return absl::InvalidArgumentError("JPEG 2000 in YCC or CMYK colour is not supported");
  }
  // Grey (with or without alpha) or RGB (with or without alpha).
  const int channels = j2k->numcomps >= 3 && j2k->color_space != OPJ_CLRSPC_GRAY ? 3 : 1;
  DecodedImage image;
  // Checked before decoding, which allocates the whole image.
  AIC_RETURN_IF_ERROR(AllocateImage(j2k->y1 - j2k->y0, j2k->x1 - j2k->x0, channels, image));
  if (!opj_decode(codec.get(), stream.get(), j2k.get()) || !opj_end_decompress(codec.get(), stream.get())) {
    return J2kError(src, "cannot decode the image");
  }
  for (int c = 0; c < channels; ++c) {
    const opj_image_comp_t& comp = j2k->comps[c];
    if (comp.data == nullptr || comp.w == 0 || comp.h == 0 || comp.dx == 0 || comp.dy == 0) {
      return J2kError(src, "a component has no samples");
    }
    for (int64_t y = 0; y < image.height; ++y) {
      // The component's sample covering reference-grid row y0 + y.
      const int64_t cy = std::clamp<int64_t>((j2k->y0 + y) / comp.dy - comp.y0, 0, comp.h - 1);
      const OPJ_INT32* row = comp.data + cy * comp.w;
      uint8_t* out = image.pixels.get() + y * image.width * channels + c;
      for (int64_t x = 0; x < image.width; ++x, out += channels) {
        const int64_t cx = std::clamp<int64_t>((j2k->x0 + x) / comp.dx - comp.x0, 0, comp.w - 1);
        *out = To8Bits(row[cx], comp);
      }
    }
  }
  return image;
}

}  // namespace aic::image
