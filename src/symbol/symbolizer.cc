#include "symbol/symbolizer.h"

#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <vector>

#include "base/mapped_file.h"
#include "elf/elf_file.h"
#include "elf/elf_symbols.h"
#include "elf/vdso.h"
#include "symbol/demangle.h"
#include "symbol/kallsyms.h"

namespace perfkit::symbol {

namespace {

bool is_regular_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dirname_of(std::string_view p) {
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? std::string(".") : std::string(p.substr(0, slash));
}

// perf compares a recorded build-id padded with zeros to 20 bytes equal to
// a shorter one read from a file.
bool same_build_id(const elf::BuildId& recorded, const elf::BuildId& file) {
  if (recorded.size > file.size && recorded.size == 20) {
    for (std::size_t i = 0; i < 20; ++i) {
      std::uint8_t want = i < file.size ? file.bytes[i] : 0;
      if (recorded.bytes[i] != want) return false;
    }
    return true;
  }
  return recorded == file;
}

void add_elf_symbols(SymbolTable& t, const std::vector<elf::RawSymbol>& raw, bool demangle) {
  std::string name;
  for (const auto& r : raw) {
    name = demangle ? symbol::demangle(r.name) : std::string(r.name);
    if (r.plt) name += "@plt";
    t.add(r.start, r.size, r.binding, r.type, name);
  }
}

}  // namespace

SymbolizerOptions symbolizer_options_from_env() {
  SymbolizerOptions o;
  if (const char* d = std::getenv("PERF_BUILDID_DIR"); d && *d) {
    o.buildid_dir = d;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    o.buildid_dir = std::string(h) + "/.debug";
  }
  if (const char* u = std::getenv("DEBUGINFOD_URLS"); u && *u) o.debuginfod = true;
  return o;
}

std::string buildid_cache_dir(const std::string& dir, std::string_view path,
                              const elf::BuildId& id) {
  std::string p = dir;
  if (!path.starts_with("/")) p += '/';
  p.append(path);
  return p + "/" + id.hex();
}

std::string buildid_link_path(const std::string& dir, const elf::BuildId& id) {
  std::string hex = id.hex();
  return dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2);
}

std::string buildid_cache_file(const std::string& dir, std::string_view path,
                               const elf::BuildId& id) {
  const char* leaf = path == "[vdso]"              ? "/vdso"
                     : path == "[kernel.kallsyms]" ? "/kallsyms"
                                                   : "/elf";
  return buildid_link_path(dir, id) + leaf;
}

Symbolizer::Symbolizer(SymbolizerOptions opts) : opts_(std::move(opts)) {
  // perf's --symfs DIR moves the build-id cache to DIR/.debug (even for
  // "/"), and takes "/" as no symfs otherwise: the running kernel's
  // kallsyms stay.
  symfs_given_ = !opts_.symfs.empty();
  if (symfs_given_) opts_.buildid_dir = opts_.symfs + "/.debug";
  if (opts_.symfs == "/") opts_.symfs.clear();
}

void Symbolizer::warn_missing(std::string_view path, const elf::BuildId& id) {
  if (!opts_.warn) return;
  if (!id.empty())
    opts_.warn(
        fmt::format("{} with build id {} not found, continuing without symbols", path, id.hex()));
  else
    opts_.warn(fmt::format("Failed to open {}, continuing without symbols", path));
}

LoadedSymbols DsoShare::get(const std::string& key, const std::function<LoadedSymbols()>& load) {
  std::unique_lock lock(mu_);
  auto it = loads_.find(key);
  if (it != loads_.end()) {
    std::shared_future<LoadedSymbols> f = it->second;
    lock.unlock();
    return f.get();
  }
  std::promise<LoadedSymbols> done;
  loads_.emplace(key, done.get_future().share());
  lock.unlock();
  LoadedSymbols loaded = load();
  done.set_value(loaded);
  return loaded;
}

const LoadedSymbols& Symbolizer::user_dso(std::string_view path, const elf::BuildId& id) {
  std::string key = id.empty() ? "path:" + std::string(path) : "bid:" + id.hex();
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  LoadedSymbols loaded = opts_.dso_share
                             ? opts_.dso_share->get(key, [&] { return load_user(path, id); })
                             : load_user(path, id);
  // (a name that is no path, "anon_inode:[perf_event]", names no file to miss)
  if (!loaded.found && !loaded.not_object && path.starts_with('/')) warn_missing(path, id);
  return cache_.emplace(key, std::move(loaded)).first->second;
}

