#include "capture/synthesize.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "abi/perf_event.h"
#include "base/mapped_file.h"
#include "base/text.h"
#include "record/encode.h"
#include "symbol/kallsyms.h"

namespace perfkit::capture {

using namespace perfkit::abi;
using record::RecordBuilder;

namespace fs = std::filesystem;

namespace {

constexpr std::uint16_t kMiscForkExec = 1 << 13;

// Reads a whole /proc file; empty string on failure.
std::string slurp(const std::string& path) {
  // (not through an ifstream: a read that fails, as one of a process that
  // has just exited does with ESRCH, throws out of its iterator)
  Expected<std::string> text = read_text_file(path);
  return text ? std::move(*text) : std::string{};
}

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::uint64_t v = 0;
    if (parse_u64(it->path().filename().string(), v, 10)) out.push_back(static_cast<pid_t>(v));
  }
  // /proc lists pids in ascending order; keep that order whatever the directory.
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Expected<ProcStatus> read_proc_status(const SystemPaths& paths, pid_t pid, pid_t tid) {
  const std::string path = fmt::format("{}/{}/task/{}/status", paths.procfs, pid, tid);
  std::string text = slurp(path);
  if (text.empty()) return make_error("cannot read {} (the thread has exited?)", path);
  ProcStatus s;
  bool vm_peak = false;
  for (auto line : split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon), value = trim(line.substr(colon + 1));
    std::int64_t n = 0;
    if (key == "Name")
      s.name = std::string(value.substr(0, 15));
    else if (key == "Tgid" && parse_i64(value, n))
      s.tgid = static_cast<pid_t>(n);
    else if (key == "PPid" && parse_i64(value, n))
      s.ppid = static_cast<pid_t>(n);
    else if (key == "VmPeak")
      vm_peak = true;
  }
  s.kernel_thread = !vm_peak;
  if (s.tgid < 0) return make_error("{}: no Tgid line", path);
  return s;
}

Expected<std::vector<pid_t>> process_threads(const SystemPaths& paths, pid_t pid) {
  const std::string dir = fmt::format("{}/{}/task", paths.procfs, pid);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error("no process {} ({} not found)", pid, dir);
  auto tids = numeric_entries(dir);
  if (tids.empty()) return make_error("no process {} (no threads in {})", pid, dir);
  return tids;
}

std::vector<pid_t> processes_of_uid(const SystemPaths& paths, uid_t uid) {
  std::vector<pid_t> out;
  for (pid_t pid : numeric_entries(paths.procfs)) {
    struct stat st {};
    if (::stat(fmt::format("{}/{}", paths.procfs, pid).c_str(), &st) == 0 && st.st_uid == uid)
      out.push_back(pid);
  }
  return out;
}

Expected<uid_t> parse_user(const std::string& user) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found)
    return found->pw_uid;
  std::uint64_t id = 0;
  if (user.empty() || !parse_u64(user, id, 10)) return make_error("Invalid User: {}", user);
  if (::getpwuid_r(static_cast<uid_t>(id), &pw, buf.data(), buf.size(), &found) != 0 || !found)
    return make_error("Problems obtaining information for user {}", user);
  return found->pw_uid;
}

bool parse_proc_map_line(std::string_view line, ProcMap& m) {
  // start-end perms offset maj:min inode [path]
  auto next_field = [&](std::string_view& rest) {
    rest = rest.substr(std::min(rest.find_first_not_of(' '), rest.size()));
    auto sp = rest.find(' ');
    std::string_view f = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp);
    return f;
  };
  std::string_view rest = line;
  std::string_view range = next_field(rest), perms = next_field(rest), off = next_field(rest),
                   dev = next_field(rest), ino = next_field(rest);
  auto dash = range.find('-');
  auto colon = dev.find(':');
  if (dash == std::string_view::npos || perms.size() < 4 || colon == std::string_view::npos)
    return false;
  std::uint64_t maj = 0, min = 0;
  if (!parse_u64(range.substr(0, dash), m.start, 16) ||
      !parse_u64(range.substr(dash + 1), m.end, 16) || !parse_u64(off, m.pgoff, 16) ||
      !parse_u64(dev.substr(0, colon), maj, 16) || !parse_u64(dev.substr(colon + 1), min, 16) ||
      !parse_u64(ino, m.ino, 10))
    return false;
  m.maj = static_cast<std::uint32_t>(maj);
  m.min = static_cast<std::uint32_t>(min);
  m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
           (perms[2] == 'x' ? PROT_EXEC : 0);
  m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
  m.filename = std::string(trim(rest));
  return true;
}

