#include "script/dlfilter.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "abi/attr.h"
#include "abi/perf_event.h"
#include "record/sample.h"

namespace perfkit::script {

using namespace perfkit::abi;

namespace {

// The C ABI of perf/perf_dlfilter.h (perf-dlfilter(1)): the layouts filters
// are compiled against, field for field.
struct DlSample {
  std::uint32_t size;
  std::uint16_t ins_lat, p_stage_cyc;
  std::uint64_t ip;
  std::int32_t pid, tid;
  std::uint64_t time, addr, id, stream_id, period, weight, transaction, insn_cnt, cyc_cnt;
  std::int32_t cpu;
  std::uint32_t flags;
  std::uint64_t data_src, phys_addr, data_page_size, code_page_size, cgroup;
  std::uint8_t cpumode, addr_correlates_sym;
  std::uint16_t misc;
  std::uint32_t raw_size;
  const void* raw_data;
  std::uint64_t brstack_nr;
  const void* brstack;
  std::uint64_t raw_callchain_nr;
  const std::uint64_t* raw_callchain;
  const char* event;
  std::int32_t machine_pid, vcpu;
};
static_assert(sizeof(DlSample) == 208 && offsetof(DlSample, event) == 192);

struct DlAl {
  std::uint32_t size, symoff;
  const char* sym;
  std::uint64_t addr, sym_start, sym_end;
  const char* dso;
  std::uint8_t sym_binding, is_64_bit, is_kernel_ip;
  std::uint32_t buildid_size;
  const std::uint8_t* buildid;
  std::uint8_t filtered;
  const char* comm;
};
static_assert(sizeof(DlAl) == 80 && offsetof(DlAl, comm) == 72);

struct DlFns {
  const DlAl* (*resolve_ip)(void* ctx);
  const DlAl* (*resolve_addr)(void* ctx);
  char** (*args)(void* ctx, int* dlargc);
  std::int32_t (*resolve_address)(void* ctx, std::uint64_t address, DlAl* al);
  const std::uint8_t* (*insn)(void* ctx, std::uint32_t* length);
  const char* (*srcline)(void* ctx, std::uint32_t* line_number);
  void* (*attr)(void* ctx);
  std::int32_t (*object_code)(void* ctx, std::uint64_t ip, void* buf, std::uint32_t len);
  void* (*reserved[120])(void*);
};
static_assert(sizeof(DlFns) == 1024);

using StartFn = int (*)(void**, void*);
using StopFn = int (*)(void*, void*);
using FilterFn = int (*)(void*, const DlSample*, void*);
using DescFn = const char* (*)(const char**);

// perf's exec path, where its dlfilters directory is: $PERF_EXEC_PATH, else
// where Debian's perf installs it.
std::string exec_path() {
  const char* env = std::getenv("PERF_EXEC_PATH");
  return env && *env ? env : "/usr/lib/perf-core";
}

// perf's find_dlfilter: a path as it is; a name in the current directory,
// then in the dlfilters directory, else for the dynamic linker to find.
std::string find_filter(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  if (::access(name.c_str(), R_OK) == 0) return "./" + name;
  std::string in_exec = exec_path() + "/dlfilters/" + name;
  if (::access(in_exec.c_str(), R_OK) == 0) return in_exec;
  return name;
}

// perf's machine__kernel_ip on x86-64.
bool kernel_ip(std::uint64_t ip) { return ip >= 0xffff800000000000ULL; }

// perf's sample_addr_correlates_sym: page faults, and branch instructions
// sampled at every one (BTS).
bool addr_correlates_sym(const EventAttr& a) {
  if (a.type == kTypeSoftware && (a.config == 2 || a.config == 5 || a.config == 6)) return true;
  return a.type == kTypeHardware && a.config == 4 && a.sample_period == 1 && !a.has(kAttrFreq);
}

}  // namespace

struct DlFilter::Impl {
  DlFilterHost* host = nullptr;
  std::string path;
  void* handle = nullptr;
  void* data = nullptr;
  StartFn start = nullptr;
  StopFn stop = nullptr;
  FilterFn filter_event = nullptr, filter_event_early = nullptr;
  std::vector<std::string> args;
  std::vector<char*> argv;
  bool stopped = false;
  // The sample being filtered (ctx_valid while set).
  const session::ResolvedSample* sample = nullptr;
  DlSample d{};
  DlAl ip_al{}, addr_al{};
  std::string ip_sym, addr_sym, any_sym;
  bool have_ip_al = false, have_addr_al = false;
  std::vector<std::uint64_t> callchain;
  std::string srcfile;
  std::uint8_t insn[16] = {};
  std::vector<std::vector<std::uint8_t>> attrs;  // per event, the kernel's layout