LoadedSymbols Symbolizer::load_user(std::string_view path, const elf::BuildId& recorded) {
  LoadedSymbols out;
  out.table = std::make_shared<SymbolTable>();
  const std::string& symfs = opts_.symfs;
  std::string own = symfs + std::string(path);
  std::vector<std::string> candidates;
  std::string origins;  // each candidate's origin letter
  // Without a recorded build-id perf takes the one of the file on disk to
  // search the debug directories (but then refuses nothing).
  elf::BuildId id = recorded;
  auto self = elf::ElfFile::open(own);
  if (id.empty() && self) id = self->build_id();
  out.not_object = recorded.empty() && !self && is_regular_file(own);
  if (self) {
    if (auto link = self->debuglink()) {
      std::string dir = dirname_of(path);
      std::string first = symfs + dir + "/" + link->name;
      if (first != own) candidates.push_back(first), origins += 'l';
      candidates.push_back(symfs + dir + "/.debug/" + link->name), origins += 'l';
      candidates.push_back(symfs + opts_.debug_dir + dir + "/" + link->name), origins += 'l';
    }
  }
  if (!id.empty() && !opts_.buildid_dir.empty()) {
    candidates.push_back(buildid_cache_file(opts_.buildid_dir, path, id)), origins += 'B';
    candidates.push_back(buildid_link_path(opts_.buildid_dir, id) + "/debug"), origins += 'D';
  }
  candidates.push_back(symfs + opts_.debug_dir + std::string(path) + ".debug"), origins += 'f';
  candidates.push_back(symfs + opts_.debug_dir + std::string(path)), origins += 'u';
  if (!id.empty()) {
    std::string hex = id.hex();
    candidates.push_back(symfs + opts_.debug_dir + "/.build-id/" + hex.substr(0, 2) + "/" +
                         hex.substr(2) + ".debug");
    origins += 'b';
  }
  candidates.push_back(own), origins += 'd';
  if (opts_.debuginfod && !id.empty())
    for (std::string& p : debuginfod_.find(id)) candidates.push_back(std::move(p)), origins += 'd';

  std::optional<elf::ElfFile> syms, runtime;
  char syms_origin = '!', runtime_origin = '!';
  for (std::size_t ci = 0; ci < candidates.size(); ++ci) {
    const std::string& c = candidates[ci];
    if (!is_regular_file(c)) continue;
    auto f = elf::ElfFile::open(c);
    if (!f) continue;
    if (!recorded.empty() && !same_build_id(recorded, f->build_id())) continue;  // refused
    bool take_syms = !syms && f->has_symtab();
    bool take_runtime = !runtime && f->has_dynsym();
    if (take_syms) syms_origin = origins[ci];
    if (take_runtime || (!take_syms && !syms && !runtime && f->section(".gnu_debugdata")))
      runtime_origin = origins[ci];
    if (take_syms && take_runtime) {
      // One file serves both: open it twice rather than share ownership.
      auto again = elf::ElfFile::open(c);
      if (again) runtime.emplace(std::move(*again));
      syms.emplace(std::move(*f));
    } else if (take_syms) {
      syms.emplace(std::move(*f));
    } else if (take_runtime) {
      runtime.emplace(std::move(*f));
    } else if (!syms && !runtime && f->section(".gnu_debugdata")) {
      runtime.emplace(std::move(*f));
    }
    if (syms && runtime) break;
  }
  // perf loads [vdso] from its own process's vdso when nothing else matches
  // (not under a symfs, which its copy's path is looked for in).
  if (!syms && !runtime && path == "[vdso]" && !symfs_given_) {
    if (auto v = elf::own_vdso();
        v && (recorded.empty() || same_build_id(recorded, v->build_id()))) {
      auto again = elf::own_vdso();
      if (v->has_symtab()) syms.emplace(std::move(*v)), syms_origin = 'd';
      if (again) runtime.emplace(std::move(*again)), runtime_origin = 'd';
    }
  }
  if (!syms && !runtime) return out;
  const elf::ElfFile& run = runtime ? *runtime : *syms;
  std::optional<elf::ElfFile> mini;
  if (!syms) {
    if (auto m = run.mini_debuginfo()) mini.emplace(std::move(*m));
  }
  const elf::ElfFile& sym = syms ? *syms : (mini ? *mini : run);
  auto table = std::make_shared<SymbolTable>();
  table->track_perf_tree();
  std::vector<elf::RawSymbol> raw;
  if (elf::read_symbols(sym, run, elf::SymbolSource::kSymtab, true, raw) > 0) {
    add_elf_symbols(*table, raw, opts_.demangle);
    table->fixup(false);
  }
  raw.clear();
  if (elf::read_symbols(sym, run, elf::SymbolSource::kDynsym, true, raw) > 0) {
    add_elf_symbols(*table, raw, opts_.demangle);
    table->fixup(false);
  }
  raw.clear();
  if (!table->empty() && elf::read_plt_symbols(run, raw) > 0) {
    add_elf_symbols(*table, raw, opts_.demangle);
    table->sort_only();
  }
  out.table = std::move(table);
  out.file = sym.path();
  out.found = true;
  out.origin = syms ? syms_origin : runtime_origin;
  return out;
}

