// One JSON writer for everything the project prints as JSON (the report,
// `opt --stats`, `bench --json`): strings escaped once, numbers with 6
// significant digits (non-finite ones as null), keys in the order written.
// Pretty by default (objects and arrays indented by two spaces), or on one
// line for output that scripts read line by line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aic {

// `s` as a JSON string literal (quotes included; UTF-8 passes through).
std::string JsonQuote(const std::string& s);
// `v` with 6 significant digits; "null" when not finite.
std::string JsonNumber(double v);

class JsonWriter {
 public:
  explicit JsonWriter(bool one_line = false) : one_line_(one_line) {}
  std::string str() const { return out_; }

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(const std::string& k);
  // An already formatted value.
  void Raw(const std::string& v);
  void String(const std::string& v) { Raw(JsonQuote(v)); }
  void Int(int64_t v) { Raw(std::to_string(v)); }
  void Double(double v) { Raw(JsonNumber(v)); }
  void Bool(bool v) { Raw(v ? "true" : "false"); }
  void Null() { Raw("null"); }
  // A key and its value.
  void Field(const std::string& k, const std::string& v) {
    Key(k);
    String(v);
  }
  void Field(const std::string& k, const char* v) {
    Key(k);
    String(v);
  }
  void Field(const std::string& k, int64_t v) {
    Key(k);
    Int(v);
  }
  void Field(const std::string& k, int v) {
    Key(k);
    Int(v);
  }
  void Field(const std::string& k, double v) {
    Key(k);
    Double(v);
  }
  void Field(const std::string& k, bool v) {
    Key(k);
    Bool(v);
  }
  // One-line arrays for long numeric lists (singular values, shapes).
  void InlineDoubles(const std::vector<double>& v);
  void InlineInts(const std::vector<int64_t>& v);
  void InlineStrings(const std::vector<std::string>& v);

 private:
  void Open(char c);
  void Close(char c);
  void Comma() {
    if (!first_) out_ += ",";
  }
  void Newline();

  bool one_line_;
  std::string out_;
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace aic
