// TIFF through libtiff, reading the first page from memory. Strips of 8-bit
// RGB or grey samples (any compression libtiff decodes) are read as stored,
// which is what Pillow gives; every other layout (tiles, planes, palettes,
// other depths, YCbCr, CMYK, min-is-white) goes through libtiff's RGBA
// conversion. Errors and warnings reach per-handle handlers (TIFFOpenOptions,
// libtiff 4.5), never stderr; libtiff returns after an error, it does not jump.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/image_codecs.h"
#include "support/status.h"

namespace aic::image {

namespace {

struct TiffSource {
  absl::Span<const uint8_t> data;
  uint64_t pos = 0;
  std::string message;  // the first error libtiff reported
};

tmsize_t TiffRead(thandle_t h, void* out, tmsize_t n) {
  auto* src = static_cast<TiffSource*>(h);
  if (n < 0 || src->pos >= src->data.size()) return 0;
  const uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(n), src->data.size() - src->pos);
  std::memcpy(out, src->data.data() + src->pos, count);
  src->pos += count;
  return static_cast<tmsize_t>(count);
}

tmsize_t TiffWrite(thandle_t, void*, tmsize_t) { return -1; }

toff_t TiffSeek(thandle_t h, toff_t offset, int whence) {
  auto* src = static_cast<TiffSource*>(h);
  const uint64_t base = whence == SEEK_CUR ? src->pos : whence == SEEK_END ? src->data.size() : 0;
  // Offsets past the end are allowed (reads there return nothing); wrapping is not.
  if (offset > UINT64_MAX - base) return static_cast<toff_t>(-1);
  src->pos = base + offset;
  return src->pos;
}

int TiffClose(thandle_t) { return 0; }
toff_t TiffSize(thandle_t h) { return static_cast<TiffSource*>(h)->data.size(); }

// The bytes are in memory already: "mapping" them lets libtiff read strips and
// tiles in place, with its mapped-file bounds checks. libtiff 4.5's unmapped
// path also refuses uncompressed tiles in TIFFReadRGBAImage ("Invalid tile
// byte count ... Expected 768, got 1024"), which this avoids. libtiff does not
// write through a mapping opened for reading.
int TiffMap(thandle_t h, void** base, toff_t* size) {
  auto* src = static_cast<TiffSource*>(h);
  *base = const_cast<uint8_t*>(src->data.data());
  *size = src->data.size();
  return 1;
}
void TiffUnmap(thandle_t, void*, toff_t) {}

int TiffOnError(TIFF*, void* user, const char* module, const char* fmt, va_list args) {
  auto* src = static_cast<TiffSource*>(user);
  if (src->message.empty()) {
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    src->message = buf;
  }
  return 1;  // handled: libtiff prints nothing
}

int TiffOnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

absl::Status TiffError(const TiffSource& src, const char* what) {
  return absl::InvalidArgumentError(
      absl::StrCat("TIFF: ", what, src.message.empty() ? "" : ": ", src.message));
}

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};

absl::StatusOr<DecodedImage> ReadTiff(TIFF* tif, TiffSource& src) {
  uint32_t width = 0, height = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height)) {
    return TiffError(src, "no image size");
  }
  uint16_t bits = 0, samples = 0, planar = 0, extra_count = 0;
  uint16_t photometric = 0xFFFF;  // absent: no branch below takes it
  uint16_t* extra = nullptr;
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
  TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
  const int colour = samples - extra_count;
  const bool grey = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE;
  DecodedImage image;
  AIC_RETURN_IF_ERROR(AllocateImage(height, width, grey && colour == 1 ? 1 : 3, image));

  if (bits == 8 && planar == PLANARCONFIG_CONTIG && !TIFFIsTiled(tif) &&
      ((photometric == PHOTOMETRIC_RGB && colour == 3) || (photometric == PHOTOMETRIC_MINISBLACK && colour == 1))) {
    const tmsize_t line = TIFFScanlineSize(tif);
    if (line < static_cast<tmsize_t>(width) * samples) return TiffError(src, "bad scanline size");
    std::vector<uint8_t> row(static_cast<size_t>(line));
    uint8_t* out = image.pixels.get();
    for (uint32_t y = 0; y < height; ++y) {
      if (TIFFReadScanline(tif, row.data(), y, 0) < 0) return TiffError(src, "cannot read the image");
      for (uint32_t x = 0; x < width; ++x) {
        for (int c = 0; c < image.channels; ++c) *out++ = row[static_cast<size_t>(x) * samples + c];
      }
    }
    return image;
  }

  char why[1024];
  if (!TIFFRGBAImageOK(tif, why)) return absl::InvalidArgumentError(absl::StrCat("TIFF: ", why));
  std::vector<uint32_t> rgba(static_cast<size_t>(width) * height);
  if (!TIFFReadRGBAImageOriented(tif, width, height, rgba.data(), ORIENTATION_TOPLEFT, 1)) {
    return TiffError(src, "cannot read the image");
  }
  uint8_t* out = image.pixels.get();
  for (uint32_t p : rgba) {
    *out++ = static_cast<uint8_t>(TIFFGetR(p));
    if (image.channels == 3) {
      *out++ = static_cast<uint8_t>(TIFFGetG(p));
      *out++ = static_cast<uint8_t>(TIFFGetB(p));
    }
  }
  return image;
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeTiff(absl::Span<const uint8_t> data) {
  TiffSource src;
  src.data = data;
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  if (options == nullptr) return absl::ResourceExhaustedError("TIFF: cannot create a decoder");
  TIFFOpenOptionsSetErrorHandlerExtR(options, TiffOnError, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(options, TiffOnWarning, &src);
  std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpenExt("memory", "r", &src, TiffRead, TiffWrite, TiffSeek,
                                                          TiffClose, TiffSize, TiffMap, TiffUnmap, options));
  TIFFOpenOptionsFree(options);
  if (tif == nullptr) return TiffError(src, "cannot read the header");
  return ReadTiff(tif.get(), src);
}

}  // namespace aic::image
