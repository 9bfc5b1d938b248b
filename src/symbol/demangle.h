// C++ (Itanium ABI) demangling as perf report shows names: through
// __cxa_demangle, then without the parameter list, the qualifiers after it
// and the return type of template functions, the way libiberty prints a
// name demangled with no options ("ns::K::spin<long>").
#pragma once

#include <string>
#include <string_view>

namespace perfkit::symbol {

// The demangled name, or `name` itself when it is not a mangled C++ name.
std::string demangle(std::string_view name, bool with_params = false);

// Removes "(args) const" and a leading return type from a demangled name.
std::string strip_parameters(std::string_view demangled);

}  // namespace perfkit::symbol
