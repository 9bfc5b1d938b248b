// perfkit evlist: the events of a recording, as 'perf evlist' lists them
// (names; -F their sample frequency or period; -v every attr field; -g the
// groups; --trace-fields the tracepoints' fields).
#include <fmt/format.h>

#include "abi/event_names.h"
#include "abi/perf_event.h"
#include "base/output.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "dump/header_print.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "session/session.h"
#include "session/tracepoint.h"

namespace perfkit::cli {

namespace {

constexpr std::uint32_t kTracepoint = 2;        // PERF_TYPE_TRACEPOINT
constexpr std::uint32_t kFirstUserRecord = 64;  // PERF_RECORD_HEADER_ATTR

struct Args {
  std::string input = "perf.data";
  bool freq = false, group = false, verbose = false, trace_fields = false, force = false;
};

// perf evlist names a stream's events from their attrs alone (it reads
// no EVENT_UPDATE), a file's as the file names them.
std::string name_of(session::Session& s, std::size_t i) {
  if (s.reader().is_pipe()) return abi::default_event_name(s.reader().events()[i].attr);
  return s.event_name(i);
}

// "{a,b}" lines for the groups of HEADER_GROUP_DESC; other events alone.
void print_groups(session::Session& s, FdWriter& out) {
  const std::size_t n = s.reader().events().size();
  std::vector<std::uint32_t> members(n, 1);
  std::vector<std::string> names(n);
  std::vector<bool> member(n, false);
  // (a stream's GROUP_DESC comes in a record perf evlist does not read)
  if (auto f = perfdata::parse_features(s.reader().features(), s.reader().swapped());
      f && f->group_desc && !s.reader().is_pipe())
    for (const perfdata::GroupDesc& g : *f->group_desc) {
      if (g.leader_idx >= n || g.nr_members < 2) continue;
      members[g.leader_idx] = g.nr_members;
      names[g.leader_idx] = g.name == "{anon_group}" ? "" : g.name;
      for (std::uint32_t m = 1; m < g.nr_members && g.leader_idx + m < n; ++m)
        member[g.leader_idx + m] = true;
    }
  for (std::size_t i = 0; i < n; ++i) {
    if (member[i]) continue;
    if (members[i] < 2) {
      out.print("{}\n", name_of(s, i));
      continue;
    }
    out.print("{}{{{}", names[i], name_of(s, i));
    for (std::uint32_t m = 1; m < members[i] && i + m < n; ++m) out.print(",{}", name_of(s, i + m));
    out.write("}\n");
  }
}

void print_event(session::Session& s, std::size_t i, const Args& a,
                 session::TracepointFormatter* tp, FdWriter& out) {
  const abi::EventAttr& attr = s.reader().events()[i].attr;
  out.write(name_of(s, i));
  if (a.verbose) {
    const char* sep = ": ";
    dump::for_each_attr_field(attr, [&](std::string_view k, std::string_view v) {
      out.print("{}{}: {}", sep, k, v);
      sep = ", ";
    });
  } else if (a.freq) {
    out.print(": {}={}", (attr.flags & abi::kAttrFreq) ? "sample_freq" : "sample_period",
              attr.sample_period);
  } else if (a.trace_fields) {
    if (attr.type != kTracepoint) {
      out.write(": (not a tracepoint)");
    } else {
      out.write(": trace_fields: ");
      const char* sep = "";
      for (const std::string& f : tp ? tp->field_names(attr.config) : std::vector<std::string>{})
        out.print("{}{}", sep, f), sep = ",";
    }
  }
  out.write("\n");
}

}  // namespace

int cmd_evlist(int argc, char** argv) {
  CLI::App app("List the event names in a perf.data file, as 'perf evlist' does.", "evlist");
  Args a;
  app.add_option("-i,--input", a.input, "Input file name");
  app.add_flag("-F,--freq", a.freq, "Show the sample frequency");
  app.add_flag("-g,--group", a.group, "Show event group information");
  app.add_flag("-v,--verbose", a.verbose, "Show all event attr details");
  app.add_flag("--trace-fields", a.trace_fields, "Show tracepoint fields");
  app.add_flag("-f,--force", a.force, "Don't complain, do it");
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (a.group && (a.verbose || a.freq)) {
    fmt::print(stderr,
               "  Error: --group option is not compatible with other options\n\n\n"
               " Usage: perfkit evlist [<options>]\n\n");
    return kUsageExit;
  }
  session::SessionOptions so;
  so.warn = [](const std::string&) {};
  so.prefetch_kernel = false;  // (no address is resolved)
  auto s = session::Session::open(a.input, so);
  if (!s) {
    fmt::print(stderr, "{}\n", s.error().message());
    return 255;
  }
  // A stream names its events in the records that start it.
  if ((*s)->reader().is_pipe()) {
    perfdata::ReadRecord rec;
    while (true) {
      auto more = (*s)->reader().next(rec);
      if (!more || !*more || rec.view.type < kFirstUserRecord) break;
    }
  }
  std::unique_ptr<session::TracepointFormatter> tp;
  if (a.trace_fields) tp = session::session_tracepoint_formatter(**s, [](const std::string&) {});
  FdWriter out = FdWriter::stdout_writer();
  bool tracepoints = false;
  const std::size_t n = (*s)->reader().events().size();
  for (std::size_t i = 0; i < n; ++i)
    tracepoints |= (*s)->reader().events()[i].attr.type == kTracepoint;
  if (a.group) {
    print_groups(**s, out);
  } else {
    for (std::size_t i = 0; i < n; ++i) print_event(**s, i, a, tp.get(), out);
  }
  if (tracepoints && !a.trace_fields)
    out.write("# Tip: use 'perfkit evlist --trace-fields' to show fields for tracepoint events\n");
  if (auto st = out.flush(); !st) return fail("evlist", st.error());
  return 0;
}

}  // namespace perfkit::cli
