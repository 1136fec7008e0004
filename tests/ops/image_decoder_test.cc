// Tests of ImageDecoder (ops/misc/image_decoder.cc, image_codecs*.cc): small
// images of every format, made here (BMP and PNM byte by byte, the rest with
// the libraries' own encoders), decoded to RGB, BGR and Grayscale; lossless
// formats must give the pixels back exactly. Data that cannot be decoded
// (empty, garbage, truncated, mutated, oversized) gives the spec's empty
// image, and the codecs say why in one line; never a crash: the mutation
// loops are what ASan and UBSan watch in `make test`.
// The backend suite's node/test_image_decoder_* check the values against
// Pillow's outputs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

// After <cstdio>: jpeglib.h needs FILE and size_t declared.
#include <jpeglib.h>
#include <openjpeg.h>
#include <png.h>
#include <tiffio.h>
#include <webp/encode.h>

#include <gtest/gtest.h>

#include "ops/misc/image_codecs.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

using Bytes = std::vector<uint8_t>;

constexpr int kW = 13, kH = 7;  // odd sizes: BMP row padding, partial PBM bytes

// A colour image [kH, kW, 3] with distinct channels.
Bytes Rgb() {
  Bytes p;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      p.push_back(static_cast<uint8_t>(x * 19));
      p.push_back(static_cast<uint8_t>(y * 37 + 3));
      p.push_back(static_cast<uint8_t>((x * y * 7 + 100) & 255));
    }
  }
  return p;
}

Bytes Grey() {
  Bytes p;
  for (int i = 0; i < kW * kH; ++i) p.push_back(static_cast<uint8_t>(i * 11));
  return p;
}

// Pillow's convert("L"), written out independently of the kernel.
Bytes Luma(const Bytes& rgb) {
  Bytes l;
  for (size_t i = 0; i < rgb.size(); i += 3) {
    l.push_back(static_cast<uint8_t>((rgb[i] * 19595 + rgb[i + 1] * 38470 + rgb[i + 2] * 7471 + 32768) >> 16));
  }
  return l;
}

SingleNode Decoder(const std::string& pixel_format = "RGB") {
  return Op("ImageDecoder", {Attribute::String("pixel_format", pixel_format)}, 20);
}

Tensor Stream(const Bytes& b) { return Tensor::FromVector<uint8_t>(b, {static_cast<int64_t>(b.size())}); }

absl::StatusOr<Tensor> Decode(const Bytes& encoded, const std::string& pixel_format = "RGB") {
  auto out = RunNode(Decoder(pixel_format), {Stream(encoded)});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

Bytes Pixels(const Tensor& t) { return Bytes(t.data<uint8_t>(), t.data<uint8_t>() + t.num_elements()); }

// Decodes in all three pixel formats and checks them against the expected
// RGB (or grey, for a grey source) pixels, exactly or within `tolerance`.
void ExpectDecodes(const Bytes& encoded, const Bytes& expected, int channels, int tolerance = 0) {
  SCOPED_TRACE(::testing::Message() << "source channels " << channels);
  absl::StatusOr<Tensor> rgb = Decode(encoded, "RGB");
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  ASSERT_EQ(rgb->dims(), (std::vector<int64_t>{kH, kW, 3}));
  const Bytes got = Pixels(*rgb);
  for (size_t i = 0; i < got.size(); ++i) {
    const int want = channels == 3 ? expected[i] : expected[i / 3];  // grey repeated into RGB
    ASSERT_LE(std::abs(got[i] - want), tolerance) << "element " << i;
  }
  absl::StatusOr<Tensor> bgr = Decode(encoded, "BGR");
  ASSERT_TRUE(bgr.ok()) << bgr.status();
  ASSERT_EQ(bgr->dims(), (std::vector<int64_t>{kH, kW, 3}));
  const Bytes b = Pixels(*bgr);
  for (size_t i = 0; i < b.size(); i += 3) {
    ASSERT_EQ(b[i], got[i + 2]);
    ASSERT_EQ(b[i + 1], got[i + 1]);
    ASSERT_EQ(b[i + 2], got[i]);
  }
  absl::StatusOr<Tensor> grey = Decode(encoded, "Grayscale");
  ASSERT_TRUE(grey.ok()) << grey.status();
  ASSERT_EQ(grey->dims(), (std::vector<int64_t>{kH, kW, 1}));
  // Grey is the luma of the decoded RGB; a grey source's RGB is its grey
  // repeated, whose luma is the grey itself.
  EXPECT_EQ(Pixels(*grey), Luma(got));
}

void ExpectErrorNamingNode(const absl::StatusOr<Tensor>& r, const std::string& needle = "") {
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ImageDecoder '"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status();
}

// Undecodable data: the codecs give a one-line reason (containing `needle`)
// and the op the spec's empty image.
void ExpectUndecodable(const Bytes& encoded, const std::string& needle = "") {
  absl::StatusOr<image::DecodedImage> decoded = image::DecodeImage(encoded);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find(needle), std::string::npos) << decoded.status();
  EXPECT_EQ(decoded.status().message().find('\n'), std::string::npos) << decoded.status();
  absl::StatusOr<Tensor> r = Decode(encoded);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dims(), (std::vector<int64_t>{0, 0, 3}));
}

