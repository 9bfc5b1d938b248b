#include "symbol/kallsyms.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "base/mapped_file.h"

namespace perfkit::symbol {

namespace {

bool parse_hex(std::string_view s, std::uint64_t& v) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

namespace {

// Kallsyms lines in, a symbol table out; lines may come in pieces.
class KallsymsParser {
 public:
  // Parses the complete lines of `text` (with what an earlier call left
  // over in front); keeps its unterminated tail for the next call.
  void feed(std::string_view text) {
    // A line is some 44 bytes, half of them the name.
    info_.table.prefault(text.size() / 32, text.size() / 2);
    if (!carry_.empty()) {
      std::size_t nl = text.find('\n');
      carry_.append(text.substr(0, nl));
      if (nl == std::string_view::npos) return;
      line(carry_);
      carry_.clear();
      text.remove_prefix(nl + 1);
    }
    while (!text.empty()) {
      const void* p = std::memchr(text.data(), '\n', text.size());
      if (!p) {
        carry_.assign(text);
        return;
      }
      std::size_t nl = static_cast<std::size_t>(static_cast<const char*>(p) - text.data());
      line(text.substr(0, nl));
      text.remove_prefix(nl + 1);
    }
  }

  void reserve(std::size_t symbols, std::size_t name_bytes) {
    info_.table.reserve(symbols, name_bytes);
  }

  KallsymsInfo finish() {
    if (!carry_.empty()) line(carry_);
    carry_.clear();
    if (!info_.ref_reloc_addr && stext_)
      info_.ref_reloc_addr = stext_, info_.ref_reloc_name = "_stext";
    info_.table.fixup(true);
    return std::move(info_);
  }

 private:
  void line(std::string_view line) {
    std::size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > line.size()) return;
    std::uint64_t addr;
    if (!parse_hex(line.substr(0, sp1), addr)) return;
    char type = line[sp1 + 1];
    std::string_view sym = line.substr(sp1 + 3);
    std::size_t tab = sym.find('\t');
    std::string_view module;
    if (tab != std::string_view::npos) {
      module = sym.substr(tab + 1);
      sym = sym.substr(0, tab);
    }
    if (sym == "_text") info_.ref_reloc_addr = addr, info_.ref_reloc_name = "_text";
    if (sym == "_stext") stext_ = addr;
    char up = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
    if (up != 'T' && up != 'W' && up != 'D' && up != 'B') return;
    if (!sym.empty() && sym[0] == '$') return;
    std::uint8_t bind =
        up == 'W' ? kBindWeak
                  : (std::isupper(static_cast<unsigned char>(type)) ? kBindGlobal : kBindLocal);
    std::uint8_t stype = (up == 'T' || up == 'W') ? kTypeFunc : kTypeObject;
    // Module symbols keep their "[module]" tail for the fixup rule; lookups
    // cut it (name_of()).
    if (!module.empty()) {
      name_.assign(sym);
      name_ += ' ';
      name_.append(module);
      info_.table.add(addr, 0, bind, stype, name_);
    } else {
      info_.table.add(addr, 0, bind, stype, sym);
    }
  }

  KallsymsInfo info_;
  std::uint64_t stext_ = 0;
  std::string name_, carry_;
};

// Chunks of a file read on one thread and parsed on another: the kernel
// takes longer to print /proc/kallsyms than we take to parse it, so the
// parse hides behind the read.
class ChunkQueue {
 public:
  // Waits while kMaxQueued chunks are queued: a regular file reads faster
  // than it parses, and memory stays at a few chunks.
  void push(std::string chunk) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return chunks_.size() < kMaxQueued; });
    chunks_.push_back(std::move(chunk));
    cv_.notify_one();
  }
  void close(std::string error) {
    std::lock_guard lock(mu_);
    done_ = true;
    error_ = std::move(error);
    cv_.notify_one();
  }
  // The next chunk; false at the end.
  bool pop(std::string& chunk) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_ || !chunks_.empty(); });
    if (chunks_.empty()) return false;
    chunk = std::move(chunks_.front());
    chunks_.pop_front();
    room_.notify_one();
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  static constexpr std::size_t kMaxQueued = 4;
  std::mutex mu_;
  std::condition_variable cv_, room_;
  std::deque<std::string> chunks_;
  bool done_ = false;
  std::string error_;
};

void read_chunks(int fd, const std::string& path, ChunkQueue& q) {
  constexpr std::size_t kChunk = 256 << 10;
  for (;;) {
    std::string chunk(kChunk, '\0');
    std::size_t have = 0;
    while (have < kChunk) {
      ssize_t n = ::read(fd, chunk.data() + have, kChunk - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        q.close(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
        return;
      }
      if (n == 0) break;
      have += static_cast<std::size_t>(n);
    }
    chunk.resize(have);
    if (have) q.push(std::move(chunk));
    if (have < kChunk) break;
  }
  q.close({});
}

}  // namespace

KallsymsInfo parse_kallsyms(std::string_view text) {
  KallsymsParser p;
  p.feed(text);
  return p.finish();
}