Status Synthesizer::emit(std::vector<std::uint8_t> rec) {
  ++records_;
  return sink_.write(rec);
}

Status Synthesizer::kernel_mmap() {
  const std::string path = paths_.procfs + "/kallsyms";
  std::string text = slurp(path);
  if (text.empty()) return make_error("cannot read {}", path);
  const symbol::KernelText k = symbol::kernel_text(text);
  std::string_view ref = "_text";
  std::uint64_t start = k.text;
  if (!start) {
    ref = "_stext";
    start = k.stext;
  }
  if (!start)
    return make_error(
        "kernel addresses in {} are hidden (kptr_restrict); kernel samples will not resolve", path);
  const std::uint64_t end = k.etext > start ? k.etext : ~0ULL;
  const std::string name = fmt::format("[kernel.kallsyms]{}", ref);
  if (opts_.build_id && opts_.kernel_build_id) {
    if (auto id = opts_.kernel_build_id(); id && id->size() <= 20) {
      RecordBuilder b(kRecordMmap2, kMiscKernel | kMiscMmapBuildId);
      b.u32(static_cast<std::uint32_t>(-1)).u32(0).u64(start).u64(end - start).u64(start);
      b.u8(static_cast<std::uint8_t>(id->size())).zeros(3).bytes(*id).zeros(20 - id->size());
      b.u32(0).u32(0).string(name, 8).zeros(opts_.id_hdr_size);
      return emit(b.finish());
    }
  }
  RecordBuilder b(kRecordMmap, kMiscKernel);
  b.u32(static_cast<std::uint32_t>(-1)).u32(0).u64(start).u64(end - start).u64(start);
  b.string(name, 8).zeros(opts_.id_hdr_size);
  return emit(b.finish());
}

namespace {

// Every module file under /lib/modules/RELEASE by module name ('-' as '_').
std::unordered_map<std::string, std::string> module_files(const std::string& release) {
  std::unordered_map<std::string, std::string> files;
  if (release.empty()) return files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it("/lib/modules/" + release, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string file = it->path().filename().string();
    auto ko = file.find(".ko");
    if (ko == std::string::npos) continue;
    std::string base = file.substr(0, ko);
    std::replace(base.begin(), base.end(), '-', '_');
    files.emplace(std::move(base), it->path().string());
  }
  return files;
}

}  // namespace

Status Synthesizer::modules() {
  std::string text = slurp(paths_.procfs + "/modules");
  if (text.empty()) return ok();  // a kernel without modules
  const auto files =
      module_files(std::string(trim(slurp(paths_.procfs + "/sys/kernel/osrelease"))));
  for (auto line : split(text, '\n')) {
    auto parts = split(line, ' ');
    if (parts.size() < 6) continue;
    std::uint64_t size = 0, addr = 0;
    std::string_view addr_text = parts[5];
    if (addr_text.starts_with("0x")) addr_text.remove_prefix(2);
    if (!parse_u64(parts[1], size, 10) || !parse_u64(addr_text, addr, 16) || addr == 0) continue;
    std::string name(parts[0]);
    RecordBuilder b(kRecordMmap, kMiscKernel);
    b.u32(static_cast<std::uint32_t>(-1)).u32(0).u64(addr).u64(size).u64(0);
    auto file = files.find(name);
    b.string(file != files.end() ? file->second : "[" + name + "]", 8).zeros(opts_.id_hdr_size);
    PK_TRY(emit(b.finish()));
  }
  return ok();
}