Bytes ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Per process: ctest runs the tests of this binary in parallel processes.
std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/image_decoder_test_" + std::to_string(::getpid()) + "_" + name;
}

// ---- encoders ----

void Put16(Bytes& b, uint32_t v) {
  b.push_back(v & 255);
  b.push_back((v >> 8) & 255);
}
void Put32(Bytes& b, uint32_t v) {
  Put16(b, v & 0xFFFF);
  Put16(b, v >> 16);
}

// A BITMAPINFOHEADER bitmap; `rows` are the stored rows (padded), bottom-up
// unless `top_down`.
Bytes Bmp(int bpp, const Bytes& palette_bgrx, const Bytes& rows, bool top_down, uint32_t compression = 0,
          const Bytes& masks = {}) {
  Bytes b = {'B', 'M'};
  const uint32_t offset = 14 + 40 + static_cast<uint32_t>(masks.size() + palette_bgrx.size());
  Put32(b, offset + static_cast<uint32_t>(rows.size()));
  Put32(b, 0);
  Put32(b, offset);
  Put32(b, 40);
  Put32(b, kW);
  Put32(b, static_cast<uint32_t>(top_down ? -kH : kH));
  Put16(b, 1);
  Put16(b, static_cast<uint32_t>(bpp));
  Put32(b, compression);
  Put32(b, static_cast<uint32_t>(rows.size()));
  Put32(b, 2835);
  Put32(b, 2835);
  Put32(b, static_cast<uint32_t>(palette_bgrx.size() / 4));
  Put32(b, 0);
  b.insert(b.end(), masks.begin(), masks.end());
  b.insert(b.end(), palette_bgrx.begin(), palette_bgrx.end());
  b.insert(b.end(), rows.begin(), rows.end());
  return b;
}

