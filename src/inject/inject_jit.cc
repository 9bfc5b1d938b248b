#include "inject/inject_jit.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "abi/perf_event.h"
#include "base/bytes.h"
#include "base/mapped_file.h"
#include "elf/jit_elf.h"
#include "record/encode.h"
#include "record/records.h"

namespace perfkit::inject {

namespace {

constexpr std::uint32_t kMagic = 0x4A695444;  // "JiTD" in the writer's byte order
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kFlagArchTimestamp = 1;
constexpr std::uint32_t kHeaderSize = 40, kPrefixSize = 16;
constexpr std::int32_t kClockMonotonic = 1;
enum RecordId : std::uint32_t {
  kCodeLoad = 0,
  kCodeMove = 1,
  kDebugInfo = 2,
  kCodeClose = 3,
  kUnwindingInfo = 4,
};

// perf's jit_detect: a file named jit-PID.dump, PID the mapping process's.
bool is_jitdump(std::string_view name, std::uint32_t pid) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view base = name.substr(slash + 1);
  if (!base.starts_with("jit-")) return false;
  base.remove_prefix(4);
  std::size_t n = 0;
  std::uint64_t value = 0;
  while (n < base.size() && std::isdigit(static_cast<unsigned char>(base[n])))
    value = value * 10 + static_cast<std::uint64_t>(base[n++] - '0');
  if (n == 0 || (pid && value != pid)) return false;
  return base.substr(n) == ".dump";
}

// The maps a JIT's code lives in, which its images stand in for.
bool is_anonymous(std::string_view name) {
  return name.starts_with("//anon") || name.starts_with("[anon:") || name.starts_with("/memfd:");
}

// A jitdump's bytes, read in its writer's byte order.
struct DumpReader {
  Bytes data;
  bool swap = false;
  template <class T>
  T at(std::size_t off) const {
    return load<T>(data.data() + off, swap);
  }
  // The NUL-terminated string at `off` within [off, end), or nullopt.
  std::optional<std::string_view> str(std::size_t off, std::size_t end) const {
    const auto* p = static_cast<const std::uint8_t*>(
        std::memchr(data.data() + off, 0, end > off ? end - off : 0));
    if (!p) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(data.data() + off),
                            static_cast<std::size_t>(p - (data.data() + off)));
  }
};

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

void JitInjector::time_conv(const record::RecordView& v) {
  if (v.bytes.size() < 32) return;
  time_shift_ = load<std::uint64_t>(v.bytes.data() + 8, v.swap);
  time_mult_ = load<std::uint64_t>(v.bytes.data() + 16, v.swap);
  time_zero_ = load<std::uint64_t>(v.bytes.data() + 24, v.swap);
}

std::uint64_t JitInjector::perf_time(std::uint64_t stamp) const {
  if (!arch_time_ || time_shift_ >= 64) return stamp;
  const std::uint64_t quot = stamp >> time_shift_;
  const std::uint64_t rem = stamp & ((std::uint64_t{1} << time_shift_) - 1);
  return time_zero_ + quot * time_mult_ + ((rem * time_mult_) >> time_shift_);
}

Expected<JitInjector::Action> JitInjector::map(const record::RecordView& v, bool swap_out,
                                               std::vector<std::uint8_t>& out) {
  std::string_view name;
  std::uint32_t pid = 0;
  if (v.type == abi::kRecordMmap) {
    PK_ASSIGN(auto m, record::parse_mmap(v));
    name = m.filename;
    pid = m.pid;
  } else {
    PK_ASSIGN(auto m, record::parse_mmap2(v));
    name = m.filename;
    pid = m.pid;
  }
  if (!is_jitdump(name, pid))
    return pids_.count(pid) && is_anonymous(name) ? Action::kDrop : Action::kWrite;
  if (!pids_.insert(pid).second) return Action::kDrop;  // injected already
  out.clear();
  PK_TRY(inject_dump(std::string(name), swap_out, out));
  return Action::kReplace;
}

