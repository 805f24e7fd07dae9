//===- Result.h - A value or an error message -------------------*- C++ -*-===//
//
// The host layer is built without exceptions (LLVM's flags); functions that
// can fail on user input return Result<T>: a value, or a message that says
// what was expected, what was found and where.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_RESULT_H
#define HUMMING_QUANT_RESULT_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace humming {

/// Streams `parts` into one string: the building block of messages.
template <typename... Ts> std::string concat(const Ts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// An error message, to build Results from: `return Error{"..."};`.
struct Error {
  std::string message;
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string &error() const { return error_; }

  T &operator*() {
    assert(ok() && "dereferencing a failed Result");
    return *value_;
  }
  const T &operator*() const {
    assert(ok() && "dereferencing a failed Result");
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  T take() { return std::move(**this); }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Success or an error message.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), failed_(true) {}
  static Status success() { return {}; }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &error() const { return error_; }

private:
  std::string error_;
  bool failed_ = false;
};

} // namespace humming

#endif // HUMMING_QUANT_RESULT_H