// The stored rows, each padded to 4 bytes, filled by `write(row, y)` for
// image row y.
template <typename PixelWriter>
Bytes BmpRows(int bits_per_pixel, bool top_down, PixelWriter write) {
  const size_t stride = (kW * bits_per_pixel + 31) / 32 * 4;
  Bytes rows;
  for (int r = 0; r < kH; ++r) {
    Bytes row(stride, 0);
    write(row, top_down ? r : kH - 1 - r);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

Bytes Bmp24(const Bytes& rgb, bool top_down) {
  return Bmp(24, {}, BmpRows(24, top_down, [&](Bytes& row, int y) {
               for (int x = 0; x < kW; ++x) {
                 for (int c = 0; c < 3; ++c) row[x * 3 + c] = rgb[(y * kW + x) * 3 + 2 - c];
               }
             }),
             top_down);
}

Bytes Pnm(const std::string& header, const Bytes& raster) {
  Bytes b(header.begin(), header.end());
  b.insert(b.end(), raster.begin(), raster.end());
  return b;
}

void PngWrite(png_structp png, png_bytep data, size_t n) {
  auto* out = static_cast<Bytes*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}

// `samples` holds kH packed rows of samples of `depth` bits (16-bit
// big-endian), as PNG stores them.
Bytes Png(int color_type, int depth, const Bytes& samples, const Bytes& palette_rgb = {},
          int interlace = PNG_INTERLACE_NONE) {
  Bytes out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, PngWrite, nullptr);
  png_set_IHDR(png, info, kW, kH, depth, color_type, interlace, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!palette_rgb.empty()) {
    std::vector<png_color> pal;
    for (size_t i = 0; i < palette_rgb.size(); i += 3) {
      pal.push_back({palette_rgb[i], palette_rgb[i + 1], palette_rgb[i + 2]});
    }
    png_set_PLTE(png, info, pal.data(), static_cast<int>(pal.size()));
  }
  png_write_info(png, info);
  const size_t stride = samples.size() / kH;
  const int passes = png_set_interlace_handling(png);
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < kH; ++y) png_write_row(png, samples.data() + y * stride);
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

// Quality 100, no chroma subsampling: within a few levels of the source.
Bytes Jpeg(const Bytes& pixels, int channels) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = kW;
  c.image_height = kH;
  c.input_components = channels;
  c.in_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  for (int i = 0; i < c.num_components; ++i) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) + c.next_scanline * kW * channels;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  Bytes out(buf, buf + size);
  free(buf);
  return out;
}

// Through a file: libtiff's writer needs seeking. `tile` writes 16x16 tiles
// (read through libtiff's RGBA path); else one strip per row.
Bytes Tiff(const Bytes& pixels, int channels, uint16_t photometric, bool tile = false,
           uint16_t compression = COMPRESSION_NONE) {
  const std::string path = TempPath("tiff.tif");
  TIFF* t = TIFFOpen(path.c_str(), "w");
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, kW);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, kH);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, channels);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
  if (tile) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, 16);
    TIFFSetField(t, TIFFTAG_TILELENGTH, 16);
    Bytes tile_buf(16 * 16 * channels, 0);
    for (int y = 0; y < kH; ++y) {
      for (int x = 0; x < kW * channels; ++x) tile_buf[y * 16 * channels + x] = pixels[y * kW * channels + x];
    }
    TIFFWriteTile(t, tile_buf.data(), 0, 0, 0, 0);
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 1);
    for (int y = 0; y < kH; ++y) {
      TIFFWriteScanline(t, const_cast<uint8_t*>(pixels.data()) + y * kW * channels, y, 0);
    }
  }
  TIFFClose(t);
  Bytes out = ReadFile(path);
  std::remove(path.c_str());
  return out;
}

// Lossless (reversible 5/3 wavelet), as a JP2 file or a bare J2K codestream.
Bytes Jpeg2000(const Bytes& pixels, int channels, bool jp2) {
  std::vector<opj_image_cmptparm_t> params(channels);
  for (opj_image_cmptparm_t& p : params) {
    p = {};
    p.dx = p.dy = 1;
    p.w = kW;
    p.h = kH;
    p.prec = 8;
  }
  opj_image_t* image = opj_image_create(channels, params.data(), channels == 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
  image->x1 = kW;
  image->y1 = kH;
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < kW * kH; ++i) image->comps[c].data[i] = pixels[i * channels + c];
  }
  opj_cparameters_t cp;
  opj_set_default_encoder_parameters(&cp);
  cp.numresolution = 2;  // a 13x7 image has room for one decomposition level
  opj_codec_t* codec = opj_create_compress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  opj_setup_encoder(codec, &cp, image);
  const std::string path = TempPath(jp2 ? "j2k.jp2" : "j2k.j2k");
  opj_stream_t* stream = opj_stream_create_default_file_stream(path.c_str(), OPJ_FALSE);
  const bool ok =
      opj_start_compress(codec, image, stream) && opj_encode(codec, stream) && opj_end_compress(codec, stream);
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(image);
  EXPECT_TRUE(ok);
  Bytes out = ReadFile(path);
  std::remove(path.c_str());
  return out;
}