Status JitInjector::inject_dump(const std::string& path, bool swap_out,
                                std::vector<std::uint8_t>& out) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return make_error("cannot open the jitdump: {}", mapped.error().message());
  const Bytes bytes = mapped->bytes();
  DumpReader d{bytes, false};
  if (bytes.size() < kHeaderSize) return make_error("{}: not a jitdump (too short)", path);
  const std::uint32_t magic = d.at<std::uint32_t>(0);
  if (magic != kMagic) {
    d.swap = true;
    if (d.at<std::uint32_t>(0) != kMagic) return make_error("{}: not a jitdump (bad magic)", path);
  }
  if (d.at<std::uint32_t>(4) > kVersion)
    return make_error("wrong jitdump version {}, expected {}", d.at<std::uint32_t>(4), kVersion);
  const std::uint32_t header_size = d.at<std::uint32_t>(8);
  arch_time_ = d.at<std::uint64_t>(32) & kFlagArchTimestamp;
  if (arch_time_ && !time_mult_)
    return make_error("jitdump file uses arch timestamps but there is no timestamp conversion");
  if (!arch_time_)
    for (const auto& e : in_.events().events())
      if (!(e.attr.flags & abi::kAttrUseClockid) || e.attr.clockid != kClockMonotonic)
        return make_error("error, jitted code must be sampled with perf record -k 1");
  const abi::RecordLayout& layout = in_.events()[0].layout;
  const std::string dir = dir_of(path);
  std::vector<elf::JitLine> lines;  // DEBUG_INFO for the next load
  auto emit_map = [&](std::uint32_t pid, std::uint32_t tid, std::uint64_t start, std::uint64_t len,
                      std::uint64_t index, std::uint64_t stamp) -> Status {
    const std::string so = fmt::format("{}/jitted-{}-{}.so", dir, pid, index);
    struct stat st {};
    if (::stat(so.c_str(), &st) != 0)
      return make_error("{}: cannot stat: {}", so, std::strerror(errno));
    record::RecordBuilder b(abi::kRecordMmap2, abi::kMiscUser, swap_out);
    b.u32(pid).u32(tid).u64(start).u64(len).u64(elf::kJitTextOffset);
    b.u32(major(st.st_dev)).u32(minor(st.st_dev)).u64(st.st_ino).u64(1);
    b.u32(st.st_mode).u32(MAP_SHARED).string(so, 8);
    record::SampleId id;
    id.pid = pid;
    id.tid = tid;
    id.time = perf_time(stamp);
    b.sample_id(id, layout);
    b.finish_into(out);
    return ok();
  };
  for (std::size_t off = header_size; off + kPrefixSize <= bytes.size();) {
    const std::uint32_t kind = d.at<std::uint32_t>(off);
    const std::uint32_t size = d.at<std::uint32_t>(off + 4);
    const std::uint64_t stamp = d.at<std::uint64_t>(off + 8);
    if (size < kPrefixSize || off + size > bytes.size()) break;  // cut short: what came is kept
    const std::size_t body = off + kPrefixSize, end = off + size;
    if (kind == kCodeClose) break;
    if (kind == kCodeLoad && end >= body + 40) {
      const auto pid = d.at<std::uint32_t>(body), tid = d.at<std::uint32_t>(body + 4);
      const auto addr = d.at<std::uint64_t>(body + 16), csize = d.at<std::uint64_t>(body + 24);
      const auto index = d.at<std::uint64_t>(body + 32);
      const auto name = d.str(body + 40, end);
      if (!name || body + 40 + name->size() + 1 + csize > end)
        return make_error("{}: code load record at {:#x} is malformed", path, off);
      elf::JitImage img;
      img.load_address = addr;
      img.symbol = *name;
      img.code = Bytes(bytes.data() + body + 40 + name->size() + 1, csize);
      img.lines = std::move(lines);
      lines.clear();
      const std::string so = fmt::format("{}/jitted-{}-{}.so", dir, pid, index);
      PK_TRY(elf::write_jit_elf(so, img));
      images_.emplace_back(so, elf::jit_build_id(img));
      PK_TRY(emit_map(pid, tid, addr, csize, index, stamp));
    } else if (kind == kCodeMove && end >= body + 48) {
      const auto pid = d.at<std::uint32_t>(body), tid = d.at<std::uint32_t>(body + 4);
      PK_TRY(emit_map(pid, tid, d.at<std::uint64_t>(body + 24), d.at<std::uint64_t>(body + 32),
                      d.at<std::uint64_t>(body + 40), stamp));
    } else if (kind == kDebugInfo && end >= body + 16) {
      const auto n = d.at<std::uint64_t>(body + 8);
      lines.clear();
      std::size_t at = body + 16;
      for (std::uint64_t i = 0; i < n && at + 16 < end; ++i) {
        const auto file = d.str(at + 16, end);
        if (!file) break;
        // "\xff" for the file of the entry before (the specification's shorthand).
        std::string name =
            *file == "\xff" && !lines.empty() ? lines.back().file : std::string(*file);
        lines.push_back({d.at<std::uint64_t>(at), d.at<std::uint32_t>(at + 8), std::move(name)});
        at += 16 + file->size() + 1;
      }
    }
    off = end;
  }
  return ok();
}

}  // namespace perfkit::inject
