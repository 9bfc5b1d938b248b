#include "analysis/tracepoint.h"

#include <event-parse.h>
#include <trace-seq.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "analysis/session.h"
#include "base/bytes.h"

namespace perfkit::analysis {

namespace {

// A reader over the tracing data with the file's byte order for numbers.
class TraceDataCursor {
 public:
  TraceDataCursor(Bytes b) : b_(b) {}
  bool big_endian = false;

  bool bytes(std::size_t n, Bytes& out) {
    if (n > b_.size() - at_) return false;
    out = b_.subspan(at_, n);
    at_ += n;
    return true;
  }
  bool u32(std::uint32_t& v) {
    Bytes x;
    if (!bytes(4, x)) return false;
    v = load<std::uint32_t>(x.data(), swap());
    return true;
  }
  bool u64(std::uint64_t& v) {
    Bytes x;
    if (!bytes(8, x)) return false;
    v = load<std::uint64_t>(x.data(), swap());
    return true;
  }
  bool cstring(std::string& s) {
    const void* nul = std::memchr(b_.data() + at_, 0, b_.size() - at_);
    if (!nul) return false;
    std::size_t n = static_cast<const std::uint8_t*>(nul) - (b_.data() + at_);
    s.assign(reinterpret_cast<const char*>(b_.data() + at_), n);
    at_ += n + 1;
    return true;
  }
  std::size_t offset() const { return at_; }
  bool swap() const { return big_endian != (std::endian::native == std::endian::big); }

 private:
  Bytes b_;
  std::size_t at_ = 0;
};

Error truncated(std::string_view what, std::size_t at) {
  return make_error("tracing data: {} runs past the end (offset {:#x})", what, at);
}

}  // namespace

TracepointFormatter::TracepointFormatter() = default;

TracepointFormatter::~TracepointFormatter() {
  if (tep_) tep_free(tep_);
}

Expected<std::unique_ptr<TracepointFormatter>> TracepointFormatter::create(
    Bytes data, const std::function<void(const std::string&)>& warn) {
  std::unique_ptr<TracepointFormatter> f(new TracepointFormatter());
  TraceDataCursor c(data);
  Bytes magic;
  if (!c.bytes(10, magic) || std::memcmp(magic.data(), "\027\010\104tracing", 10) != 0)
    return make_error("tracing data: no \"tracing\" magic at its start");
  std::string version;
  Bytes b;
  if (!c.cstring(version) || !c.bytes(1, b)) return truncated("the version", c.offset());
  c.big_endian = b[0] != 0;
  f->tep_ = tep_alloc();
  if (!f->tep_) return make_error("tracing data: out of memory");
  tep_handle* tep = f->tep_;
  tep_set_flag(tep, TEP_NSEC_OUTPUT);
  tep_set_file_bigendian(tep, c.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  std::uint32_t page_size = 0;
  if (!c.bytes(1, b) || !c.u32(page_size)) return truncated("the long and page sizes", c.offset());
  tep_set_long_size(tep, b[0]);
  tep_set_page_size(tep, static_cast<int>(page_size));

  std::uint64_t size = 0;
  if (!c.bytes(12, b) || std::memcmp(b.data(), "header_page", 12) != 0)
    return make_error("tracing data: no header_page at offset {:#x}", c.offset());
  if (!c.u64(size) || !c.bytes(size, b)) return truncated("header_page", c.offset());
  std::vector<char> text(b.begin(), b.end());
  if (!tep_parse_header_page(tep, text.data(), text.size(), tep_get_long_size(tep)))
    tep_set_long_size(tep, tep_get_header_page_size(tep));
  if (!c.bytes(13, b) || std::memcmp(b.data(), "header_event", 13) != 0)
    return make_error("tracing data: no header_event at offset {:#x}", c.offset());
  if (!c.u64(size) || !c.bytes(size, b)) return truncated("header_event", c.offset());

  auto parse = [&](Bytes fmtb, const char* sys) {
    if (tep_parse_event(tep, reinterpret_cast<const char*>(fmtb.data()), fmtb.size(), sys) != 0 &&
        warn)
      warn(fmt::format("tracing data: cannot parse an event format of {}", sys));
  };
  std::uint32_t count = 0;
  if (!c.u32(count)) return truncated("the ftrace formats", c.offset());
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!c.u64(size) || !c.bytes(size, b)) return truncated("an ftrace format", c.offset());
    parse(b, "ftrace");
  }
  std::uint32_t systems = 0;
  if (!c.u32(systems)) return truncated("the event systems", c.offset());
  for (std::uint32_t s = 0; s < systems; ++s) {
    std::string sys;
    if (!c.cstring(sys) || !c.u32(count)) return truncated("an event system", c.offset());
    for (std::uint32_t i = 0; i < count; ++i) {
      if (!c.u64(size) || !c.bytes(size, b)) return truncated("an event format", c.offset());
      parse(b, sys.c_str());
    }
  }
  std::uint32_t size32 = 0;
  if (!c.u32(size32) || !c.bytes(size32, b)) return truncated("kallsyms", c.offset());
  if (!c.u32(size32) || !c.bytes(size32, b)) return truncated("printk formats", c.offset());
  if (size32) {
    // "ADDR : FORMAT" lines; perf skips the blank after the colon.
    std::string printk(b.begin(), b.end());
    std::size_t at = 0;
    while (at < printk.size()) {
      std::size_t nl = printk.find('\n', at);
      if (nl == std::string::npos) nl = printk.size();
      std::string line = printk.substr(at, nl - at);
      at = nl + 1;
      if (line.empty()) continue;
      auto colon = line.find(':');
      if (colon == std::string::npos || colon + 1 > line.size()) continue;
      unsigned long long addr = std::strtoull(line.c_str(), nullptr, 16);
      std::string fmtstr = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
      tep_register_print_string(tep, fmtstr.c_str(), addr);
    }
  }
  if (std::atof(version.c_str()) >= 0.6) {
    if (c.u64(size) && c.bytes(size, b)) {
      std::string cmdlines(b.begin(), b.end());
      std::size_t at = 0;
      while (at < cmdlines.size()) {
        std::size_t nl = cmdlines.find('\n', at);
        if (nl == std::string::npos) nl = cmdlines.size();
        std::string line = cmdlines.substr(at, nl - at);
        at = nl + 1;
        int pid = 0;
        char comm[17];
        if (std::sscanf(line.c_str(), "%d %16s", &pid, comm) == 2)
          tep_register_comm(tep, comm, pid);
      }
    }
  }
  return f;
}

