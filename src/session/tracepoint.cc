#include "session/tracepoint.h"

#include <event-parse.h>
#include <trace-seq.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/bytes.h"
#include "base/cursor.h"
#include "session/session.h"

namespace perfkit::session {

namespace {

Error truncated(const Cursor& c, std::string_view what) {
  return make_error("tracing data: {} runs past the end (offset {:#x})", what, c.fail_offset());
}

// The next `size` bytes after a size field of 4 or 8 bytes.
Bytes sized_block(Cursor& c, bool wide) {
  const std::uint64_t size = wide ? c.u64() : c.u32();
  return c.bytes(size);
}

// The page and event headers: the long and page sizes, header_page and
// header_event. Errors name what is missing or cut short.
Status read_headers(Cursor& c, tep_handle* tep) {
  const std::uint8_t long_size = c.u8();
  const std::uint32_t page_size = c.u32();
  if (!c.ok()) return truncated(c, "the long and page sizes");
  tep_set_long_size(tep, long_size);
  tep_set_page_size(tep, static_cast<int>(page_size));
  if (c.fixed_string(12) != "header_page")
    return make_error("tracing data: no header_page at offset {:#x}", c.file_offset());
  Bytes page = sized_block(c, true);
  if (!c.ok()) return truncated(c, "header_page");
  std::vector<char> text(page.begin(), page.end());
  if (!tep_parse_header_page(tep, text.data(), text.size(), tep_get_long_size(tep)))
    tep_set_long_size(tep, tep_get_header_page_size(tep));
  if (c.fixed_string(13) != "header_event")
    return make_error("tracing data: no header_event at offset {:#x}", c.file_offset());
  sized_block(c, true);
  if (!c.ok()) return truncated(c, "header_event");
  return ok();
}

// The ftrace formats, then each event system's. A format libtraceevent
// cannot parse is warned about and left out.
Status read_formats(Cursor& c, tep_handle* tep,
                    const std::function<void(const std::string&)>& warn) {
  auto parse = [&](Bytes fmtb, const char* sys) {
    if (tep_parse_event(tep, reinterpret_cast<const char*>(fmtb.data()), fmtb.size(), sys) != 0 &&
        warn)
      warn(fmt::format("tracing data: cannot parse an event format of {}", sys));
  };
  std::uint32_t count = c.u32();
  if (!c.ok()) return truncated(c, "the ftrace formats");
  for (std::uint32_t i = 0; i < count; ++i) {
    Bytes b = sized_block(c, true);
    if (!c.ok()) return truncated(c, "an ftrace format");
    parse(b, "ftrace");
  }
  const std::uint32_t systems = c.u32();
  if (!c.ok()) return truncated(c, "the event systems");
  for (std::uint32_t s = 0; s < systems; ++s) {
    const std::string sys(c.cstr());
    count = c.u32();
    if (!c.ok()) return truncated(c, "an event system");
    for (std::uint32_t i = 0; i < count; ++i) {
      Bytes b = sized_block(c, true);
      if (!c.ok()) return truncated(c, "an event format");
      parse(b, sys.c_str());
    }
  }
  return ok();
}

// Calls `line` with each non-empty line of `text`.
template <class F>
void for_each_line(Bytes text, F&& line) {
  std::string_view t(reinterpret_cast<const char*>(text.data()), text.size());
  while (!t.empty()) {
    const std::size_t nl = t.find('\n');
    std::string_view l = t.substr(0, nl);
    t = nl == std::string_view::npos ? std::string_view() : t.substr(nl + 1);
    if (!l.empty()) line(std::string(l));
  }
}

// The printk formats: "ADDR : FORMAT" lines; perf skips the blank after the
// colon.
void register_printk(Bytes text, tep_handle* tep) {
  for_each_line(text, [&](const std::string& line) {
    auto colon = line.find(':');
    if (colon == std::string::npos) return;
    unsigned long long addr = std::strtoull(line.c_str(), nullptr, 16);
    std::string fmtstr = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    tep_register_print_string(tep, fmtstr.c_str(), addr);
  });
}

// The saved cmdlines: "PID COMM" lines.
void register_cmdlines(Bytes text, tep_handle* tep) {
  for_each_line(text, [&](const std::string& line) {
    int pid = 0;
    char comm[17];
    if (std::sscanf(line.c_str(), "%d %16s", &pid, comm) == 2) tep_register_comm(tep, comm, pid);
  });
}

}  // namespace

TracepointFormatter::TracepointFormatter() = default;

TracepointFormatter::~TracepointFormatter() {
  if (tep_) tep_free(tep_);
}

Expected<std::unique_ptr<TracepointFormatter>> TracepointFormatter::create(
    Bytes data, const std::function<void(const std::string&)>& warn) {
  std::unique_ptr<TracepointFormatter> f(new TracepointFormatter());
  Cursor head(data, false);
  if (head.fixed_string(10) != std::string_view("\027\010\104tracing", 10))
    return make_error("tracing data: no \"tracing\" magic at its start");
  const std::string version(head.cstr());
  const bool big_endian = head.u8() != 0;
  if (!head.ok()) return truncated(head, "the version");
  // The rest in the byte order the data says it has.
  Cursor c(data, big_endian != (std::endian::native == std::endian::big));
  c.seek(head.position());
  f->tep_ = tep_alloc();
  if (!f->tep_) return make_error("tracing data: out of memory");
  tep_handle* tep = f->tep_;
  tep_set_flag(tep, TEP_NSEC_OUTPUT);
  tep_set_file_bigendian(tep, big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  PK_TRY(read_headers(c, tep));
  PK_TRY(read_formats(c, tep, warn));
  sized_block(c, false);
  if (!c.ok()) return truncated(c, "kallsyms");
  Bytes printk = sized_block(c, false);
  if (!c.ok()) return truncated(c, "printk formats");
  register_printk(printk, tep);
  if (std::atof(version.c_str()) >= 0.6) {
    Bytes cmdlines = sized_block(c, true);
    if (c.ok()) register_cmdlines(cmdlines, tep);
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

std::vector<std::string> TracepointFormatter::field_names(std::uint64_t id) const {
  std::vector<std::string> names;
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  if (!e) return names;
  for (tep_format_field* f = e->format.fields; f; f = f->next) names.emplace_back(f->name);
  return names;
}

bool TracepointFormatter::number_field(std::uint64_t id, const char* name, Bytes raw,
                                       std::uint64_t& value) const {
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  tep_format_field* f = e ? tep_find_field(e, name) : nullptr;
  if (!f || f->offset < 0 || f->size <= 0 ||
      static_cast<std::size_t>(f->offset + f->size) > raw.size())
    return false;
  value = tep_read_number(tep_, raw.data() + f->offset, f->size);
  return true;
}

namespace {

// One field's value as perf's own (bundled) traceevent printed it for
// --raw-trace, whatever the print format says: a printable string array
// as text, other arrays as bytes in hex, pointers and longs in hex, other
// numbers in decimal by their signedness and size.
void print_field(tep_handle* tep, Bytes data, tep_format_field* f, trace_seq& s) {
  if (f->flags & TEP_FIELD_IS_ARRAY) {
    unsigned offset = static_cast<unsigned>(f->offset), len = static_cast<unsigned>(f->size);
    if (f->flags & TEP_FIELD_IS_DYNAMIC) {
      const auto v = static_cast<unsigned>(tep_read_number(tep, data.data() + f->offset, f->size));
      offset = v & 0xffff;
      len = v >> 16;
      if (f->flags & TEP_FIELD_IS_RELATIVE) offset += static_cast<unsigned>(f->offset + f->size);
    }
    if (offset > data.size() || len > data.size() - offset) return;
    const std::uint8_t* p = data.data() + offset;
    const bool printable = len > 0 &&
                           std::all_of(p, p + len - 1,
                                       [](std::uint8_t c) {
                                         return std::isprint(c) || c == '\n' || c == '\t' || c == 0;
                                       }) &&
                           p[len - 1] == 0;
    if ((f->flags & TEP_FIELD_IS_STRING) && printable) {
      trace_seq_printf(&s, "%s", reinterpret_cast<const char*>(p));
      return;
    }
    trace_seq_puts(&s, "ARRAY[");
    for (unsigned i = 0; i < len; ++i) trace_seq_printf(&s, i ? ", %02x" : "%02x", p[i]);
    trace_seq_putc(&s, ']');
    return;
  }
  if (static_cast<std::size_t>(f->offset) + static_cast<std::size_t>(f->size) > data.size()) return;
  const unsigned long long v = tep_read_number(tep, data.data() + f->offset, f->size);
  if (f->flags & TEP_FIELD_IS_POINTER) {
    trace_seq_printf(&s, "0x%llx", v);
  } else if (f->flags & TEP_FIELD_IS_SIGNED) {
    switch (f->size) {
      case 4:
        if (f->flags & TEP_FIELD_IS_LONG)
          trace_seq_printf(&s, "0x%x", static_cast<int>(v));
        else
          trace_seq_printf(&s, "%d", static_cast<int>(v));
        break;
      case 2:
        trace_seq_printf(&s, "%2d", static_cast<short>(v));
        break;
      case 1:
        trace_seq_printf(&s, "%1d", static_cast<signed char>(v));
        break;
      default:
        trace_seq_printf(&s, "%lld", static_cast<long long>(v));
    }
  } else if (f->flags & TEP_FIELD_IS_LONG) {
    trace_seq_printf(&s, "0x%llx", v);
  } else {
    trace_seq_printf(&s, "%llu", v);
  }
}

// Each field as " name=value".
void print_fields(tep_handle* tep, tep_event* e, Bytes data, trace_seq& s) {
  for (tep_format_field* f = e->format.fields; f; f = f->next) {
    trace_seq_printf(&s, " %s=", f->name);
    print_field(tep, data, f, s);
  }
}

}  // namespace

void TracepointFormatter::format(std::uint64_t id, int cpu, Bytes raw, fmt::memory_buffer& out,
                                 bool fields_only) {
  tep_event* e = tep_find_event(tep_, static_cast<int>(id));
  if (!e) return;
  tep_record record;
  std::memset(&record, 0, sizeof(record));
  record.cpu = cpu;
  record.size = static_cast<int>(raw.size());
  record.data = const_cast<std::uint8_t*>(raw.data());
  trace_seq s;
  trace_seq_init(&s);
  if (fields_only)
    print_fields(tep_, e, raw, s);
  else
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

}  // namespace perfkit::session
