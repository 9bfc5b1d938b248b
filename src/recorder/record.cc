#include "recorder/record.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>

#include "abi/perf_event.h"
#include "base/mapped_file.h"
#include "base/text.h"
#include "capture/compressor.h"
#include "capture/record_config.h"
#include "capture/system_info.h"
#include "capture/tracing_data.h"
#include "elf/build_id.h"
#include "perfdata/writer.h"
#include "recorder/record_buildids.h"
#include "recorder/record_cache.h"
#include "recorder/record_dir.h"
#include "recorder/record_output.h"

namespace perfkit::recorder {

using namespace perfkit::abi;
using capture::RecordOptions;

namespace {

std::vector<std::string> command_line(const RecordOptions& opts) {
  std::vector<std::string> argv = opts.cmdline;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!argv.empty() && !ec) argv[0] = exe.string();
  return argv;
}

void add_tracing_data(const capture::Recorder& r, const capture::SystemPaths& paths,
                      perfdata::Features& f) {
  std::vector<capture::Tracepoint> tps;
  for (const auto& e : r.events())
    if (e.attr.type == kTypeTracepoint) tps.push_back(e.tracepoint);
  if (tps.empty()) return;
  auto tracefs = capture::Tracefs::locate(paths);
  if (!tracefs) return;
  auto data = capture::build_tracing_data(*tracefs, tps);
  if (data) f.tracing_data = std::move(*data);
}

void add_clock(const RecordOptions& opts, perfdata::Features& f) {
  if (!opts.clockid) return;
  timespec res{};
  if (clock_getres(*opts.clockid, &res) == 0)
    f.clockid_res_ns = static_cast<std::uint64_t>(res.tv_sec) * 1000000000ULL +
                       static_cast<std::uint64_t>(res.tv_nsec);
  timeval tod{};
  timespec ref{};
  if (gettimeofday(&tod, nullptr) == 0 && clock_gettime(*opts.clockid, &ref) == 0) {
    perfdata::ClockData c;
    c.version = 1;
    c.clockid = static_cast<std::uint32_t>(*opts.clockid);
    c.tod_ns = static_cast<std::uint64_t>(tod.tv_sec) * 1000000000ULL +
               static_cast<std::uint64_t>(tod.tv_usec) * 1000ULL;
    c.clockid_ns = static_cast<std::uint64_t>(ref.tv_sec) * 1000000000ULL +
                   static_cast<std::uint64_t>(ref.tv_nsec);
    f.clock_data = c;
  }
}

std::uint64_t procfs_number(const capture::SystemPaths& paths, const char* rel) {
  auto t = read_text_file(paths.procfs + rel);
  std::uint64_t v = 0;
  if (!t || !parse_u64(trim(*t), v, 10)) return 0;
  return v;
}

// perf keeps the previous recording as FILE.old (a directory's replacing
// an older one).
void keep_old_output(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    std::filesystem::remove_all(path + ".old", ec);
    std::rename(path.c_str(), (path + ".old").c_str());
  } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
    std::rename(path.c_str(), (path + ".old").c_str());
  }
}

// --threads: the directory, its `data` file's path; perf's refusals first.
Expected<std::string> make_output_dir(const RecordOptions& opts) {
  if (opts.output == "-")
    return make_error("Parallel trace streaming is not available in pipe mode.");
  if (opts.target.per_thread)
    return make_error(
        "--per-thread option is mutually exclusive to parallel streaming mode.\n"
        "Failed to initialize parallel data streaming masks");
  keep_old_output(opts.output);
  if (::mkdir(opts.output.c_str(), 0700) != 0)
    return make_error("{}: cannot create the directory: {}", opts.output, std::strerror(errno));
  return opts.output + "/data";
}

}  // namespace

