#include "symbol/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace perfkit::symbol {

namespace {

bool is_open(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool is_close(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

bool is_op_char(char c) {
  return c == '<' || c == '>' || c == '=' || c == '-' || c == '!' || c == '+' || c == '*' ||
         c == '/' || c == '%' || c == '^' || c == '&' || c == '|' || c == '~' || c == ',';
}

// The length of the C++ operator token at the start of `s` (longest match:
// "operator-<int*>" is operator- of a template, which the demangler writes
// as "operator< <int>" where the operator itself is '<').
std::size_t operator_token(std::string_view s) {
  static constexpr std::string_view kTokens[] = {
      "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
      "--",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "->", "<",  ">",  "+",
      "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  ","};
  for (std::string_view t : kTokens)
    if (s.starts_with(t)) return t.size();
  return 0;
}

// Whether position `i` is a character of an operator's name ("operator<"),
// not a bracket.
bool operator_char(std::string_view s, std::size_t i) {
  std::size_t k = i;
  while (k > 0 && is_op_char(s[k - 1])) --k;
  if (k < 8 || s.substr(k - 8, 8) != "operator") return false;
  return i < k + operator_token(s.substr(k));
}

// Whether `s` ends with an operator's name ("operator", "operator<").
bool ends_with_operator(std::string_view s) {
  std::size_t k = s.size();
  while (k > 0 && is_op_char(s[k - 1])) --k;
  return k >= 8 && s.substr(k - 8, 8) == "operator" && k + operator_token(s.substr(k)) == s.size();
}

}  // namespace

std::string strip_parameters(std::string_view s) {
  // Cut the last top-level parenthesised group and what follows it.
  std::size_t end = s.size();
  while (end > 0 && s[end - 1] != ')') --end;
  if (end == 0) return std::string(s);
  int depth = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = end; i-- > 0;) {
    char c = s[i];
    if ((c == '<' || c == '>') && operator_char(s, i)) continue;
    if (is_close(c)) ++depth;
    if (is_open(c)) {
      --depth;
      if (depth == 0) {
        open = i;
        break;
      }
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(s);
  std::string_view name = s.substr(0, open);
  // A return type stands before the name, split at a top-level space.
  depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if ((c == '<' || c == '>') && operator_char(name, i)) continue;
    if (is_close(c)) ++depth;
    if (is_open(c)) --depth;
    if (c == ' ' && depth == 0) {
      std::string_view before = name.substr(0, i);
      // "operator new", and "operator< <T>" (a template of operator<)
      if (ends_with_operator(before)) continue;
      return std::string(name.substr(i + 1));
    }
  }
  return std::string(name);
}

std::string demangle(std::string_view name, bool with_params) {
  if (!name.starts_with("_Z")) return std::string(name);
  std::string z(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return z;
  std::string_view d = out.get();
  // libiberty prints thunks and other special names whole.
  if (d.starts_with("virtual thunk to ") || d.starts_with("non-virtual thunk to ") ||
      d.starts_with("covariant return thunk to "))
    return std::string(d);
  return with_params ? std::string(out.get()) : strip_parameters(out.get());
}

}  // namespace perfkit::symbol
