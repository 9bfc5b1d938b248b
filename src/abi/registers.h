// Register and architecture names in perf's words: what perf's dumps and
// script's iregs/uregs print for a sampled register.
#pragma once

#include <string>
#include <string_view>

namespace perfkit::abi {

// perf_env__arch(): a machine name (the ARCH feature, uname -m) normalized
// ("x86_64" -> "x86", "aarch64" -> "arm64", "ppc64le" -> "powerpc", ...).
std::string normalize_arch(std::string_view machine);

// The name perf gives register number `reg` of `arch` (a normalized name):
// "AX", "XMM3", "x29", "ra"; "unknown" for one it has no name for.
std::string_view register_name(std::string_view arch, unsigned reg);

}  // namespace perfkit::abi