const LoadedSymbols& Symbolizer::kernel(const elf::BuildId& id, std::uint64_t ref_reloc_addr) {
  std::string key = "kernel:" + id.hex();
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  LoadedSymbols loaded = load_kernel(id, ref_reloc_addr);
  if (!loaded.found && !opts_.guest_kernel) warn_missing("[kernel.kallsyms]", id);
  return cache_.emplace(key, std::move(loaded)).first->second;
}

namespace {

// Whether the kernel's symbols may come from a kallsyms file: not for a
// guest's kernel without --kallsyms, nor under --symfs.
bool may_read_kallsyms(const SymbolizerOptions& o) {
  return !o.kallsyms.empty() || (!o.guest_kernel && o.symfs.empty());
}

// The kallsyms symbols of the kernel recorded with `id`, when -k names no
// vmlinux: --kallsyms; else /proc/kallsyms for the running kernel (perf
// record's copy in the build-id cache while it is current: it reads faster
// and gives the same symbols); else the build-id cache's copy.
Expected<KallsymsInfo> load_kallsyms_for(const SymbolizerOptions& o, const elf::BuildId& id) {
  if (!o.kallsyms.empty()) return load_kallsyms(o.kallsyms);
  if (!may_read_kallsyms(o)) return make_error("no kallsyms for the kernel");
  bool host = id.empty();
  if (!host) {
    if (auto running = elf::kernel_build_id(o.sysfs)) host = same_build_id(id, *running);
  }
  std::string cached = o.buildid_dir.empty()
                           ? std::string()
                           : o.buildid_dir + "/[kernel.kallsyms]/" + id.hex() + "/kallsyms";
  if (cached.empty() || !is_regular_file(cached)) cached.clear();
  if (host) {
    if (!cached.empty() && !id.empty()) return load_current_kallsyms(cached, o.procfs);
    return load_kallsyms(o.procfs + "/kallsyms");
  }
  if (cached.empty()) return make_error("no kallsyms for the kernel");
  return load_kallsyms(cached);
}

}  // namespace

std::function<Expected<KallsymsInfo>()> Symbolizer::kallsyms_loader(const elf::BuildId& id) const {
  // Not the share itself: its loads would hold it, and it them.
  SymbolizerOptions o = opts_;
  o.kallsyms_share = nullptr;
  o.dso_share = nullptr;
  return [o = std::move(o), id] { return load_kallsyms_for(o, id); };
}

std::string Symbolizer::kallsyms_key(const elf::BuildId& id) const {
  return opts_.kallsyms.empty() ? "build-id " + id.hex() : opts_.kallsyms;
}

std::shared_future<KallsymsShare::Result> KallsymsShare::get(
    const std::string& key, std::function<Expected<KallsymsInfo>()> read) {
  std::lock_guard lock(mu_);
  auto it = loads_.find(key);
  if (it != loads_.end()) return it->second;
  auto load = [read = std::move(read)]() -> Result {
    auto info = read();
    if (!info) return nullptr;
    return std::make_shared<const KallsymsInfo>(std::move(*info));
  };
  std::shared_future<Result> f;
  try {
    f = std::async(std::launch::async, load).share();
  } catch (const std::system_error&) {
    // No thread to spare: read it here.
    std::promise<Result> done;
    done.set_value(load());
    f = done.get_future().share();
  }
  return loads_.emplace(key, f).first->second;
}

void Symbolizer::prefetch_kernel(const elf::BuildId& id) {
  if (!opts_.vmlinux.empty()) return;
  if (!may_read_kallsyms(opts_)) return;
  const std::string key = kallsyms_key(id);
  if (prefetched_.count(key) || shared_.count(key) || cache_.count("kernel:" + id.hex())) return;
  // Which file to read is decided on the loading thread too (the build-id
  // cache's copy is checked in the pass that parses it).
  if (opts_.kallsyms_share) {
    shared_.emplace(key, opts_.kallsyms_share->get(key, kallsyms_loader(id)));
    return;
  }
  try {
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto result = std::async(std::launch::async, [o = opts_, id, done] {
      Expected<KallsymsInfo> info = load_kallsyms_for(o, id);
      done->store(true, std::memory_order_release);
      return info;
    });
    prefetched_.emplace(key, Prefetch{std::move(result), std::move(done)});
  } catch (const std::system_error&) {
    // No thread to spare: kernel() reads the file itself.
  }
}