Bytes WebpLossless(const Bytes& rgb) {
  uint8_t* buf = nullptr;
  const size_t size = WebPEncodeLosslessRGB(rgb.data(), kW, kH, kW * 3, &buf);
  Bytes out(buf, buf + size);
  WebPFree(buf);
  return out;
}

Bytes WebpLossy(const Bytes& rgb) {
  uint8_t* buf = nullptr;
  const size_t size = WebPEncodeRGB(rgb.data(), kW, kH, kW * 3, 90, &buf);
  Bytes out(buf, buf + size);
  WebPFree(buf);
  return out;
}

// One valid file of every format, for the error tests.
std::vector<std::pair<std::string, Bytes>> EveryFormat() {
  const Bytes rgb = Rgb();
  return {{"BMP", Bmp24(rgb, false)},
          {"PNM", Pnm("P6\n13 7\n255\n", rgb)},
          {"PNG", Png(PNG_COLOR_TYPE_RGB, 8, rgb)},
          {"JPEG", Jpeg(rgb, 3)},
          {"TIFF", Tiff(rgb, 3, PHOTOMETRIC_RGB)},
          {"WebP", WebpLossy(rgb)},
          {"JPEG 2000", Jpeg2000(rgb, 3, true)}};
}

// ---- formats ----

TEST(ImageDecoderTest, Bmp) {
  const Bytes rgb = Rgb();
  ExpectDecodes(Bmp24(rgb, false), rgb, 3);
  ExpectDecodes(Bmp24(rgb, true), rgb, 3);
  // 32-bit BGRX.
  ExpectDecodes(Bmp(32, {}, BmpRows(32, false, [&](Bytes& row, int y) {
                      for (int x = 0; x < kW; ++x) {
                        for (int c = 0; c < 3; ++c) row[x * 4 + c] = rgb[(y * kW + x) * 3 + 2 - c];
                        row[x * 4 + 3] = 0x5A;
                      }
                    }),
                    false),
                rgb, 3);
  // 8-bit palette of greys: index i is grey i * 3.
  Bytes palette;
  for (int i = 0; i < 256; ++i) palette.insert(palette.end(), {uint8_t(i * 3), uint8_t(i * 3), uint8_t(i * 3), 0});
  const Bytes grey = Grey();
  Bytes expected;
  for (uint8_t g : grey) expected.push_back(static_cast<uint8_t>((g % 85) * 3));
  ExpectDecodes(Bmp(8, palette, BmpRows(8, false, [&](Bytes& row, int y) {
                      for (int x = 0; x < kW; ++x) row[x] = grey[y * kW + x] % 85;
                    }),
                    false),
                expected, 1);
  // 1-bit palette (black, orange): a checkerboard, bits packed high first.
  Bytes checker;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const bool odd = (x + y) % 2;
      checker.insert(checker.end(), {uint8_t(odd ? 255 : 0), uint8_t(odd ? 128 : 0), 0});
    }
  }
  ExpectDecodes(Bmp(1, {0, 0, 0, 0, 0, 128, 255, 0}, BmpRows(1, false, [&](Bytes& row, int y) {
                      for (int x = 0; x < kW; ++x) row[x / 8] |= ((x + y) % 2) << (7 - x % 8);
                    }),
                    false),
                checker, 3);
  // 16-bit 5-6-5 bit fields: 5 bits widen as v * 255 / 31 (Pillow's "BGR;16").
  Bytes expected565;
  const Bytes masks = {0x00, 0xF8, 0, 0, 0xE0, 0x07, 0, 0, 0x1F, 0, 0, 0};
  const Bytes bf = BmpRows(16, false, [&](Bytes& row, int y) {
    for (int x = 0; x < kW; ++x) {
      const uint32_t r = x * 2, g = y * 9, b = 31 - x;
      const uint32_t v = (r << 11) | (g << 5) | b;
      row[x * 2] = v & 255;
      row[x * 2 + 1] = v >> 8;
    }
  });
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      expected565.insert(expected565.end(),
                         {uint8_t(x * 2 * 255 / 31), uint8_t(y * 9 * 255 / 63), uint8_t((31 - x) * 255 / 31)});
    }
  }
  ExpectDecodes(Bmp(16, {}, bf, false, 3, masks), expected565, 3);
}

