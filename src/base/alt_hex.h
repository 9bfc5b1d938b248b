// AltHex: a number as printf's "%#lx" prints it, "0x1f", and "0" (no
// prefix) for zero: how perf's dumps and script's side-band lines show
// addresses and flags.
#pragma once

#include <fmt/format.h>

#include <cstdint>

namespace perfkit {

struct AltHex {
  std::uint64_t v;
};

}  // namespace perfkit

template <>
struct fmt::formatter<perfkit::AltHex> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  template <class Ctx>
  auto format(perfkit::AltHex h, Ctx& ctx) const {
    if (h.v == 0) return fmt::format_to(ctx.out(), "0");
    return fmt::format_to(ctx.out(), "{:#x}", h.v);
  }
};
