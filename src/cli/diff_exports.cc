// perfkit diff --to-folded / --to-pprof: the baseline and the first NEW
// recording read into the profile model and written as FlameGraph's
// difffolded pair or as two pprof profiles for `go tool pprof -diff_base`.
#include "cli/diff_exports.h"

#include <fmt/format.h>

#include "cli/profile_options.h"
#include "export/diff_page.h"
#include "export/folded.h"
#include "export/pprof.h"

namespace perfkit::cli {

namespace {

Expected<profile::Profile> read(const std::string& path, bool quiet) {
  ProfileArgs a;
  a.input = path;
  a.quiet = quiet;
  return read_profile(a);
}

template <class Write>
Status write_file(const std::string& path, Write&& write) {
  PK_ASSIGN(auto out, OutputFile::create(path));
  PK_TRY(write(out.writer()));
  return out.commit();
}

// The event of `p` with the most samples, and the same-named one of `q`.
std::pair<std::size_t, std::size_t> events(const profile::Profile& p, const profile::Profile& q) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < p.events.size(); ++i)
    if (p.events[i].samples > p.events[e].samples) e = i;
  std::size_t f = 0;
  for (std::size_t i = 0; i < q.events.size() && !p.events.empty(); ++i)
    if (q.strings.at(q.events[i].name) == p.strings.at(p.events[e].name)) f = i;
  return {e, f};
}

}  // namespace

std::string pprof_base_path(const std::string& out) {
  if (out.ends_with(".pb.gz")) return out.substr(0, out.size() - 6) + ".base.pb.gz";
  return out + ".base";
}

Status write_diff_exports(const DiffExportArgs& a, const std::string& base,
                          const std::string& now) {
  PK_ASSIGN(auto before, read(base, a.quiet));
  PK_ASSIGN(auto after, read(now, a.quiet));
  if (!a.folded.empty()) {
    if (before.events.empty() || after.events.empty())
      return make_error("{}: the recording has no samples", before.events.empty() ? base : now);
    const auto [e, f] = events(before, after);
    exports::FoldedOptions o;
    PK_TRY(write_file(a.folded, [&](FdWriter& w) {
      return exports::write_folded_pair(before, e, after, f, o, w);
    }));
  }
  if (!a.html.empty()) {
    if (before.events.empty() || after.events.empty())
      return make_error("{}: the recording has no samples", before.events.empty() ? base : now);
    const auto [e, f] = events(before, after);
    exports::DiffPageOptions o;
    o.title = fmt::format("perfkit diff: {} \u2192 {}", base, now);
    o.before_file = base;
    o.after_file = now;
    PK_TRY(write_file(
        a.html, [&](FdWriter& w) { return exports::write_diff_page(before, e, after, f, o, w); }));
  }
  if (!a.pprof.empty()) {
    const std::string base_out = pprof_base_path(a.pprof);
    PK_TRY(write_file(a.pprof, [&](FdWriter& w) { return exports::write_pprof(after, w); }));
    PK_TRY(write_file(base_out, [&](FdWriter& w) { return exports::write_pprof(before, w); }));
    if (!a.quiet)
      fmt::print(stderr,
                 "perfkit diff: {} is {}, {} the baseline: go tool pprof -diff_base {} {}\n",
                 a.pprof, now, base_out, base_out, a.pprof);
  }
  return ok();
}

}  // namespace perfkit::cli