TEST(ImageDecoderTest, Pnm) {
  const Bytes rgb = Rgb();
  const Bytes grey = Grey();
  ExpectDecodes(Pnm("P6\n13 7\n255\n", rgb), rgb, 3);
  ExpectDecodes(Pnm("P5 # a comment\n13 7 255\t", grey), grey, 1);
  // 16-bit samples and a maxval of 15 are scaled to 255 as Pillow rounds:
  // round(v / maxval * 255), half to even.
  Bytes wide, scaled16, small, scaled15;
  for (uint8_t g : grey) {
    const uint32_t v16 = g * 257 + (g < 255 ? 1 : 0);
    wide.insert(wide.end(), {uint8_t(v16 >> 8), uint8_t(v16 & 255)});
    scaled16.push_back(static_cast<uint8_t>(std::nearbyint(v16 / 65535.0 * 255.0)));
    small.push_back(g % 16);
    scaled15.push_back(static_cast<uint8_t>(std::nearbyint(std::min(g % 16, 15) / 15.0 * 255.0)));
  }
  ExpectDecodes(Pnm("P5\n13 7\n65535\n", wide), scaled16, 1);
  ExpectDecodes(Pnm("P5\n13 7\n15\n", small), scaled15, 1);
  // ASCII grey and colour.
  std::string p2 = "P2\n13 7\n255\n", p3 = "P3\n# rgb\n13 7\n255\n";
  for (uint8_t g : grey) p2 += std::to_string(g) + (g % 3 ? " " : "\n");
  for (uint8_t v : rgb) p3 += std::to_string(v) + " ";
  ExpectDecodes(Bytes(p2.begin(), p2.end()), grey, 1);
  ExpectDecodes(Bytes(p3.begin(), p3.end()), rgb, 3);
  // PBM: 1 is black; binary rows are padded to whole bytes; ASCII pixels may touch.
  Bytes bits, pbm_expected;
  std::string p1 = "P1\n13 7\n";
  for (int y = 0; y < kH; ++y) {
    uint32_t row = 0;
    for (int x = 0; x < kW; ++x) {
      const bool black = (x * y) % 3 == 0;
      row |= uint32_t{black} << (15 - x);
      pbm_expected.push_back(black ? 0 : 255);
      p1 += black ? "1" : "0";
    }
    bits.insert(bits.end(), {uint8_t(row >> 8), uint8_t(row & 255)});
    p1 += "\n";
  }
  ExpectDecodes(Pnm("P4\n13 7\n", bits), pbm_expected, 1);
  ExpectDecodes(Bytes(p1.begin(), p1.end()), pbm_expected, 1);
}

TEST(ImageDecoderTest, Png) {
  const Bytes rgb = Rgb();
  const Bytes grey = Grey();
  ExpectDecodes(Png(PNG_COLOR_TYPE_RGB, 8, rgb), rgb, 3);
  ExpectDecodes(Png(PNG_COLOR_TYPE_RGB, 8, rgb, {}, PNG_INTERLACE_ADAM7), rgb, 3);
  ExpectDecodes(Png(PNG_COLOR_TYPE_GRAY, 8, grey), grey, 1);
  // Alpha is dropped.
  Bytes rgba;
  for (size_t i = 0; i < rgb.size(); i += 3) rgba.insert(rgba.end(), {rgb[i], rgb[i + 1], rgb[i + 2], uint8_t(i)});
  ExpectDecodes(Png(PNG_COLOR_TYPE_RGB_ALPHA, 8, rgba), rgb, 3);
  // 16-bit: the high byte.
  Bytes rgb16;
  for (uint8_t v : rgb) rgb16.insert(rgb16.end(), {v, uint8_t(255 - v)});
  ExpectDecodes(Png(PNG_COLOR_TYPE_RGB, 16, rgb16), rgb, 3);
  // 4-bit palette, expanded to RGB.
  Bytes palette, indices, expected;
  for (int i = 0; i < 16; ++i) palette.insert(palette.end(), {uint8_t(i * 16), uint8_t(255 - i * 9), uint8_t(i * i)});
  for (int y = 0; y < kH; ++y) {
    Bytes row((kW + 1) / 2, 0);
    for (int x = 0; x < kW; ++x) {
      const int index = (x + 3 * y) % 16;
      row[x / 2] |= index << (x % 2 ? 0 : 4);
      expected.insert(expected.end(), palette.begin() + index * 3, palette.begin() + index * 3 + 3);
    }
    indices.insert(indices.end(), row.begin(), row.end());
  }
  ExpectDecodes(Png(PNG_COLOR_TYPE_PALETTE, 4, indices, palette), expected, 3);
}