char* TracepointFormatter::resolve(void* priv, unsigned long long* addr, char** mod) {
  auto* self = static_cast<TracepointFormatter*>(priv);
  std::uint64_t start = 0;
  if (!self->resolver_ ||
      !self->resolver_(*addr, self->resolved_name_, start, self->resolved_module_))
    return nullptr;
  *addr = start;
  *mod = self->resolved_module_.empty() ? nullptr : self->resolved_module_.data();
  return self->resolved_name_.data();
}

void TracepointFormatter::set_kernel_resolver(KernelSymbolResolver r) {
  resolver_ = std::move(r);
  tep_set_function_resolver(tep_, &TracepointFormatter::resolve, this);
}

bool TracepointFormatter::knows(std::uint64_t id) const {
  return tep_find_event(tep_, static_cast<int>(id)) != nullptr;
}

std::string TracepointFormatter::event_name(std::uint64_t id) const {
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  if (!e) return {};
  return fmt::format("{}:{}", e->system, e->name);
}

void TracepointFormatter::format(std::uint64_t id, int cpu, Bytes raw, fmt::memory_buffer& out) {
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  if (!e) return;
  tep_record record;
  std::memset(&record, 0, sizeof(record));
  record.cpu = cpu;
  record.size = static_cast<int>(raw.size());
  record.data = const_cast<std::uint8_t*>(raw.data());
  trace_seq s;
  trace_seq_init(&s);
  tep_print_event(tep_, &s, &record, "%s", TEP_PRINT_INFO);
  out.append(s.buffer, s.buffer + s.len);
  trace_seq_destroy(&s);
}

std::unique_ptr<TracepointFormatter> session_tracepoint_formatter(
    Session& session, const std::function<void(const std::string&)>& warn) {
  Bytes td = session.reader().tracing_data();
  if (td.empty()) return nullptr;
  auto tp = TracepointFormatter::create(td, warn);
  if (!tp) {
    if (warn) warn(tp.error().message());
    return nullptr;
  }
  machine::Machine* m = &session.machine();
  (*tp)->set_kernel_resolver(
      [m](std::uint64_t addr, std::string& name, std::uint64_t& start, std::string& module) {
        machine::Thread& idle = m->findnew_thread(0, 0);
        machine::Location loc = m->resolve(idle, abi::kMiscKernel, addr);
        if (loc.symbol < 0 || !loc.map) return false;
        name = std::string(m->symbol_name(loc));
        start = loc.map->unmap_ip(loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol)).start);
        module = loc.dso->kind == machine::DsoKind::kModule ? loc.dso->short_name : "";
        return true;
      });
  return std::move(*tp);
}

}  // namespace perfkit::analysis
