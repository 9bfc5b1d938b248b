// read_recording: a program that reads a perf.data file with perfkit's
// library (session/session.h, profile/builder.h) and prints, for each
// event, its samples and the functions most of them landed in.
//
//   read_recording [perf.data]
//
//   event cpu-clock:ppp: 1781 samples
//     98.99%  spin
//      0.51%  handle_softirqs
//
// It builds against an installed perfkit as any other project would:
// find_package(perfkit CONFIG) and perfkit::perfkit (examples/CMakeLists.txt).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "profile/builder.h"
#include "session/session.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "perf.data";
  perfkit::session::SessionOptions so;
  so.warn = [](const std::string&) {};  // missing symbol files: names stay "[unknown]"
  auto session = perfkit::session::Session::open(path, std::move(so));
  if (!session) {
    std::fprintf(stderr, "read_recording: %s\n", session.error().message().c_str());
    return 1;
  }
  auto profile = perfkit::profile::build_profile(**session, {});
  if (!profile) {
    std::fprintf(stderr, "read_recording: %s: %s\n", path.c_str(),
                 profile.error().message().c_str());
    return 1;
  }
  const perfkit::profile::Profile& p = *profile;
  for (std::size_t e = 0; e < p.events.size(); ++e) {
    // Each sample's own function: its stack's first frame (the leaf).
    std::map<std::string, std::uint64_t> self;
    for (const auto& t : p.threads)
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.event[i] == e && t.stack[i] != perfkit::profile::kNone)
          self[std::string(p.func_name(p.stacks[t.stack[i]].frame))] += 1;
    std::printf("event %s: %llu samples\n", std::string(p.strings.at(p.events[e].name)).c_str(),
                static_cast<unsigned long long>(p.events[e].samples));
    std::vector<std::pair<std::uint64_t, std::string>> top;
    for (const auto& [name, n] : self) top.emplace_back(n, name);
    std::sort(top.rbegin(), top.rend());
    for (std::size_t i = 0; i < top.size() && i < 5; ++i)
      std::printf("  %6.2f%%  %s\n", 100.0 * double(top[i].first) / double(p.events[e].samples),
                  top[i].second.c_str());
  }
  return 0;
}