Expected<pid_t> Synthesizer::comm(pid_t pid) {
  PK_ASSIGN(ProcStatus s, read_proc_status(paths_, pid, pid));
  RecordBuilder b(kRecordComm, 0);
  b.u32(static_cast<std::uint32_t>(s.tgid)).u32(static_cast<std::uint32_t>(pid));
  b.string(s.name, 8).zeros(opts_.id_hdr_size);
  PK_TRY(emit(b.finish()));
  if (opts_.namespaces) PK_TRY(namespaces(pid, s.tgid));
  return s.tgid;
}

Status Synthesizer::mmaps(pid_t tgid, pid_t tid) {
  if (!opts_.task_mmaps) return ok();
  std::string text = slurp(fmt::format("{}/{}/task/{}/maps", paths_.procfs, tgid, tid));
  for (auto line : split(text, '\n')) {
    ProcMap m;
    if (!parse_proc_map_line(line, m)) continue;
    std::uint16_t misc = kMiscUser;
    if (!(m.prot & PROT_EXEC)) {
      if (!opts_.mmap_data || !(m.prot & PROT_READ)) continue;
      misc |= kMiscMmapData;
    }
    if (m.filename.empty()) m.filename = "//anon";
    std::optional<std::vector<std::uint8_t>> id;
    if (opts_.build_id && !m.filename.empty() && m.filename[0] == '/')
      id = opts_.build_id(m.filename);
    if (id && id->size() > 20) id.reset();
    RecordBuilder b(kRecordMmap2, static_cast<std::uint16_t>(misc | (id ? kMiscMmapBuildId : 0)));
    b.u32(static_cast<std::uint32_t>(tgid)).u32(static_cast<std::uint32_t>(tid));
    b.u64(m.start).u64(m.end - m.start).u64(m.pgoff);
    if (id) {
      // build_id_size, 3 bytes of padding, then 20 bytes of build-id.
      b.u8(static_cast<std::uint8_t>(id->size())).zeros(3).bytes(*id).zeros(20 - id->size());
    } else {
      b.u32(m.maj).u32(m.min).u64(m.ino).u64(0);
    }
    b.u32(m.prot).u32(m.flags);
    b.string(m.filename, 8).zeros(opts_.id_hdr_size);
    PK_TRY(emit(b.finish()));
  }
  return ok();
}

Status Synthesizer::namespaces(pid_t pid, pid_t tgid) {
  // perf's order of the namespace links (enum perf_ns_link_info index).
  static constexpr const char* kNs[] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};
  RecordBuilder b(kRecordNamespaces, 0);
  b.u32(static_cast<std::uint32_t>(tgid)).u32(static_cast<std::uint32_t>(pid));
  b.u64(std::size(kNs));
  for (const char* ns : kNs) {
    struct stat st {};
    std::string p = fmt::format("{}/{}/ns/{}", paths_.procfs, pid, ns);
    if (::stat(p.c_str(), &st) == 0)
      b.u64(st.st_dev).u64(st.st_ino);
    else
      b.u64(0).u64(0);
  }
  b.zeros(opts_.id_hdr_size);
  return emit(b.finish());
}

namespace {

// The mount point of the cgroup hierarchy perf_event cgroups live in: cgroup2,
// or a v1 hierarchy with the perf_event controller.
std::string cgroup_mount(const SystemPaths& paths) {
  std::string v1;
  for (auto line : split(slurp(paths.procfs + "/self/mounts"), '\n')) {
    auto f = split(line, ' ');
    if (f.size() < 4) continue;
    if (f[2] == "cgroup2") return std::string(f[1]);
    if (f[2] == "cgroup" && f[3].find("perf_event") != std::string_view::npos) v1 = f[1];
  }
  return v1;
}

}  // namespace

