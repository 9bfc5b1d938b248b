// Error and Expected<T>: how the library reports failure. The library never
// throws and never exits; every fallible function returns Expected<T> and the
// CLI decides what to print and which exit code to use.
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace perfkit {

// A failure with a message meant for a user: it names what was wrong and where
// (file offset, event name, path). Context is prepended as layers unwind.
class Error {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}

  const std::string& message() const { return message_; }

  // Returns this error with "context: " in front, e.g. the file name.
  Error with_context(std::string_view context) const& {
    return Error(fmt::format("{}: {}", context, message_));
  }

 private:
  std::string message_;
};

template <class... Args>
Error make_error(fmt::format_string<Args...> format, Args&&... args) {
  return Error(fmt::format(format, std::forward<Args>(args)...));
}

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  template <class U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Error>) Expected(U&& value)
      : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return *std::get_if<0>(&v_); }
  const T& value() const& { return *std::get_if<0>(&v_); }
  T&& value() && { return std::move(*std::get_if<0>(&v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(value()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return *std::get_if<1>(&v_); }
  Error&& error() && { return std::move(*std::get_if<1>(&v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)) {}  // NOLINT

  bool has_value() const { return !error_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const Error& error() const& { return *error_; }
  Error&& error() && { return std::move(*error_); }

 private:
  std::optional<Error> error_;
};

using Status = Expected<void>;

inline Status ok() { return {}; }

}  // namespace perfkit

// Propagates an error from an Expected expression; evaluates to nothing.
#define PK_TRY(expr)                                                                             \
  do {                                                                                           \
    if (auto pk_try_result_ = (expr); !pk_try_result_) return std::move(pk_try_result_).error(); \
  } while (0)

#define PK_CONCAT_INNER(a, b) a##b
#define PK_CONCAT(a, b) PK_CONCAT_INNER(a, b)

// PK_ASSIGN(auto x, expr): declares x from the value of an Expected, or returns
// its error from the enclosing function.
#define PK_ASSIGN(decl, expr) PK_ASSIGN_IMPL(PK_CONCAT(pk_assign_, __LINE__), decl, expr)
#define PK_ASSIGN_IMPL(tmp, decl, expr)    \
  auto tmp = (expr);                       \
  if (!tmp) return std::move(tmp).error(); \
  decl = std::move(*tmp)