  machine::Location locate(std::uint64_t address) {
    return host->machine().resolve(*sample->thread, sample->cpumode, address);
  }
  // `name` keeps the symbol's name NUL-terminated while the filter looks.
  void fill_al(const machine::Location& loc, DlAl& al, std::string& name) {
    al = DlAl{};
    al.size = sizeof(DlAl);
    if (loc.map && loc.dso) {
      al.dso = loc.dso->long_name.c_str();
      al.is_64_bit = 1;
      al.buildid_size = loc.dso->build_id.size;
      al.buildid = loc.dso->build_id.size ? loc.dso->build_id.bytes.data() : nullptr;
    }
    if (loc.symbol >= 0 && loc.dso && loc.dso->symbols) {
      const auto& sym = loc.dso->symbols->at(static_cast<std::size_t>(loc.symbol));
      name = std::string(host->machine().symbol_name(loc));
      al.sym = name.c_str();
      al.sym_start = sym.start;
      al.sym_end = sym.end;
      al.symoff = static_cast<std::uint32_t>(loc.addr - sym.start);
      al.sym_binding = sym.binding;
    }
    al.addr = loc.addr;
  }
};

namespace {

DlFilter::Impl* impl_of(void* ctx) { return static_cast<DlFilter::Impl*>(ctx); }

const DlAl* resolve_ip(void* ctx) {
  auto* f = impl_of(ctx);
  if (!f->sample) return nullptr;
  if (!f->have_ip_al) {
    f->fill_al(f->sample->loc, f->ip_al, f->ip_sym);
    f->ip_al.is_kernel_ip = kernel_ip(f->sample->sample->ip);
    const std::string* comm = f->sample->comm;
    f->ip_al.comm = comm ? comm->c_str() : ":-1";
    f->have_ip_al = true;
  }
  return &f->ip_al;
}

const DlAl* resolve_addr(void* ctx) {
  auto* f = impl_of(ctx);
  if (!f->sample || !f->d.addr_correlates_sym) return nullptr;
  if (!f->have_addr_al) {
    f->fill_al(f->locate(f->sample->sample->addr), f->addr_al, f->addr_sym);
    f->have_addr_al = true;
  }
  return &f->addr_al;
}

char** args(void* ctx, int* argc) {
  auto* f = impl_of(ctx);
  if (argc) *argc = static_cast<int>(f->args.size());
  return f->argv.data();
}

std::int32_t resolve_address(void* ctx, std::uint64_t address, DlAl* out) {
  auto* f = impl_of(ctx);
  if (!f->sample || !out) return -1;
  DlAl al;
  f->fill_al(f->locate(address), al, f->any_sym);
  al.is_kernel_ip = kernel_ip(address);
  const std::uint32_t size = out->size;
  std::memcpy(out, &al, std::min<std::size_t>(size, sizeof al));
  out->size = size;
  return 0;
}

const std::uint8_t* insn(void* ctx, std::uint32_t* length) {
  auto* f = impl_of(ctx);
  if (!f->sample) return nullptr;
  const std::size_t n = f->sample->loc.map ? f->host->fetch_insn(f->sample->loc, f->insn) : 0;
  if (length) *length = static_cast<std::uint32_t>(n);
  return n ? f->insn : nullptr;
}

const char* srcline(void* ctx, std::uint32_t* line) {
  auto* f = impl_of(ctx);
  if (!f->sample) return nullptr;
  auto [file, no] = f->host->srcline(f->sample->loc);
  if (line) *line = no;
  if (file.empty()) return nullptr;
  f->srcfile = std::move(file);
  return f->srcfile.c_str();
}

void* attr(void* ctx) {
  auto* f = impl_of(ctx);
  if (!f->sample) return nullptr;
  const std::size_t e = f->sample->event;
  if (f->attrs.size() <= e) f->attrs.resize(e + 1);
  auto& bytes = f->attrs[e];
  if (bytes.empty()) encode_attr(f->host->attr(e), kAttrSizeVer8, false, bytes);
  return bytes.data();
}

std::int32_t object_code(void* ctx, std::uint64_t ip, void* buf, std::uint32_t len) {
  auto* f = impl_of(ctx);
  if (!f->sample) return -1;
  const machine::Location loc = f->locate(ip);
  if (!loc.map) return -1;
  if (ip + len >= loc.map->end) len = static_cast<std::uint32_t>(loc.map->end - ip);
  return static_cast<std::int32_t>(f->host->read_code(loc, static_cast<std::uint8_t*>(buf), len));
}

}  // namespace

Expected<std::unique_ptr<DlFilter>> DlFilter::load(const std::string& name,
                                                   std::vector<std::string> argv,
                                                   DlFilterHost& host) {
  std::unique_ptr<DlFilter> f(new DlFilter());
  f->impl_ = std::make_unique<Impl>();
  Impl& i = *f->impl_;
  i.host = &host;
  i.path = find_filter(name);
  i.handle = ::dlopen(i.path.c_str(), RTLD_NOW);
  if (!i.handle) return make_error("dlopen failed for '{}': {}", i.path, ::dlerror());
  i.start = reinterpret_cast<StartFn>(::dlsym(i.handle, "start"));
  i.stop = reinterpret_cast<StopFn>(::dlsym(i.handle, "stop"));
  i.filter_event = reinterpret_cast<FilterFn>(::dlsym(i.handle, "filter_event"));
  i.filter_event_early = reinterpret_cast<FilterFn>(::dlsym(i.handle, "filter_event_early"));
  if (auto* fns = static_cast<DlFns*>(::dlsym(i.handle, "perf_dlfilter_fns"))) {
    DlFns table{};
    table.resolve_ip = resolve_ip;
    table.resolve_addr = resolve_addr;
    table.args = args;
    table.resolve_address = resolve_address;
    table.insn = insn;
    table.srcline = srcline;
    table.attr = attr;
    table.object_code = object_code;
    std::memcpy(fns, &table, sizeof table);
  }
  i.args = std::move(argv);
  for (auto& a : i.args) i.argv.push_back(a.data());
  i.argv.push_back(nullptr);
  if (i.start) {
    const int ret = i.start(&i.data, &i);
    if (ret < 0) return make_error("dlfilter {}: start failed ({})", i.path, ret);
  }
  return f;
}

DlFilter::~DlFilter() {
  if (!impl_) return;
  (void)stop();
  if (impl_->handle) ::dlclose(impl_->handle);
}

Expected<bool> DlFilter::drops(const session::ResolvedSample& s, bool early) {
  Impl& i = *impl_;
  FilterFn fn = early ? i.filter_event_early : i.filter_event;
  if (!fn) return false;
  const record::Sample& smp = *s.sample;
  const EventAttr& a = i.host->attr(s.event);
  const std::uint64_t st = smp.sample_type;
  DlSample& d = i.d;
  d = DlSample{};
  d.size = sizeof d;
  // perf's parse_sample: what the sample does not carry is -1 (its period
  // the attr's).
  d.ip = smp.ip;
  d.pid = (st & kSampleTid) ? static_cast<std::int32_t>(smp.pid) : -1;
  d.tid = (st & kSampleTid) ? static_cast<std::int32_t>(smp.tid) : -1;
  d.time = (st & kSampleTime) ? smp.time : ~0ULL;
  d.addr = smp.addr;
  d.id = (st & (kSampleId | kSampleIdentifier)) ? smp.id : ~0ULL;
  d.stream_id = (st & kSampleStreamId) ? smp.stream_id : ~0ULL;
  d.period = (st & kSamplePeriod) ? smp.period : a.sample_period;
  d.weight = (st & kSampleWeightStruct) ? smp.weight_var1() : smp.weight;
  d.ins_lat = (st & kSampleWeightStruct) ? smp.weight_var2() : 0;
  d.p_stage_cyc = (st & kSampleWeightStruct) ? smp.weight_var3() : 0;
  d.transaction = smp.transaction;
  d.cpu = (st & kSampleCpu) ? static_cast<std::int32_t>(smp.cpu) : -1;
  d.data_src = smp.data_src;
  d.phys_addr = smp.phys_addr;
  d.data_page_size = smp.data_page_size;
  d.code_page_size = smp.code_page_size;
  d.cgroup = smp.cgroup;
  d.cpumode = s.cpumode;
  d.misc = s.cpumode;
  d.raw_size = static_cast<std::uint32_t>(smp.raw.size());
  d.raw_data = smp.raw.empty() ? nullptr : smp.raw.data();
  // (a file of the other byte order would need its entries swapped: none given)
  d.brstack_nr = smp.branch_stack.swap ? 0 : smp.branch_stack.nr;
  d.brstack = d.brstack_nr ? smp.branch_stack.entries : nullptr;
  i.callchain.clear();
  for (std::size_t k = 0; k < smp.callchain.size(); ++k) i.callchain.push_back(smp.callchain[k]);
  d.raw_callchain_nr = i.callchain.size();
  d.raw_callchain = i.callchain.empty() ? nullptr : i.callchain.data();
  d.event = i.host->event_name(s.event).c_str();
  d.addr_correlates_sym = addr_correlates_sym(a);
  i.sample = &s;
  i.have_ip_al = i.have_addr_al = false;
  const int ret = fn(i.data, &d, &i);
  i.sample = nullptr;
  if (ret < 0)
    return make_error("dlfilter {}: {} returned {}", i.path,
                      early ? "filter_event_early" : "filter_event", ret);
  return ret > 0;
}

Status DlFilter::stop() {
  Impl& i = *impl_;
  if (i.stopped) return ok();
  i.stopped = true;
  if (!i.stop) return ok();
  const int ret = i.stop(i.data, &i);
  if (ret < 0) return make_error("dlfilter {}: stop failed ({})", i.path, ret);
  return ok();
}

std::string DlFilter::list() {
  std::string out = "List of available dlfilters:\n";
  for (const std::string& dir : {std::string("."), exec_path() + "/dlfilters"}) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() < 4 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
      void* h = ::dlopen((dir + "/" + name).c_str(), RTLD_NOW);
      if (!h) continue;
      if (!::dlsym(h, "filter_event") && !::dlsym(h, "filter_event_early")) {
        ::dlclose(h);
        continue;
      }
      auto desc_fn = reinterpret_cast<DescFn>(::dlsym(h, "filter_description"));
      const char* long_desc = nullptr;
      const char* desc = desc_fn ? desc_fn(&long_desc) : nullptr;
      out += fmt::format("  {:<36} {}\n", name, desc ? desc : "");
      ::dlclose(h);
    }
    ::closedir(d);
  }
  return out;
}

}  // namespace perfkit::script