perfdata::Features session_features(const capture::Recorder& r, const RecordOptions& opts,
                                    const capture::SystemPaths& paths, const std::string& version,
                                    bool pipe) {
  perfdata::Features f;
  capture::collect_system_info(paths, version, f);
  f.cmdline = command_line(opts);
  perfdata::EventDescList desc;
  for (std::size_t i = 0; i < r.events().size(); ++i) {
    const auto& e = r.events()[i];
    if (e.attr.config3) desc.attr_size = kAttrSizeVer8;
    desc.events.push_back(
        {e.attr, e.name, i < r.ids().size() ? r.ids()[i] : std::vector<std::uint64_t>{}});
  }
  f.event_desc = std::move(desc);
  std::vector<perfdata::GroupDesc> groups;
  for (const auto& g : r.groups())
    if (g.nr_members > 1)
      groups.push_back({g.name.empty() ? "{anon_group}" : g.name,
                        static_cast<std::uint32_t>(g.leader),
                        static_cast<std::uint32_t>(g.nr_members)});
  if (!groups.empty()) f.group_desc = std::move(groups);
  f.branch_stack = opts.branch_stack != 0;
  add_tracing_data(r, paths, f);
  add_clock(opts, f);
  f.sample_time = perfdata::SampleTime{pipe ? 0 : r.stats().first_sample_time,
                                       pipe ? 0 : r.stats().last_sample_time};
  // perf does not stream CACHE at the start of a pipe; with -z it streams
  // COMPRESSED (its reader needs it to inflate), the ratio still unknown.
  if (pipe) {
    f.cache.reset();
    if (opts.compression_level > 0)
      f.compressed =
          perfdata::CompressionInfo{0, 1, static_cast<std::uint32_t>(opts.compression_level), 0,
                                    static_cast<std::uint32_t>(r.mmap_len())};
  }
  return f;
}

namespace {

struct Session {
  const capture::EventList& events;
  const RecordOptions& opts;
  const capture::SystemPaths& paths;
  const RecordHooks& hooks;
  RecordSummary summary;
  RingFiles* ring_files = nullptr;  // --threads' data.N files

