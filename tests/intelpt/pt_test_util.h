// Helpers shared by the Intel PT tests that use pt-synth ground truth.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pt_synth/pt_synth.h"
#include "support/test_support.h"

namespace perfkit::pttest {

inline std::string ptflow(bool static_link) {
  return std::string(PT_WORKLOAD_DIR) + (static_link ? "/ptflow-static" : "/ptflow");
}

// Each program is traced once per test binary (single-stepping is slow);
// option sets re-encode the same execution.
inline const pt_synth::PtSynthResult& traced(const std::vector<std::string>& argv) {
  static std::map<std::vector<std::string>, pt_synth::PtSynthResult> cache;
  auto it = cache.find(argv);
  if (it != cache.end()) return it->second;
  pt_synth::PtSynthOptions o;
  auto r = pt_synth::pt_synth_run(argv, o);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return cache.emplace(argv, r ? std::move(*r) : pt_synth::PtSynthResult{}).first->second;
}

inline pt_synth::PtSynthResult reencode(const pt_synth::PtSynthResult& base,
                                        const pt_synth::PtSynthOptions& o) {
  pt_synth::PtSynthResult r;
  r.trace = base.trace;
  r.argv = base.argv;
  r.encoded = intelpt::encode_trace(r.trace.exec, o.encode);
  pt_synth::pt_synth_configure(r, o);
  return r;
}

template <class T>
void expect_same_seq(const std::vector<T>& want, const std::vector<T>& got, const std::string& who,
                     std::string (*show)(const T&)) {
  std::size_t n = std::min(want.size(), got.size());
  std::size_t i = 0;
  while (i < n && want[i] == got[i]) ++i;
  if (i < n || want.size() != got.size()) {
    std::string ctx;
    for (std::size_t k = i >= 3 ? i - 3 : 0; k < std::min(i + 3, std::max(want.size(), got.size()));
         ++k)
      ctx += "\n  [" + std::to_string(k) + "] want " + (k < want.size() ? show(want[k]) : "-") +
             "  got " + (k < got.size() ? show(got[k]) : "-");
    ADD_FAILURE() << who << ": first difference at " << i << " of " << want.size() << " (got "
                  << got.size() << ")" << ctx;
  }
}

inline std::string show_hex(const std::uint64_t& v) { return fmt::format("{:#x}", v); }
inline std::string show_str(const std::string& s) { return s; }

inline std::vector<std::uint64_t> parse_ips(const std::string& text) {
  std::vector<std::uint64_t> ips;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find_first_not_of(' ');
    if (p == std::string::npos) continue;
    ips.push_back(std::stoull(line.substr(p), nullptr, 16));
  }
  return ips;
}

}  // namespace perfkit::pttest
