#include "support/json.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace aic {

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

void JsonWriter::Key(const std::string& k) {
  Comma();
  Newline();
  out_ += JsonQuote(k) + ": ";
  after_key_ = true;
}

void JsonWriter::Raw(const std::string& v) {
  if (!after_key_) {
    Comma();
    Newline();
  }
  out_ += v;
  after_key_ = false;
  first_ = false;
}

void JsonWriter::InlineDoubles(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&s, i ? ", " : "", JsonNumber(v[i]));
  Raw(s + "]");
}

void JsonWriter::InlineInts(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&s, i ? ", " : "", v[i]);
  Raw(s + "]");
}

void JsonWriter::InlineStrings(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&s, i ? ", " : "", JsonQuote(v[i]));
  Raw(s + "]");
}

void JsonWriter::Open(char c) {
  if (!after_key_) {
    Comma();
    Newline();
  }
  out_ += c;
  after_key_ = false;
  ++depth_;
  first_ = true;
}

void JsonWriter::Close(char c) {
  --depth_;
  if (!first_) Newline();
  out_ += c;
  first_ = false;
}

void JsonWriter::Newline() {
  if (out_.empty()) return;
  if (one_line_) {
    out_ += " ";
    return;
  }
  out_ += "\n" + std::string(static_cast<size_t>(depth_) * 2, ' ');
}

}  // namespace aic
