#include "onnx_io/npy.h"

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "support/mapped_file.h"

namespace aic {

namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};

constexpr NpyType kTypes[] = {
    {"<f4", DType::kFloat},  {"<f8", DType::kDouble}, {"<f2", DType::kFloat16},
    {"|i1", DType::kInt8},   {"<i2", DType::kInt16},  {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},  {"|u1", DType::kUint8},  {"<u2", DType::kUint16},
    {"<u4", DType::kUint32}, {"<u8", DType::kUint64}, {"|b1", DType::kBool},
    {"<c8", DType::kComplex64}, {"<c16", DType::kComplex128},
};

// Value of `key` in the header dict text, e.g. 'descr': '<f4'.
absl::StatusOr<std::string> HeaderField(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("npy header lacks ", key));
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return absl::InvalidArgumentError("bad npy header");
  size_t start = colon + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start >= header.size()) return absl::InvalidArgumentError("bad npy header");
  char open = header[start];
  char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  size_t end = header.find(close, start + 1);
  if (end == std::string::npos) return absl::InvalidArgumentError("bad npy header");
  if (open == '(' || open == '\'') return header.substr(start + 1, end - start - 1);
  return header.substr(start, end - start);
}

// numpy's fixed-width unicode ('<U<n>': n UTF-32 code units per element,
// zero-padded) is the string form every numpy reads without pickle; ONNX
// strings are UTF-8 (a byte that is not part of valid UTF-8 is written as
// the code point of its value, 0-255, rather than refused).
std::u32string Utf8ToUtf32(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xe ? 2 : (b >> 3) == 0x1e ? 3 : -1;
    char32_t cp = extra == 0 ? b : extra == 1 ? (b & 0x1f) : extra == 2 ? (b & 0x0f) : (b & 0x07);
    bool valid = extra >= 0 && i + static_cast<size_t>(extra) < s.size();
    for (int k = 1; valid && k <= extra; ++k) {
      auto c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      valid = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (!valid) {
      out.push_back(b);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

std::string Utf32ToUtf8(const char32_t* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && p[i] != 0; ++i) {
    char32_t c = p[i];
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
  return out;
}

std::string NpyHeader(const std::string& descr, const std::vector<int64_t>& dims) {
  // Python tuple syntax: "()", "(5,)", "(2, 3)".
  std::string shape = absl::StrJoin(dims, ", ");
  if (dims.size() == 1) shape += ",";
  std::string header =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) {
    return absl::InvalidArgumentError("not a .npy file");
  }
  uint8_t major = p[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = p[8] | (p[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return absl::InvalidArgumentError("truncated .npy header");
    header_len = p[8] | (p[9] << 8) | (p[10] << 16) | (static_cast<size_t>(p[11]) << 24);
    offset = 12;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unsupported .npy version ", major));
  }
  if (offset + header_len > size) return absl::InvalidArgumentError("truncated .npy header");
  std::string header(reinterpret_cast<const char*>(p + offset), header_len);
  AIC_ASSIGN_OR_RETURN(std::string descr, HeaderField(header, "descr"));
  AIC_ASSIGN_OR_RETURN(std::string fortran, HeaderField(header, "fortran_order"));
  AIC_ASSIGN_OR_RETURN(std::string shape_text, HeaderField(header, "shape"));
  if (absl::StripAsciiWhitespace(fortran) != "False") {
    return absl::UnimplementedError("Fortran-order .npy files are not supported");
  }
  if (descr == "<b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  bool unicode = descr.size() > 2 && descr.compare(0, 2, "<U") == 0;
  int64_t width = 0;
  if (unicode && (!absl::SimpleAtoi(descr.substr(2), &width) || width <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("bad .npy dtype '", descr, "'"));
  }
  DType dtype = unicode ? DType::kString : DType::kUndefined;
  for (const NpyType& t : kTypes) {
    if (descr == t.descr) dtype = t.dtype;
  }
  if (dtype == DType::kUndefined) {
    return absl::UnimplementedError(absl::StrCat(".npy dtype '", descr, "' is not supported"));
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(shape_text, ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d) || d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad .npy shape (", shape_text, ")"));
    }
    dims.push_back(d);
  }
  size_t data_offset = offset + header_len;
  Tensor t(dtype, dims);
  if (unicode) {
    size_t count = static_cast<size_t>(t.num_elements()), stride = static_cast<size_t>(width) * 4;
    if (stride != 0 && count > (size - data_offset) / stride) {
      return absl::InvalidArgumentError("truncated .npy data");
    }
    std::vector<char32_t> units(static_cast<size_t>(width));
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(units.data(), p + data_offset + i * stride, stride);
      t.mutable_strings()[i] = Utf32ToUtf8(units.data(), units.size());
    }
    return t;
  }
  if (data_offset + t.byte_size() > size) return absl::InvalidArgumentError("truncated .npy data");
  if (t.byte_size() > 0) std::memcpy(t.mutable_raw_data(), p + data_offset, t.byte_size());
  return t;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  AIC_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  auto t = ParseNpy(file->data(), file->size());
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  return t;
}

std::string SerializeNpy(const Tensor& t) {
  if (t.dtype() == DType::kString) {
    std::vector<std::u32string> wide;
    size_t width = 1;  // numpy's narrowest unicode dtype is <U1
    for (const std::string& s : t.strings()) {
      wide.push_back(Utf8ToUtf32(s));
      width = std::max(width, wide.back().size());
    }
    std::string out = NpyHeader(absl::StrCat("<U", width), t.dims());
    for (const std::u32string& w : wide) {
      std::u32string padded = w;
      padded.resize(width, U'\0');
      out.append(reinterpret_cast<const char*>(padded.data()), width * 4);
    }
    return out;
  }
  const char* descr = nullptr;
  for (const NpyType& nt : kTypes) {
    if (nt.dtype == t.dtype()) descr = nt.descr;
  }
  AIC_CHECK(descr != nullptr, "no .npy dtype for ", DTypeName(t.dtype()));
  std::string out = NpyHeader(descr, t.dims());
  out.append(static_cast<const char*>(t.raw_data()), t.byte_size());
  return out;
}

absl::Status WriteNpy(const Tensor& t, const std::string& path) {
  bool supported = t.dtype() == DType::kString;
  for (const NpyType& nt : kTypes) supported |= nt.dtype == t.dtype();
  if (!supported) {
    return absl::UnimplementedError(
        absl::StrCat("cannot write ", DTypeName(t.dtype()), " tensors as .npy"));
  }
  std::string bytes = SerializeNpy(t);
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot write"));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": cannot rename into place"));
  }
  return absl::OkStatus();
}

}  // namespace aic