Expected<KallsymsInfo> load_kallsyms(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  ChunkQueue q;
  std::thread reader;
  try {
    reader = std::thread([&] { read_chunks(fd, path, q); });
  } catch (const std::system_error&) {
    read_chunks(fd, path, q);  // no thread to spare: read it all first
  }
  KallsymsParser parser;
  // /proc/kallsyms has no size to stat: room for a large kernel's symbols
  // (about 120k on a distribution kernel) spares the copies of growing.
  parser.reserve(1 << 18, 8 << 20);
  std::string chunk;
  while (q.pop(chunk)) parser.feed(chunk);
  if (reader.joinable()) reader.join();
  ::close(fd);
  if (!q.error().empty()) return make_error("{}", q.error());
  KallsymsInfo info = parser.finish();
  bool any = false;
  for (std::size_t i = 0; i < info.table.size() && !any; ++i) any = info.table.at(i).start != 0;
  if (!any) return make_error("{}: no symbol addresses (kptr_restrict?)", path);
  return info;
}

std::vector<KernelModule> parse_modules(std::string_view text) {
  std::vector<KernelModule> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    // name size refcount deps state address
    std::string_view f[6];
    int n = 0;
    while (n < 6 && !line.empty()) {
      std::size_t sp = line.find(' ');
      f[n++] = line.substr(0, sp);
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    if (n < 6) continue;
    KernelModule m;
    m.name = std::string(f[0]);
    std::from_chars(f[1].data(), f[1].data() + f[1].size(), m.size);
    if (!parse_hex(f[5], m.start)) continue;
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// The first `n` bytes of `path` (fewer at its end); "" when unreadable.
std::string read_prefix(const std::string& path, std::size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out(n, '\0');
  std::size_t have = 0;
  while (have < n) {
    ssize_t got = ::read(fd, out.data() + have, n - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<std::size_t>(got);
  }
  ::close(fd);
  out.resize(have);
  return out;
}

bool dynamic_code(std::string_view module) {
  return module == "bpf" || module.starts_with("__builtin__");
}

}  // namespace

namespace {

// Checks the module lines ("ADDR t NAME\t[MODULE]") of a kallsyms copy
// against /proc/modules, one complete line at a time.
class ModuleCheck {
 public:
  explicit ModuleCheck(std::vector<KernelModule> modules)
      : modules_(std::move(modules)), seen_(modules_.size(), false) {}
  bool line(std::string_view l) {
    std::size_t tab = l.find('\t');
    if (tab == std::string_view::npos) return true;
    std::string_view module = l.substr(tab + 1);
    if (module.size() < 2 || module.front() != '[' || module.back() != ']') return false;
    module = module.substr(1, module.size() - 2);
    if (dynamic_code(module)) return true;
    std::size_t sp = l.find(' ');
    std::uint64_t addr = 0;
    if (sp == std::string_view::npos || sp > tab || !parse_hex(l.substr(0, sp), addr)) return false;
    std::size_t i = 0;
    while (i < modules_.size() && modules_[i].name != module) ++i;
    if (i == modules_.size()) return false;  // unloaded since
    if (addr < modules_[i].start || addr - modules_[i].start >= modules_[i].size)
      return false;  // loaded elsewhere since
    seen_[i] = true;
    return true;
  }
  bool all_seen() const {
    return std::all_of(seen_.begin(), seen_.end(), [](bool b) { return b; });  // none loaded since
  }

 private:
  std::vector<KernelModule> modules_;
  std::vector<bool> seen_;
};

}  // namespace

bool kallsyms_copy_is_current(const std::string& copy, const std::string& procfs) {
  constexpr std::size_t kPrefix = 4096, kChunk = 256 << 10;
  std::string live = read_prefix(procfs + "/kallsyms", kPrefix);
  if (live.size() != kPrefix) return false;
  // No /proc/modules: a kernel without module support.
  std::vector<KernelModule> modules;
  if (auto m = read_text_file(procfs + "/modules")) modules = parse_modules(*m);
  ModuleCheck check(std::move(modules));
  int fd = ::open(copy.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string buf, carry;
  bool first = true, ok = true;
  for (;;) {
    buf.resize(kChunk);
    ssize_t got = ::read(fd, buf.data(), kChunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ok = false;
    if (got <= 0) break;
    buf.resize(static_cast<std::size_t>(got));
    if (first && (buf.size() < kPrefix || std::string_view(buf).substr(0, kPrefix) != live)) {
      ok = false;  // short reads of a regular file do not happen before its end
      break;
    }
    first = false;
    std::string_view t = buf;
    std::size_t nl = t.find('\n');
    if (!carry.empty() || nl == std::string_view::npos) {
      carry.append(t.substr(0, nl));
      if (nl == std::string_view::npos) continue;
      if (!(ok = check.line(carry))) break;
      carry.clear();
      t.remove_prefix(nl + 1);
    }
    for (nl = t.find('\n'); nl != std::string_view::npos && ok; nl = t.find('\n')) {
      ok = check.line(t.substr(0, nl));
      t.remove_prefix(nl + 1);
    }
    if (!ok) break;
    carry.assign(t);
  }
  ::close(fd);
  if (ok && !carry.empty()) ok = check.line(carry);
  return ok && !first && check.all_seen();
}

KernelText kernel_text(std::string_view t) {
  auto addr_of = [&](std::string_view name) -> std::uint64_t {
    for (char type : {'T', 't'}) {
      std::string needle = fmt::format(" {} {}\n", type, name);
      auto at = t.find(needle);
      if (at == std::string_view::npos || at < 16) continue;
      auto line = t.rfind('\n', at);
      line = line == std::string_view::npos ? 0 : line + 1;
      std::uint64_t v = 0;
      std::from_chars(t.data() + line, t.data() + at, v, 16);
      return v;
    }
    return 0;
  };
  return {addr_of("_text"), addr_of("_stext"), addr_of("_etext")};
}

}  // namespace perfkit::symbol
