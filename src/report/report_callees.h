// perf report --ignore-callees REGEX: a call-chain frame whose function
// matches becomes the sample's own location, and the frames before it in
// the chain's order (its callees, callee first; its callers with -G or
// --children, which walk the chain caller first) are forgotten. As perf's
// add_callchain_ip, only frames of the recorded chain are matched, not those
// the DWARF unwinder adds, and the last match wins.
#pragma once

#include <regex.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/flat_map.h"
#include "machine/machine.h"
#include "session/session.h"

namespace perfkit::report {

class IgnoreCallees {
 public:
  IgnoreCallees() = default;
  IgnoreCallees(const IgnoreCallees&) = delete;
  IgnoreCallees& operator=(const IgnoreCallees&) = delete;
  ~IgnoreCallees();

  // Errors: a regex that does not compile (perf's words).
  Status setup(const std::string& regex);
  bool active() const { return active_; }
  // `s` itself when no frame of its chain matches; else the sample rooted at
  // the last matching frame (held here until the next call).
  const session::ResolvedSample& apply(const session::ResolvedSample& s, const machine::Machine& m);

 private:
  bool matches(const session::Frame& f, const machine::Machine& m);

  struct Hash {
    std::size_t operator()(std::uint64_t k) const { return k * 0x9E3779B97F4A7C15ull >> 20; }
  };
  regex_t regex_{};
  bool active_ = false;
  FlatMap<std::uint64_t, Hash> cache_;  // (dso, symbol) -> 1 match, 0 not
  session::ResolvedSample cut_;
};

}  // namespace perfkit::report