TEST(ImageDecoderTest, Jpeg) {
  // Lossy: a smooth image at quality 100 without subsampling comes back
  // within a few levels. BGR and Grayscale are checked exactly against RGB.
  Bytes smooth, smooth_grey;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      smooth.insert(smooth.end(), {uint8_t(40 + 8 * x), uint8_t(60 + 10 * y), uint8_t(200 - 4 * x - 4 * y)});
      smooth_grey.push_back(static_cast<uint8_t>(30 + 6 * x + 5 * y));
    }
  }
  ExpectDecodes(Jpeg(smooth, 3), smooth, 3, 4);
  ExpectDecodes(Jpeg(smooth_grey, 1), smooth_grey, 1, 4);
}

TEST(ImageDecoderTest, Tiff) {
  const Bytes rgb = Rgb();
  const Bytes grey = Grey();
  ExpectDecodes(Tiff(rgb, 3, PHOTOMETRIC_RGB), rgb, 3);
  ExpectDecodes(Tiff(rgb, 3, PHOTOMETRIC_RGB, false, COMPRESSION_LZW), rgb, 3);
  ExpectDecodes(Tiff(grey, 1, PHOTOMETRIC_MINISBLACK), grey, 1);
  // Tiled, and min-is-white: libtiff's RGBA path.
  ExpectDecodes(Tiff(rgb, 3, PHOTOMETRIC_RGB, true), rgb, 3);
  Bytes inverted;
  for (uint8_t g : grey) inverted.push_back(255 - g);
  ExpectDecodes(Tiff(inverted, 1, PHOTOMETRIC_MINISWHITE), grey, 1);
}

TEST(ImageDecoderTest, Webp) {
  const Bytes rgb = Rgb();
  ExpectDecodes(WebpLossless(rgb), rgb, 3);
  // Lossy: the shape and the format relations; values are Pillow's in the suite.
  const Bytes lossy = WebpLossy(rgb);
  absl::StatusOr<Tensor> out = Decode(lossy);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectDecodes(lossy, Pixels(*out), 3);
}

TEST(ImageDecoderTest, Jpeg2000) {
  const Bytes rgb = Rgb();
  const Bytes grey = Grey();
  ExpectDecodes(Jpeg2000(rgb, 3, true), rgb, 3);
  ExpectDecodes(Jpeg2000(rgb, 3, false), rgb, 3);
  ExpectDecodes(Jpeg2000(grey, 1, true), grey, 1);
}

// ---- inference and bad input ----