Status Synthesizer::cgroups() {
  const std::string mount = cgroup_mount(paths_);
  if (mount.empty()) return ok();
  std::vector<std::string> dirs{mount};
  std::error_code ec;
  for (fs::recursive_directory_iterator
           it(mount, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && !it->is_symlink(ec2)) dirs.push_back(it->path().string());
  }
  for (const auto& dir : dirs) {
    // The kernel's cgroup id is the 8-byte handle of the cgroup directory.
    alignas(8) unsigned char buf[sizeof(file_handle) + 8] = {};
    auto* fh = reinterpret_cast<file_handle*>(buf);
    fh->handle_bytes = 8;
    int mount_id = 0;
    if (::name_to_handle_at(AT_FDCWD, dir.c_str(), fh, &mount_id, 0) != 0) continue;
    std::uint64_t id = 0;
    std::memcpy(&id, buf + sizeof(file_handle), 8);
    RecordBuilder b(kRecordCgroup, 0);
    b.u64(id).string(std::string_view(dir).substr(mount.size()), 8).zeros(opts_.id_hdr_size);
    PK_TRY(emit(b.finish()));
  }
  return ok();
}

Status Synthesizer::thread_map_threads(const std::vector<pid_t>& tids) {
  for (pid_t tid : tids) {
    auto st = read_proc_status(paths_, tid, tid);
    if (!st) continue;  // exited since the map was made
    PK_ASSIGN(pid_t tgid, comm(tid));
    if (tid == tgid && !st->kernel_thread) PK_TRY(mmaps(tgid, tid));
    if (tgid != tid && std::find(tids.begin(), tids.end(), tgid) == tids.end()) {
      auto leader = read_proc_status(paths_, tgid, tgid);
      if (!leader) continue;
      PK_TRY(comm(tgid));
      if (!leader->kernel_thread) PK_TRY(mmaps(tgid, tgid));
    }
  }
  return ok();
}

Status Synthesizer::full_thread_group(pid_t pid) {
  // Only processes: a thread's /proc/TID (reachable, not listed) is covered
  // by its process.
  auto leader = read_proc_status(paths_, pid, pid);
  if (!leader || leader->tgid != pid) return ok();
  for (pid_t tid : numeric_entries(fmt::format("{}/{}/task", paths_.procfs, pid))) {
    auto s = read_proc_status(paths_, pid, tid);
    if (!s) continue;  // exited meanwhile
    // The main thread's parent is its process's parent; other threads are
    // taken to be spawned by the main thread.
    const pid_t parent = s->tgid == tid ? s->ppid : s->tgid;
    RecordBuilder f(kRecordFork, kMiscForkExec);
    f.u32(static_cast<std::uint32_t>(s->tgid)).u32(static_cast<std::uint32_t>(parent));
    f.u32(static_cast<std::uint32_t>(tid)).u32(static_cast<std::uint32_t>(parent)).u64(0);
    f.zeros(opts_.id_hdr_size);
    PK_TRY(emit(f.finish()));
    if (opts_.namespaces) PK_TRY(namespaces(tid, s->tgid));
    RecordBuilder c(kRecordComm, 0);
    c.u32(static_cast<std::uint32_t>(s->tgid)).u32(static_cast<std::uint32_t>(tid));
    c.string(s->name, 8).zeros(opts_.id_hdr_size);
    PK_TRY(emit(c.finish()));
    if (tid == pid && !s->kernel_thread) PK_TRY(mmaps(pid, tid));
  }
  return ok();
}

Status Synthesizer::all_threads() {
  for (pid_t pid : numeric_entries(paths_.procfs)) PK_TRY(full_thread_group(pid));
  return ok();
}

std::vector<std::uint8_t> thread_map_record(const std::vector<pid_t>& threads,
                                            const std::vector<std::string>& comms) {
  RecordBuilder b(kRecordThreadMap, 0);
  b.u64(threads.size());
  for (std::size_t i = 0; i < threads.size(); ++i) {
    b.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(threads[i])));
    b.fixed_string(i < comms.size() ? comms[i] : std::string_view(), 16);
  }
  return b.finish();
}

