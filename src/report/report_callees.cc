#include "report/report_callees.h"

#include <string_view>

namespace perfkit::report {

IgnoreCallees::~IgnoreCallees() {
  if (active_) regfree(&regex_);
}

Status IgnoreCallees::setup(const std::string& regex) {
  if (regex.empty()) return ok();
  if (int rc = regcomp(&regex_, regex.c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
    char why[256];
    regerror(rc, &regex_, why, sizeof why);
    return make_error("Invalid --ignore-callees regex: {}\n{}", regex, why);
  }
  active_ = true;
  return ok();
}

bool IgnoreCallees::matches(const session::Frame& f, const machine::Machine& m) {
  if (f.loc.symbol < 0 || !f.loc.dso || f.inlined) return false;
  const auto k =
      static_cast<std::uint64_t>(f.loc.dso->index) << 32 | static_cast<std::uint32_t>(f.loc.symbol);
  std::uint32_t v = cache_.find(k);
  if (v == cache_.kNone) {
    const std::string name(m.symbol_name(f.loc));
    v = regexec(&regex_, name.c_str(), 0, nullptr, 0) == 0 ? 1 : 0;
    cache_.insert(k, v);
  }
  return v == 1;
}

const session::ResolvedSample& IgnoreCallees::apply(const session::ResolvedSample& s,
                                                    const machine::Machine& m) {
  std::size_t root = s.callchain.size();
  for (std::size_t i = 0; i < s.callchain.size(); ++i) {
    if (i >= s.unwound_begin && i < s.unwound_end) continue;  // not the recorded chain's
    if (matches(s.callchain[i], m)) root = i;
  }
  if (root == s.callchain.size()) return s;
  cut_ = s;
  cut_.loc = s.callchain[root].loc;
  cut_.callchain = s.callchain.subspan(root);
  cut_.unwound_begin = s.unwound_begin > root ? s.unwound_begin - root : 0;
  cut_.unwound_end = s.unwound_end > root ? s.unwound_end - root : 0;
  return cut_;
}

}  // namespace perfkit::report