TEST(ImageDecoderTest, InfersSymbolicSizeAndChannels) {
  for (const auto& [format, channels] : {std::pair<std::string, int64_t>{"RGB", 3}, {"BGR", 3}, {"Grayscale", 1}}) {
    auto types = InferNode(Decoder(format), {TypeInfo::Tensor(DType::kUint8, Shape({Dim::Symbol("n")}))});
    ASSERT_TRUE(types.ok()) << types.status();
    const TypeInfo& t = (*types)[0];
    EXPECT_EQ(t.dtype, DType::kUint8);
    ASSERT_TRUE(t.shape.has_rank());
    ASSERT_EQ(t.shape.rank(), 3);
    EXPECT_TRUE(t.shape[0].is_symbol());
    EXPECT_TRUE(t.shape[1].is_symbol());
    EXPECT_FALSE(t.shape[0] == t.shape[1]) << "height and width are distinct unknowns";
    ASSERT_TRUE(t.shape[2].is_value());
    EXPECT_EQ(t.shape[2].value(), channels);
  }
  EXPECT_FALSE(InferNode(Decoder("YUV"), {TypeInfo::Tensor(DType::kUint8, Shape({Dim(10)}))}).ok());
  EXPECT_FALSE(InferNode(Decoder(), {TypeInfo::Tensor(DType::kFloat, Shape({Dim(10)}))}).ok());
  EXPECT_FALSE(InferNode(Decoder(), {TypeInfo::Tensor(DType::kUint8, Shape({Dim(2), Dim(5)}))}).ok());
}

TEST(ImageDecoderTest, UndecodableDataGivesAnEmptyImage) {
  ExpectUndecodable({}, "empty");
  ExpectUndecodable({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}, "not in a supported image format");
  absl::StatusOr<Tensor> grey = Decode({'h', 'i'}, "Grayscale");
  ASSERT_TRUE(grey.ok()) << grey.status();
  EXPECT_EQ(grey->dims(), (std::vector<int64_t>{0, 0, 1}));
  // A bad node or input type is the model's error, not the data's.
  ExpectErrorNamingNode(Decode(EveryFormat()[0].second, "YUV"), "pixel_format");
  auto wrong_type = RunNode(Decoder(), {Tensor::FromVector<float>({1, 2}, {2})});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("uint8"), std::string::npos) << wrong_type.status();
  // Magic bytes with nothing (or garbage) behind them.
  for (const Bytes& b : std::vector<Bytes>{{'B', 'M'},
                                           {0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3},
                                           {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0},
                                           {'I', 'I', 42, 0, 8, 0, 0, 0},
                                           {'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'E', 'B', 'P'},
                                           {0xFF, 0x4F, 0xFF, 0x51, 0, 0},
                                           {'P', '6', ' ', 'x'}}) {
    ExpectUndecodable(b);
  }
  // Sizes past Pillow's decompression-bomb limit are refused before allocating.
  ExpectUndecodable(Pnm("P5\n100000 100000\n255\n", {1, 2, 3}), "exceeds the limit");
  // BMP that is RLE-compressed, or whose pixels lie past the end.
  Bytes rle = Bmp24(Rgb(), false);
  rle[30] = 1;
  ExpectUndecodable(rle, "compression");
  Bytes far = Bmp24(Rgb(), false);
  far[13] = 0x7F;
  ExpectUndecodable(far, "truncated");
}

TEST(ImageDecoderTest, TruncatedFilesAreUndecodable) {
  for (const auto& [format, file] : EveryFormat()) {
    SCOPED_TRACE(format);
    ASSERT_TRUE(Decode(file).ok()) << Decode(file).status();
    // Every prefix: undecodable or (once only trailing bytes are missing, e.g.
    // a JPEG's EOI) an image; never a crash. Up to half the file, undecodable.
    for (size_t n = 1; n < file.size(); n += n < 64 ? 1 : 7) {
      Bytes prefix(file.begin(), file.begin() + n);
      if (n <= file.size() / 2) {
        ExpectUndecodable(prefix);
      } else {
        EXPECT_TRUE(Decode(prefix).ok());
      }
    }
  }
}

TEST(ImageDecoderTest, MutatedFilesNeverCrash) {
  std::mt19937 rng(7);
  for (const auto& [format, file] : EveryFormat()) {
    SCOPED_TRACE(format);
    int errors = 0;
    for (int trial = 0; trial < 300; ++trial) {
      Bytes b = file;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < flips; ++k) b[4 + rng() % (b.size() - 4)] = static_cast<uint8_t>(rng());
      absl::StatusOr<Tensor> r = Decode(b);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->rank(), 3);
      if (r->num_elements() == 0) ++errors;
    }
    RecordProperty(format + "_errors", errors);
  }
}

}  // namespace
}  // namespace aic
