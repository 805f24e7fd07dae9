//===- Json.cpp - A small, strict JSON reader and writer ------------------===//

#include "Humming/Quant/Json.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_set>

namespace humming {

Json Json::boolean(bool b) {
  Json j;
  j.kind_ = Kind::Bool;
  j.bool_ = b;
  return j;
}
Json Json::number(double d) {
  Json j;
  j.kind_ = Kind::Number;
  j.number_ = d;
  return j;
}
Json Json::integer(int64_t i) {
  Json j;
  j.kind_ = Kind::Number;
  j.isInt_ = true;
  j.int_ = i;
  return j;
}
Json Json::string(std::string s) {
  Json j;
  j.kind_ = Kind::String;
  j.string_ = std::move(s);
  return j;
}
Json Json::array(std::vector<Json> items) {
  Json j;
  j.kind_ = Kind::Array;
  j.items_ = std::move(items);
  return j;
}
Json Json::object(std::vector<std::pair<std::string, Json>> members) {
  Json j;
  j.kind_ = Kind::Object;
  j.members_ = std::move(members);
  return j;
}

const Json *Json::get(std::string_view key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &[k, v] : members_)
    if (k == key)
      return &v;
  return nullptr;
}

void Json::set(std::string key, Json v) {
  for (auto &[k, old] : members_)
    if (k == key) {
      old = std::move(v);
      return;
    }
  members_.emplace_back(std::move(key), std::move(v));
}

