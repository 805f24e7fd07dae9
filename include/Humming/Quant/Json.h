//===- Json.h - A small, strict JSON reader and writer ----------*- C++ -*-===//
//
// Enough JSON for checkpoint configs, safetensors headers and machine output:
// RFC 8259 values, integers kept exact in int64, objects in file order.
// Parse errors give the line and column; nesting is limited so malicious
// input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_JSON_H
#define HUMMING_QUANT_JSON_H

#include "Humming/Quant/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace humming {

class Json {
public:
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };

  Json() = default;
  static Json null() { return Json(); }
  static Json boolean(bool b);
  static Json number(double d);
  static Json integer(int64_t i);
  static Json string(std::string s);
  static Json array(std::vector<Json> items = {});
  static Json object(std::vector<std::pair<std::string, Json>> members = {});

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  /// A number without fraction or exponent that fits int64.
  bool isInteger() const { return kind_ == Kind::Number && isInt_; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  bool asBool() const { return bool_; }
  double asNumber() const { return isInt_ ? double(int_) : number_; }
  int64_t asInteger() const { return int_; }
  const std::string &asString() const { return string_; }
  const std::vector<Json> &items() const { return items_; }
  const std::vector<std::pair<std::string, Json>> &members() const {
    return members_;
  }

  /// Member `key` of an object, or null when absent or not an object.
  const Json *get(std::string_view key) const;
  /// Appends to an array / object.
  void push(Json v) { items_.push_back(std::move(v)); }
  void set(std::string key, Json v);
  /// Appends a member without looking for an existing one.
  void append(std::string key, Json v) {
    members_.emplace_back(std::move(key), std::move(v));
  }

  /// "null", "a boolean", "a number", "a string", "an array", "an object".
  const char *kindName() const;

  /// Compact serialisation (indent < 0) or pretty with `indent` spaces.
  std::string dump(int indent = -1) const;

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInt_ = false;
  double number_ = 0;
  int64_t int_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

/// Parses one JSON value (surrounded by whitespace only). Errors read
/// "line L, column C: expected ..., got ...".
Result<Json> parseJson(std::string_view text);

} // namespace humming

#endif // HUMMING_QUANT_JSON_H