  void say(const std::string& m) const {
    if (hooks.message) hooks.message(m);
  }
  Expected<std::vector<perfdata::FeatureData>> final_features(const capture::Recorder& r,
                                                              const RecordOutput& out,
                                                              const capture::RecordCompressor* z);
  Status finish(capture::Recorder& r, std::unique_ptr<perfdata::Writer>& writer,
                const RecordOutput& out, const capture::RecordCompressor* z,
                std::uint64_t data_offset);
};

Expected<std::vector<perfdata::FeatureData>> Session::final_features(
    const capture::Recorder& r, const RecordOutput& out, const capture::RecordCompressor* z) {
  perfdata::Features f = session_features(r, opts, paths, hooks.version, false);
  // perf collects build-ids at the end unless told not to; with -z or
  // --buildid-mmap it does not.
  if (!opts.no_buildid && !z && !opts.buildid_mmap)
    f.build_id = build_id_table(r.dso_hits().dsos(), opts.buildid_all, paths.sysfs);
  // --vmlinux names the kernel's entry, with the running kernel's build-id.
  if (f.build_id && !opts.vmlinux.empty())
    for (perfdata::BuildIdEntry& e : f.build_id->entries)
      if (e.filename == "[kernel.kallsyms]") e.filename = opts.vmlinux;
  if (f.build_id) cache_build_ids(*f.build_id, opts.buildid_cache_dir, paths.procfs);
  if (ring_files) f.dir_format = 1;
  if (z) {
    perfdata::CompressionInfo c;
    c.version = 0;
    c.type = 1;  // zstd
    c.level = static_cast<std::uint32_t>(z->level());
    const std::uint64_t in = ring_files ? ring_files->bytes_in() : z->bytes_in();
    const std::uint64_t made = ring_files ? ring_files->bytes_out() : z->bytes_out();
    c.ratio = made ? static_cast<std::uint32_t>(static_cast<double>(in) / made + 0.5) : 0;
    c.mmap_len = static_cast<std::uint32_t>(r.mmap_len());
    f.compressed = c;
  }
  return perfdata::encode_features(f, false);
}

Status Session::finish(capture::Recorder& r, std::unique_ptr<perfdata::Writer>& writer,
                       const RecordOutput& out, const capture::RecordCompressor* z,
                       std::uint64_t data_offset) {
  const perfdata::EventSet set = r.event_set();
  const bool pipe = writer->pipe();
  std::vector<perfdata::FeatureData> features;
  if (!pipe) {
    PK_ASSIGN(features, final_features(r, out, z));
  }
  if (!out.failure()) {
    summary.output_bytes = writer->bytes_written();
    auto st = writer->finish(set, features);
    if (st) {
      summary.output_bytes = writer->bytes_written();
      if (ring_files) summary.output_bytes += ring_files->bytes_written();
      return ok();
    }
    summary.write_error = st.error();
  } else {
    summary.write_error = *out.failure();
  }
  if (ring_files) return ok();  // (a directory is not salvaged)
  // The output failed: make what reached the disk readable.
  writer.reset();
  struct stat st {};
  if (pipe || ::stat(opts.output.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return ok();
  auto kept = salvage_recording(opts.output, set, data_offset, features);
  if (!kept) return kept.error();
  summary.salvaged_data_bytes = *kept;
  summary.salvaged = true;
  std::error_code ec;
  summary.output_bytes = std::filesystem::file_size(opts.output, ec);
  return ok();
}

// --switch-output: the file being written is finished, renamed with the
// time (the oldest removed past --switch-max-files) and the next one begun,
// with the side-band synthesized again, as perf's record__switch_output.
struct OutputSwitch {
  Session& s;
  capture::Recorder& r;
  std::unique_ptr<perfdata::Writer>& writer;
  RecordOutput& out;
  capture::RecordCompressor* z;
  std::uint64_t& data_offset;
  const capture::SynthOptions& synth;
  const perfdata::WriterOptions& wo;
  std::deque<std::string> files;

  // Renames the finished file; `at_exit`: the last one (the CLI's closing
  // lines name it).
  Status rename_finished(bool at_exit) {
    const std::string& path = s.opts.output;
    const std::string name = path + "." + timestamp_suffix();
    if (::rename(path.c_str(), name.c_str()) != 0)
      return make_error("cannot rename {} to {}: {}", path, name, std::strerror(errno));
    if (!at_exit && !s.opts.quiet) {
      s.say(fmt::format("[ perfkit record: dump data: Woken up {} times ]", r.stats().wakeups));
      s.say(fmt::format("[ perfkit record: Dump {} ]", name));
    }
    s.summary.dumped = name;
    files.push_back(name);
    const auto keep = static_cast<std::size_t>(s.opts.switch_output.max_files);
    if (keep > 0 && files.size() > keep) {
      std::remove(files.front().c_str());
      files.pop_front();
    }
    return ok();
  }

  Status next() {
    PK_TRY(s.finish(r, writer, out, z, data_offset));
    if (s.summary.write_error) return *s.summary.write_error;
    PK_TRY(rename_finished(false));
    PK_ASSIGN(writer, perfdata::Writer::create(s.opts.output, wo));
    out.set_writer(*writer);
    PK_TRY(writer->begin(r.event_set(), {}));
    data_offset = writer->bytes_written();
    r.begin_output_file();
    PK_TRY(r.synthesize_next_file(out, synth));
    if (s.opts.tail_synthesize) return ok();  // its side-band comes at the end
    return out.write(capture::header_only_record(kRecordFinishedInit));
  }
};

}  // namespace

std::string timestamp_suffix() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  tm t{};
  localtime_r(&tv.tv_sec, &t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &t);
  return fmt::format("{}{:02}", buf, tv.tv_usec / 10000);
}

Expected<RecordSummary> run_record(const capture::EventList& events, const RecordOptions& opts,
                                   const capture::SystemPaths& paths, const RecordHooks& hooks) {
  Session s{events, opts, paths, hooks, {}};
  auto say = [&](const std::string& m) { s.say(m); };
  capture::RecordLimits limits;
  limits.max_sample_rate = procfs_number(paths, "/sys/kernel/perf_event_max_sample_rate");
  const auto cpuid = capture::read_cpuid();
  limits.amd = cpuid && cpuid->starts_with("AuthenticAMD");
  PK_ASSIGN(capture::RecordConfig config, capture::configure_record(events, opts, limits));
  if (!opts.quiet) {
    for (const auto& m : config.infos) say(m);
    for (const auto& m : config.warnings) say(m);
  }
  const bool pipe = opts.output == "-";
  std::string main_file = opts.output;
  if (opts.threads) {
    if (!pipe && !opts.target.per_thread) {
      // perf checks the spec before anything is made
      auto masks = capture::thread_masks(*opts.threads, capture::online_cpus(paths), paths);
      if (!masks)
        return make_error("{}\nFailed to initialize parallel data streaming masks",
                          masks.error().message());
    }
    PK_ASSIGN(main_file, make_output_dir(opts));
  } else if (!pipe) {
    keep_old_output(opts.output);
  }
  perfdata::WriterOptions wo;
  wo.pipe = pipe;
  auto writer_or = perfdata::Writer::create(main_file, wo);
  if (!writer_or) return writer_or.error();
  std::unique_ptr<perfdata::Writer> writer = std::move(*writer_or);

  capture::Recorder r(std::move(config), opts, paths);
  std::vector<std::string> notes;
  auto opened = r.open(notes);
  for (const auto& n : notes) say(n);
  if (opened && opts.switch_output.size && !opts.quiet) {
    // perf's switch_output_size_warn: data goes out half a buffer at a time.
    std::uint64_t wakeup = r.mmap_len() / 2;
    int unit = 0;
    while (wakeup > 1024 && unit < 3) wakeup /= 1024, ++unit;
    if (opts.switch_output.size < r.mmap_len() / 2)
      say(
          fmt::format("WARNING: switch-output data size lower than wakeup kernel buffer size "
                      "({}{}) expect bigger perf.data sizes",
                      wakeup, "BKMG"[unit]));
  }
  if (!opened) {
    writer.reset();
    // (what record made: never /dev/null or another file that is no regular one)
    struct stat st {};
    if (opts.threads) {
      std::error_code ec;
      std::filesystem::remove_all(opts.output, ec);
    } else if (!pipe && ::lstat(opts.output.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      ::unlink(opts.output.c_str());
    }
    return opened.error();
  }
  std::vector<perfdata::FeatureData> pipe_features;
  if (pipe) {
    PK_ASSIGN(pipe_features, perfdata::encode_features(
                                 session_features(r, opts, paths, hooks.version, true), false));
  }
  std::unique_ptr<capture::RecordCompressor> z;
  if (opts.compression_level > 0) {
    PK_ASSIGN(z, capture::RecordCompressor::create(opts.compression_level));
  }
  std::unique_ptr<RingFiles> ring_files;
  if (opts.threads) {
    PK_ASSIGN(auto masks, capture::thread_masks(*opts.threads, r.cpus(), paths));
    PK_ASSIGN(ring_files, RingFiles::create(opts.output, r.ring_count(), opts.compression_level));
    r.set_parallel(ring_files->sinks(), std::move(masks));
    s.ring_files = ring_files.get();
  }
  RecordOutput out(*writer, z.get(), opts.max_size);
  Status run = writer->begin(r.event_set(), pipe_features);
  std::uint64_t data_offset = writer->bytes_written();
  capture::SynthOptions synth;
  if (opts.buildid_mmap) {
    synth.build_id = [](const std::string& path) -> std::optional<std::vector<std::uint8_t>> {
      auto id = elf::read_build_id(path);
      if (!id || id->empty()) return std::nullopt;
      return std::vector<std::uint8_t>(id->view().begin(), id->view().end());
    };
    synth.kernel_build_id = [&paths]() {
      return dso_build_id("[kernel.kallsyms]", true, paths.sysfs);
    };
  }
  if (run) run = r.synthesize(out, pipe, synth);
  capture::RunControl rc;
  rc.stop_fd = hooks.stop_fd;
  OutputSwitch sw{s, r, writer, out, z.get(), data_offset, synth, wo, {}};
  const capture::SwitchOutput& so = opts.switch_output;
  if (so.enabled() && !pipe) {
    if (so.signal) rc.switch_fd = hooks.switch_fd;
    rc.switch_every_s = so.time_s;
    if (so.size) rc.switch_due = [&] { return writer->bytes_written() - data_offset >= so.size; };
    rc.switch_output = [&sw] { return sw.next(); };
  }
  if (run) run = r.run(out, rc, say);
  s.summary.stats = r.stats();
  s.summary.stop_reason = r.stop_reason();
  s.summary.output = opts.output;
  s.summary.bytes_transferred = r.stats().bytes;
  s.summary.compressed = z != nullptr;
  s.summary.compressed_bytes = ring_files ? ring_files->bytes_out() : z ? z->bytes_out() : 0;
  if (ring_files) {
    Status closed = ring_files->finish();
    if (run && !closed) run = std::move(closed);
  }
  s.summary.workload_status = r.workload_status();
  if (!run && !out.failure()) {
    // Not an output problem (the workload did not run): the file still gets
    // finished, as perf does, then the error is reported.
    (void)s.finish(r, writer, out, z.get(), data_offset);
    return run.error();
  }
  PK_TRY(s.finish(r, writer, out, z.get(), data_offset));
  if (so.enabled() && !pipe && !s.summary.write_error) PK_TRY(sw.rename_finished(true));
  return s.summary;
}

std::vector<std::string> closing_lines(const RecordSummary& s) {
  std::vector<std::string> out;
  out.push_back(
      fmt::format("[ perfkit record: Woken up {} times to write data ]", s.stats.wakeups));
  std::string line = fmt::format("[ perfkit record: Captured and wrote {:.3f} MB {}",
                                 static_cast<double>(s.output_bytes) / 1024.0 / 1024.0, s.output);
  // perf counts no samples for the last of several files (--switch-output).
  if (s.dumped.empty())
    line +=
        fmt::format(" ({} samples, {} lost)", s.stats.samples, s.stats.lost + s.stats.lost_samples);
  if (s.compressed && s.compressed_bytes)
    line += fmt::format(", compressed (original {:.3f} MB, ratio is {:.3f})",
                        static_cast<double>(s.bytes_transferred) / 1024.0 / 1024.0,
                        static_cast<double>(s.bytes_transferred) / s.compressed_bytes);
  out.push_back(line + " ]");
  return out;
}

}  // namespace perfkit::recorder