const char *Json::kindName() const {
  switch (kind_) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

namespace {
/// The length of the well-formed UTF-8 sequence `t` starts with (RFC 3629:
/// no overlong forms, no surrogates, nothing past U+10FFFF), 0 if none.
size_t utf8Length(std::string_view t) {
  auto byte = [&](size_t i) { return i < t.size() ? (unsigned char)t[i] : 0u; };
  unsigned b0 = byte(0);
  auto cont = [&](size_t i) { return (byte(i) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF)
    return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/// A JSON string literal of `s`; a byte that starts no well-formed UTF-8
/// sequence (a path or a message from outside) becomes U+FFFD, so that the
/// document stays valid UTF-8.
void escape(std::string &out, const std::string &s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) {
      size_t n = utf8Length(std::string_view(s).substr(i));
      if (n == 0) {
        out += "\\ufffd";
        continue;
      }
      out.append(s, i, n);
      i += n - 1;
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out.push_back(char(c));
      }
    }
  }
  out.push_back('"');
}

void dumpTo(std::string &out, const Json &j, int indent, int depth) {
  auto newline = [&](int d) {
    if (indent < 0)
      return;
    out.push_back('\n');
    out.append(size_t(indent * d), ' ');
  };
  switch (j.kind()) {
  case Json::Kind::Null:
    out += "null";
    return;
  case Json::Kind::Bool:
    out += j.asBool() ? "true" : "false";
    return;
  case Json::Kind::Number: {
    if (j.isInteger()) {
      out += std::to_string(j.asInteger());
      return;
    }
    double d = j.asNumber();
    if (!std::isfinite(d)) {
      out += "null";
      return;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    out += buf;
    // A number that is not an integer stays one when read back: 5.0 and
    // -0.0 would read as the integers 5 and 0 (and -0.0 dump as "0").
    if (!std::strpbrk(buf, ".e"))
      out += ".0";
    return;
  }
  case Json::Kind::String:
    escape(out, j.asString());
    return;
  case Json::Kind::Array: {
    out.push_back('[');
    bool first = true;
    for (const Json &v : j.items()) {
      if (!first)
        out.push_back(',');
      first = false;
      newline(depth + 1);
      dumpTo(out, v, indent, depth + 1);
    }
    if (!j.items().empty())
      newline(depth);
    out.push_back(']');
    return;
  }
  case Json::Kind::Object: {
    out.push_back('{');
    bool first = true;
    for (const auto &[k, v] : j.members()) {
      if (!first)
        out.push_back(',');
      first = false;
      newline(depth + 1);
      escape(out, k);
      out += indent < 0 ? ":" : ": ";
      dumpTo(out, v, indent, depth + 1);
    }
    if (!j.members().empty())
      newline(depth);
    out.push_back('}');
    return;
  }
  }
}

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Json> parseDocument() {
    skipSpace();
    Json value;
    if (!parseValue(value, 0))
      return Error{error_};
    skipSpace();
    if (pos_ != text_.size()) {
      fail("expected the end of the input");
      return Error{error_};
    }
    return value;
  }

private:
  static constexpr int kMaxDepth = 200;

  bool fail(const std::string &what) {
    if (!error_.empty())
      return false;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::ostringstream os;
    os << "line " << line << ", column " << col << ": " << what << ", got ";
    if (pos_ >= text_.size()) {
      os << "the end of the input";
    } else if (unsigned char c = (unsigned char)text_[pos_]; c < 0x20 || c >= 0x7f) {
      // Not echoed raw: messages go into JSON reports and terminals.
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
      os << buf;
    } else {
      os << "'" << text_[pos_] << "'";
    }
    error_ = os.str();
    return false;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return fail("expected '" + std::string(word) + "'");
    pos_ += word.size();
    return true;
  }

  bool parseValue(Json &out, int depth) {
    if (depth > kMaxDepth)
      return fail("expected at most 200 levels of nesting");
    if (pos_ >= text_.size())
      return fail("expected a value");
    char c = text_[pos_];
    switch (c) {
    case 'n':
      if (!literal("null"))
        return false;
      out = Json::null();
      return true;
    case 't':
      if (!literal("true"))
        return false;
      out = Json::boolean(true);
      return true;
    case 'f':
      if (!literal("false"))
        return false;
      out = Json::boolean(false);
      return true;
    case '"': {
      std::string s;
      if (!parseString(s))
        return false;
      out = Json::string(std::move(s));
      return true;
    }
    case '[':
      return parseArray(out, depth);
    case '{':
      return parseObject(out, depth);
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail("expected a value");
    }
  }

  bool parseNumber(Json &out) {
    size_t start = pos_;
    bool isInt = true;
    if (text_[pos_] == '-')
      ++pos_;
    if (pos_ >= text_.size() || !std::isdigit((unsigned char)text_[pos_]))
      return fail("expected a digit");
    if (text_[pos_] == '0')
      ++pos_;
    else
      while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_]))
        ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      isInt = false;
      ++pos_;
      if (pos_ >= text_.size() || !std::isdigit((unsigned char)text_[pos_]))
        return fail("expected a digit after '.'");
      while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_]))
        ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      isInt = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (pos_ >= text_.size() || !std::isdigit((unsigned char)text_[pos_]))
        return fail("expected a digit in the exponent");
      while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_]))
        ++pos_;
    }
    std::string token(text_.substr(start, pos_ - start));
    if (isInt) {
      errno = 0;
      char *end = nullptr;
      long long v = std::strtoll(token.c_str(), &end, 10);
      if (errno == 0 && end && *end == 0) {
        out = Json::integer(v);
        return true;
      }
    }
    out = Json::number(std::strtod(token.c_str(), nullptr));
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t cp) {
    if (cp < 0x80) {
      s.push_back(char(cp));
    } else if (cp < 0x800) {
      s.push_back(char(0xC0 | (cp >> 6)));
      s.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s.push_back(char(0xE0 | (cp >> 12)));
      s.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      s.push_back(char(0xF0 | (cp >> 18)));
      s.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      s.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  bool parseHex4(uint32_t &cp) {
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= text_.size() || !std::isxdigit((unsigned char)text_[pos_]))
        return fail("expected 4 hex digits after '\\u'");
      char c = text_[pos_++];
      cp = cp * 16 + uint32_t(std::isdigit((unsigned char)c)
                                  ? c - '0'
                                  : std::tolower((unsigned char)c) - 'a' + 10);
    }
    return true;
  }

  bool parseString(std::string &s) {
    ++pos_; // opening quote
    while (true) {
      if (pos_ >= text_.size())
        return fail("expected a closing '\"'");
      unsigned char c = (unsigned char)text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail("expected no control characters in a string");
      if (c >= 0x80) {
        size_t n = utf8Length(text_.substr(pos_));
        if (n == 0)
          return fail("expected valid UTF-8 in a string");
        s.append(text_.substr(pos_, n));
        pos_ += n;
        continue;
      }
      if (c != '\\') {
        s.push_back(char(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size())
        return fail("expected an escape character");
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        s.push_back(e);
        break;
      case 'b':
        s.push_back('\b');
        break;
      case 'f':
        s.push_back('\f');
        break;
      case 'n':
        s.push_back('\n');
        break;
      case 'r':
        s.push_back('\r');
        break;
      case 't':
        s.push_back('\t');
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) { // surrogate pair
          uint32_t lo;
          if (text_.substr(pos_, 2) != "\\u")
            return fail("expected a low surrogate '\\u'");
          pos_ += 2;
          if (!parseHex4(lo))
            return false;
          if (lo < 0xDC00 || lo >= 0xE000)
            return fail("expected a low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          pos_ -= 6;
          return fail("expected a high surrogate before a low one");
        }
        appendUtf8(s, cp);
        break;
      }
      default:
        --pos_;
        return fail("expected a valid escape");
      }
    }
  }

  bool parseArray(Json &out, int depth) {
    ++pos_;
    out = Json::array();
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      Json item;
      if (!parseValue(item, depth + 1))
        return false;
      out.push(std::move(item));
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parseObject(Json &out, int depth) {
    ++pos_;
    out = Json::object();
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    std::unordered_set<std::string> seen;
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        return fail("expected a member name");
      size_t keyPos = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      if (!seen.insert(key).second) {
        pos_ = keyPos;
        return fail("expected unique member names ('" + key + "' repeats)");
      }
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return fail("expected ':'");
      ++pos_;
      skipSpace();
      Json value;
      if (!parseValue(value, depth + 1))
        return false;
      out.append(std::move(key), std::move(value));
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};
} // namespace

std::string Json::dump(int indent) const {
  std::string out;
  dumpTo(out, *this, indent, 0);
  return out;
}

Result<Json> parseJson(std::string_view text) {
  return Parser(text).parseDocument();
}

} // namespace humming
