// perfkit data convert: a recording written in the formats other tools read,
// from the profile model (perf data convert's command, with perfkit's
// targets beside perf's).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/profile_options.h"
#include "cli/progress.h"
#include "export/chrome.h"
#include "export/firefox.h"
#include "export/flame_tree.h"
#include "export/folded.h"
#include "export/gzip.h"
#include "export/perf_json.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "export/svg.h"

namespace perfkit::cli {

namespace {

struct ConvertArgs {
  ProfileArgs profile;
  std::string to_json, to_firefox, to_folded, to_pprof, to_flamegraph, to_speedscope, to_chrome,
      folded_weight = "samples", event, to_ctf;
  std::string flame_title = "Flame Graph";
  bool inverted = false, all = false, tod = false;
  bool perfkit_target() const {
    return !to_folded.empty() || !to_pprof.empty() || !to_flamegraph.empty() ||
           !to_speedscope.empty() || !to_chrome.empty() || !to_firefox.empty();
  }
  bool force = false;
};

// The index of the event named `name` ("" for the first).
Expected<std::size_t> event_index(const profile::Profile& p, const std::string& name) {
  if (p.events.empty()) return make_error("the recording has no samples");
  if (name.empty()) {
    // The first event with samples: an Intel PT recording's first is the
    // trace's own (intel_pt//), and its samples are --itrace's events.
    for (std::size_t i = 0; i < p.events.size(); ++i)
      if (p.events[i].samples) return i;
    return std::size_t{0};
  }
  for (std::size_t i = 0; i < p.events.size(); ++i)
    if (p.strings.at(p.events[i].name) == name) return i;
  std::string known;
  for (const auto& e : p.events) known += fmt::format(" '{}'", p.strings.at(e.name));
  return make_error("no event '{}' in the recording (it has{})", name, known);
}

// Writes `path` with `write` (under a temporary name until it succeeds).
// Writes `path` with `write` (under a temporary name until it succeeds);
// with `gzip_by_name`, a path ending in ".gz" is written gzipped (the text
// goes to an unnamed temporary file first).
template <class Write>
Status write_output(const std::string& path, Write&& write, bool gzip_by_name = false) {
  PK_ASSIGN(auto out, OutputFile::create(path));
  if (!gzip_by_name || !path.ends_with(".gz")) {
    PK_TRY(write(out.writer()));
    return out.commit();
  }
  std::FILE* text = std::tmpfile();
  if (!text) return make_error("{}: cannot make a temporary file: {}", path, std::strerror(errno));
  FdWriter w(::fileno(text), path, false);
  Status st = write(w);
  if (st) st = w.flush();
  if (st) st = exports::gzip_fd(::fileno(text), path, out.writer());
  std::fclose(text);
  PK_TRY(st);
  return out.commit();
}

// The wall-clock time of the first sample, ms since the epoch, as far as
// the recording tells: perf writes the file until the recording ends, so
// its modification time less the samples' span (0 for a stream).
double start_time_ms(const std::string& input, const profile::Summary& s) {
  struct stat st;
  if (input == "-" || stat(input.c_str(), &st) != 0 || s.last_time < s.first_time) return 0;
  const double mtime_ms = double(st.st_mtim.tv_sec) * 1e3 + double(st.st_mtim.tv_nsec) / 1e6;
  return mtime_ms - double(s.last_time - s.first_time) / 1e6;
}

Status write_folded(const ConvertArgs& a, const profile::Profile& p) {
  exports::FoldedOptions fo;
  PK_ASSIGN(fo.event, event_index(p, a.event));
  fo.weight_period = a.folded_weight == "period";
  fo.threads = jobs_to_use(a.profile.jobs);
  if (p.events.size() > 1 && a.event.empty() && !a.profile.quiet)
    fmt::print(stderr, "folding the samples of '{}' (-e names another of the {} events)\n",
               p.strings.at(p.events[fo.event].name), p.events.size());
  return write_output(a.to_folded, [&](FdWriter& w) { return exports::write_folded(p, fo, w); });
}

Status write_flamegraph(const ConvertArgs& a, const profile::Profile& p) {
  exports::FlameTreeOptions to;
  std::size_t event = 0;
  PK_ASSIGN(event, event_index(p, a.event));
  to.events = {event};
  to.weight_period = a.folded_weight == "period";
  to.comm_with_pid = false;
  to.chainless_on_process = false;
  const exports::FlameTree tree(p, to);
  exports::SvgOptions so;
  so.title = a.flame_title;
  so.subtitle = fmt::format("{} ({})", p.strings.at(p.events[event].name),
                            to.weight_period ? "period" : "samples");
  so.count_name = to.weight_period ? "period" : "samples";
  so.inverted = a.inverted;
  return write_output(a.to_flamegraph,
                      [&](FdWriter& w) { return exports::write_svg(tree, so, w); });
}

Status write_outputs(const ConvertArgs& a, const profile::Profile& p) {
  if (a.folded_weight != "samples" && a.folded_weight != "period")
    return make_error("--folded-weight: '{}' is not samples or period", a.folded_weight);
  if (!a.to_folded.empty()) PK_TRY(write_folded(a, p));
  if (!a.to_flamegraph.empty()) PK_TRY(write_flamegraph(a, p));
  if (!a.to_chrome.empty()) {
    exports::ChromeOptions co;
    PK_ASSIGN(co.event, event_index(p, a.event));
    PK_TRY(write_output(
        a.to_chrome, [&](FdWriter& w) { return exports::write_chrome_trace(p, co, w); }, true));
  }
  if (!a.to_firefox.empty()) {
    exports::FirefoxOptions fo;
    PK_ASSIGN(fo.event, event_index(p, a.event));
    fo.start_time_ms = start_time_ms(a.profile.input, p.summary);
    PK_TRY(write_output(
        a.to_firefox, [&](FdWriter& w) { return exports::write_firefox(p, fo, w); }, true));
  }
  if (!a.to_speedscope.empty()) {
    exports::SpeedscopeOptions so;
    so.name = std::filesystem::path(a.profile.input).filename().string();
    PK_TRY(write_output(a.to_speedscope,
                        [&](FdWriter& w) { return exports::write_speedscope(p, so, w); }));
  }
  if (!a.to_pprof.empty())
    PK_TRY(write_output(a.to_pprof, [&](FdWriter& w) { return exports::write_pprof(p, w); }));
  return ok();
}

// The input's modification time as perf prints it: "%FT%TZ" in UTC.
std::string captured_on(const std::string& input) {
  struct stat st;
  if (input == "-" ? fstat(STDIN_FILENO, &st) != 0 : stat(input.c_str(), &st) != 0) return "";
  std::tm tm{};
  gmtime_r(&st.st_mtime, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%FT%TZ", &tm);
  return buf;
}

// --to-json: perf's JSON, with perf's checks and messages. Returns the
// exit status.
int convert_to_json(ConvertArgs& a) {
  if (a.all) return fmt::print(stderr, "--all is currently unsupported for JSON output.\n"), 255;
  if (a.tod) return fmt::print(stderr, "--tod is currently unsupported for JSON output.\n"), 255;
  if (!a.force && a.to_json != "-" && access(a.to_json.c_str(), F_OK) == 0)
    return fmt::print(stderr, "Output file exists. Use --force to overwrite it.\n"), 255;
  auto out = OutputFile::create(a.to_json);
  if (!out) return fail("data convert", out.error());
  ProgressBar bar("Converting the recording...");
  auto session = open_profile_session(a.profile, bar);
  if (!session) return fail("data convert", session.error());
  (*session)->set_callchains(false, false, a.profile.opts.max_stack);
  auto stats = exports::write_perf_json(**session, captured_on(a.profile.input), out->writer());
  bar.clear();
  if (!stats) return fail("data convert", stats.error().with_context((*session)->reader().name()));
  if (auto st = out->commit(); !st) return fail("data convert", st.error());
  fmt::print(stderr, "[ perf data convert: Converted '{}' into JSON data '{}' ]\n", a.profile.input,
             a.to_json);
  fmt::print(stderr, "[ perf data convert: Converted and wrote {:.3f} MB ({} samples) ]\n",
             static_cast<double>(stats->bytes) / 1024.0 / 1024.0, stats->samples);
  return 0;
}

}  // namespace

int cmd_data(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "convert") {
    const bool help =
        argc >= 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h");
    fmt::print(help ? stdout : stderr,
               "\n Usage: perfkit data [<common options>] <command> [<options>]\n\n"
               "   convert   converts data file between formats\n\n");
    return help ? 0 : 129;
  }
  CLI::App app(
      "Convert a perf.data file into the formats other tools read, as 'perf data convert' "
      "does.\n\n usage: perfkit data convert [<options>]",
      "data convert");
  ConvertArgs a;
  add_profile_options(app, a.profile);
  app.add_option("--to-json", a.to_json, "Convert to JSON format (perf's)");
  app.add_option("--to-folded", a.to_folded,
                 "Folded stacks for FlameGraph, one event ('-' for stdout)");
  app.add_option("--to-pprof", a.to_pprof, "pprof's profile.proto, gzipped (go tool pprof)");
  app.add_option("--to-chrome", a.to_chrome,
                 "Chrome Trace Event JSON for Perfetto and chrome://tracing, one event "
                 "(gzipped when OUT ends in .gz)");
  app.add_option("--to-firefox", a.to_firefox,
                 "The Firefox Profiler's processed format, one event (gzipped when OUT ends "
                 "in .gz)");
  app.add_option("--to-speedscope", a.to_speedscope, "speedscope's JSON file format");
  app.add_option("--to-flamegraph", a.to_flamegraph, "An SVG flame graph of one event");
  app.add_option("--flame-title", a.flame_title, "The flame graph's title")->capture_default_str();
  app.add_flag("--inverted", a.inverted, "Draw the flame graph as an icicle (root on top)");
  app.add_option("--folded-weight", a.folded_weight, "Weigh stacks by samples or period")
      ->capture_default_str();
  app.add_option("-e,--event", a.event, "The event to convert (default: the first)");
  app.add_option("--to-ctf", a.to_ctf, "Convert to CTF format (not in this build)");
  app.add_flag("-f,--force", a.force, "Don't complain, do it");
  app.add_flag("--all", a.all, "Convert all events (not supported by the JSON output)");
  app.add_flag("--tod", a.tod, "Convert time to wall clock time (not supported by JSON)");
  int code = 0;
  if (!parse_options(app, argc - 1, argv + 1, code)) return code;
  if (!a.to_ctf.empty() && !a.to_json.empty()) {
    fmt::print(stderr, "You cannot specify both --to-ctf and --to-json.\n");
    return 255;
  }
  if (!a.to_ctf.empty()) {
    fmt::print(stderr,
               "The libbabeltrace support is not compiled in. perf should be compiled with "
               "environment variables LIBBABELTRACE=1 and LIBBABELTRACE_DIR=/path/to/"
               "libbabeltrace/\n");
    return 255;
  }
  if (a.to_json.empty() && !a.perfkit_target()) {
    fmt::print(stderr, "You must specify one of --to-ctf or --to-json.\n");
    return 255;
  }
  if (!a.to_json.empty()) {
    if (int st = convert_to_json(a); st != 0 || !a.perfkit_target()) return st;
  }
  if (a.all || a.tod) {
    fmt::print(stderr, "{} is currently unsupported for perfkit's outputs.\n",
               a.all ? "--all" : "--tod");
    return 255;
  }
  // The formats that carry source lines get them.
  a.profile.opts.source_lines =
      !a.to_pprof.empty() || !a.to_firefox.empty() || !a.to_speedscope.empty();
  auto p = read_profile(a.profile);
  if (!p) return fail("data convert", p.error());
  if (auto st = write_outputs(a, *p); !st) return fail("data convert", st.error());
  return 0;
}

}  // namespace perfkit::cli