bool Symbolizer::kernel_loading() const {
  for (const auto& [path, p] : prefetched_)
    if (!p.done->load(std::memory_order_acquire)) return true;
  for (const auto& [path, f] : shared_)
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return true;
  return false;
}

LoadedSymbols Symbolizer::load_kernel(const elf::BuildId& id, std::uint64_t ref_reloc_addr) {
  LoadedSymbols out;
  out.table = std::make_shared<SymbolTable>();
  std::string kallsyms = opts_.kallsyms;
  if (kallsyms.empty() && !opts_.vmlinux.empty()) {
    auto f = elf::ElfFile::open(opts_.vmlinux);
    if (!f || (!id.empty() && !same_build_id(id, f->build_id()))) return out;
    std::vector<elf::RawSymbol> raw;
    if (elf::read_symbols(*f, *f, elf::SymbolSource::kSymtab, false, raw) == 0) return out;
    auto table = std::make_shared<SymbolTable>();
    table->track_perf_tree();
    add_elf_symbols(*table, raw, opts_.demangle_kernel);
    table->fixup(false);
    out.table = std::move(table);
    out.file = opts_.vmlinux;
    out.found = true;
    out.origin = opts_.guest_kernel ? 'V' : 'v';
    if (const elf::Section* text = f->section(".text"))
      out.text_start = text->addr, out.text_end = text->addr + text->size;
    return out;
  }
  if (!may_read_kallsyms(opts_)) return out;
  const std::string key = kallsyms_key(id);
  if (opts_.kallsyms_share) {
    // One table for every Symbolizer of the share; a copy where this
    // recording's kernel sits elsewhere.
    auto known = shared_.find(key);
    auto f = known != shared_.end() ? known->second
                                    : opts_.kallsyms_share->get(key, kallsyms_loader(id));
    KallsymsShare::Result info = f.get();
    if (!info) return out;
    if (ref_reloc_addr && info->ref_reloc_addr && ref_reloc_addr != info->ref_reloc_addr) {
      auto moved = std::make_shared<SymbolTable>(info->table);
      moved->relocate(static_cast<std::int64_t>(ref_reloc_addr - info->ref_reloc_addr));
      out.table = std::move(moved);
    } else {
      out.table = std::shared_ptr<const SymbolTable>(info, &info->table);
    }
    out.file = info->path;
    out.found = true;
    out.origin = opts_.guest_kernel ? 'g' : 'k';
    return out;
  }
  auto pending = prefetched_.find(key);
  Expected<KallsymsInfo> info =
      pending != prefetched_.end() ? pending->second.result.get() : load_kallsyms_for(opts_, id);
  if (pending != prefetched_.end()) prefetched_.erase(pending);
  if (!info) return out;
  if (ref_reloc_addr && info->ref_reloc_addr && ref_reloc_addr != info->ref_reloc_addr)
    info->table.relocate(static_cast<std::int64_t>(ref_reloc_addr - info->ref_reloc_addr));
  out.table = std::make_shared<SymbolTable>(std::move(info->table));
  out.file = info->path;
  out.found = true;
  out.origin = opts_.guest_kernel ? 'g' : 'k';
  return out;
}

const LoadedSymbols& Symbolizer::jit_map(const std::string& path) {
  std::string key = "jit:" + path;
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  LoadedSymbols out;
  auto table = std::make_shared<SymbolTable>();
  table->track_perf_tree();
  if (auto text = read_text_file(opts_.symfs + path)) {
    std::string_view t = *text;
    while (!t.empty()) {
      std::size_t nl = t.find('\n');
      std::string_view line = t.substr(0, nl);
      t = nl == std::string_view::npos ? std::string_view() : t.substr(nl + 1);
      // "START SIZE name" in hex
      std::size_t a = line.find(' ');
      std::size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      if (b == std::string_view::npos) continue;
      std::uint64_t start = std::strtoull(std::string(line.substr(0, a)).c_str(), nullptr, 16);
      std::uint64_t size =
          std::strtoull(std::string(line.substr(a + 1, b - a - 1)).c_str(), nullptr, 16);
      table->add(start, size, kBindGlobal, kTypeFunc, line.substr(b + 1));
    }
    table->fixup(false);
    out.found = true;
    out.origin = 'j';
    out.file = path;
  }
  out.table = std::move(table);
  return cache_.emplace(key, std::move(out)).first->second;
}

}  // namespace perfkit::symbol