std::vector<std::uint8_t> cpu_map_record(const std::vector<int>& cpus) {
  RecordBuilder b(kRecordCpuMap, 0);
  const bool any = !cpus.empty() && cpus.front() == -1;
  const std::size_t nr = cpus.size();
  const int min = nr > (any ? 1u : 0u) ? cpus[any ? 1 : 0] : -1;
  const int max = nr ? cpus.back() : -1;
  if (nr > (any ? 1u : 0u) && static_cast<std::size_t>(max - min + 1) == nr - (any ? 1 : 0)) {
    b.u16(2)
        .u8(any ? 1 : 0)
        .u8(0)
        .u16(static_cast<std::uint16_t>(min))
        .u16(static_cast<std::uint16_t>(max));
    return b.finish();
  }
  const std::size_t size_cpus = 2 + 2 + nr * 2;
  const std::size_t words = max >= 0 ? (static_cast<std::size_t>(max) + 32) / 32 : 0;
  const std::size_t size_mask = 2 + 4 + words * 4;
  if (any || size_cpus < size_mask) {
    b.u16(0).u16(static_cast<std::uint16_t>(nr));
    for (int c : cpus) b.u16(static_cast<std::uint16_t>(c));
    b.zeros(align_up(size_cpus, 8) - size_cpus);
    return b.finish();
  }
  b.u16(1).u16(static_cast<std::uint16_t>(words)).u16(4);
  std::vector<std::uint32_t> mask(words, 0);
  for (int c : cpus) mask[static_cast<std::size_t>(c) / 32] |= 1u << (c % 32);
  for (auto w : mask) b.u32(w);
  b.zeros(align_up(size_mask, 8) - size_mask);
  return b.finish();
}

std::vector<std::uint8_t> id_index_record(const std::vector<IdIndexEntry>& entries) {
  // A record holds at most (64 KiB - header) / 32 entries; more go in more records.
  constexpr std::size_t kMax = (0xffff - 16) / 32;
  std::vector<std::uint8_t> out;
  for (std::size_t at = 0; at < entries.size() || (at == 0 && entries.empty()); at += kMax) {
    std::size_t n = std::min(kMax, entries.size() - at);
    RecordBuilder b(kRecordIdIndex, 0);
    b.u64(n);
    for (std::size_t i = at; i < at + n; ++i)
      b.u64(entries[i].id).u64(entries[i].idx).u64(entries[i].cpu).u64(entries[i].tid);
    b.finish_into(out);
    if (entries.empty()) break;
  }
  return out;
}

std::vector<std::uint8_t> time_conv_record(const TimeConversion& tc) {
  RecordBuilder b(kRecordTimeConv, 0);
  b.u64(tc.time_shift).u64(tc.time_mult).u64(tc.time_zero).u64(tc.time_cycles).u64(tc.time_mask);
  b.u8(tc.cap_user_time_zero ? 1 : 0).u8(tc.cap_user_time_short ? 1 : 0).zeros(6);
  return b.finish();
}

namespace {
// perf sizes these records as sizeof(struct perf_record_event_update), 40
// bytes with its union, plus the payload, rounded up to 8.
std::vector<std::uint8_t> event_update(std::uint64_t type, std::uint64_t id, Bytes payload) {
  RecordBuilder b(kRecordEventUpdate, 0);
  b.u64(type).u64(id).bytes(payload);
  b.zeros(align_up(40 + payload.size(), 8) - b.size());
  return b.finish();
}
}  // namespace

std::vector<std::uint8_t> event_update_name_record(std::uint64_t id, std::string_view name) {
  std::vector<std::uint8_t> p(name.begin(), name.end());
  p.push_back(0);
  return event_update(2, id, p);
}

std::vector<std::uint8_t> event_update_unit_record(std::uint64_t id, std::string_view unit) {
  std::vector<std::uint8_t> p(unit.begin(), unit.end());
  p.push_back(0);
  return event_update(0, id, p);
}

std::vector<std::uint8_t> event_update_scale_record(std::uint64_t id, double scale) {
  std::vector<std::uint8_t> p(8);
  std::memcpy(p.data(), &scale, 8);
  return event_update(1, id, p);
}

std::vector<std::uint8_t> header_only_record(std::uint32_t type) {
  return RecordBuilder(type, 0).finish();
}

}  // namespace perfkit::capture
