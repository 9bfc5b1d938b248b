#include "symbol/kallsyms.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/mapped_file.h"
#include "base/populate.h"

namespace perfkit::symbol {

namespace {

bool parse_hex(std::string_view s, std::uint64_t& v) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

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

// Checks the module lines ("ADDR t NAME\t[MODULE]") of a kallsyms copy
// against /proc/modules: each line with a tab through line(), or through
// module_line() where its address is read already; current() at the end.
class ModuleCheck {
 public:
  explicit ModuleCheck(std::vector<KernelModule> modules)
      : modules_(std::move(modules)), seen_(modules_.size(), false) {}
  // False (for good) when the line shows a change.
  bool line(std::string_view l) {
    const std::size_t tab = l.find('\t');
    if (tab == std::string_view::npos) return ok_;
    const std::size_t sp = l.find(' ');
    std::uint64_t addr = 0;
    const bool read = sp != std::string_view::npos && sp < tab && parse_hex(l.substr(0, sp), addr);
    return module_line(read, addr, l.substr(tab + 1));
  }
  // A module line's address (`read`: it was one) and "[MODULE]" tail.
  bool module_line(bool read, std::uint64_t addr, std::string_view module) {
    if (!ok_) return false;
    if (module.size() < 2 || module.front() != '[' || module.back() != ']') return ok_ = false;
    module = module.substr(1, module.size() - 2);
    if (dynamic_code(module)) return true;
    if (!read) return ok_ = false;
    std::size_t i = 0;
    while (i < modules_.size() && modules_[i].name != module) ++i;
    if (i == modules_.size()) return ok_ = false;  // unloaded since
    if (addr < modules_[i].start || addr - modules_[i].start >= modules_[i].size)
      return ok_ = false;  // loaded elsewhere since
    seen_[i] = true;
    return true;
  }
  // No line showed a change, and no module was loaded since.
  bool current() const { return ok_ && all_seen(); }

 private:
  bool all_seen() const {
    return std::all_of(seen_.begin(), seen_.end(), [](bool b) { return b; });
  }

  std::vector<KernelModule> modules_;
  std::vector<bool> seen_;
  bool ok_ = true;
};

}  // namespace

namespace {

// Each byte's value as a hex digit; 0x80 for bytes that are not one.
#if !defined(__SSE2__)
constexpr std::array<std::uint8_t, 256> kHexValue = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = c >= '0' && c <= '9'   ? static_cast<std::uint8_t>(c - '0')
           : c >= 'a' && c <= 'f' ? static_cast<std::uint8_t>(c - 'a' + 10)
           : c >= 'A' && c <= 'F' ? static_cast<std::uint8_t>(c - 'A' + 10)
                                  : 0x80;
  }
  return t;
}();
#endif

// Kallsyms lines in, a symbol table out; lines may come in pieces.
class KallsymsParser {
 public:
  // Parses the complete lines of `text` (with what an earlier call left
  // over in front); keeps its unterminated tail for the next call.
  void feed(std::string_view text) {
    // A line is some 44 bytes, half of them the name (a name left where it
    // is takes no room).
    info_.table.prefault(text.size() / 32, outside_begin_ ? text.size() / 32 : text.size() / 2);
    if (!carry_.empty()) {
      std::size_t nl = text.find('\n');
      carry_.append(text.substr(0, nl));
      if (nl == std::string_view::npos) return;
      line(carry_);
      carry_.clear();
      text.remove_prefix(nl + 1);
    }
    const std::size_t last = text.rfind('\n');
    if (last == std::string_view::npos) {
      carry_.assign(text);
      return;
    }
    const char* p = text.data();
    const char* end = text.data() + last + 1;
    while (p < end) p = next_line(p, end);
    carry_.assign(text.substr(last + 1));
  }

  void reserve(std::size_t symbols, std::size_t name_bytes) {
    info_.table.reserve(symbols, name_bytes);
  }

  // Shows `check` every module line (a copy checked as it is parsed).
  void check_modules(ModuleCheck* check) { check_ = check; }

  // The text fed lies in `file`, which stays mapped: the table names its
  // symbols where they are rather than copying them (but for module
  // symbols, "name [module]", and lines fed in two pieces).
  void names_in(std::shared_ptr<const MappedFile> file) {
    outside_begin_ = reinterpret_cast<const char*>(file->bytes().data());
    outside_size_ = file->size();
    info_.table.name_outside(outside_begin_, std::move(file));
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
  // Parses the line at `p` (a newline before `end` ends it) and returns the next.
  // The usual shape, "ADDR TYPE NAME[\tMODULE]" with a plain hex address,
  // is read in one pass; anything else goes through line().
  const char* next_line(const char* p, const char* end) {
    std::uint64_t addr = 0;
    const char* q = p + 16;
    if (end - p < 20 || !hex16(p, addr) || q[0] != ' ' || q[1] == '\n' || q[1] == '\t' ||
        q[2] != ' ') {
      const char* nl =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      line(std::string_view(p, static_cast<std::size_t>(nl - p)));
      return nl + 1;
    }
    const char type = q[1];
    const char* name = q + 3;
    bool bracket = false;
    const char* e = name_end(name, end, bracket);
    std::string_view sym(name, static_cast<std::size_t>(e - name)), module;
    if (*e == '\t') {
      const char* m = e + 1;
      e = static_cast<const char*>(std::memchr(m, '\n', static_cast<std::size_t>(end - m)));
      module = std::string_view(m, static_cast<std::size_t>(e - m));
      if (check_) check_->module_line(true, addr, module);
    }
    symbol(addr, type, sym, module, bracket);
    return e + 1;
  }

  // The 16 hex digits at `p` in `v`, when all 16 are: 16 bytes at once
  // with SSE2, else without a branch each.
  static bool hex16(const char* p, std::uint64_t& v) {
#if defined(__SSE2__)
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // (Signed compares: bytes from 0x80 are below every digit and letter.)
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
    const __m128i lower = _mm_or_si128(c, _mm_set1_epi8(0x20));
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                         _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
    if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff) return false;
    const __m128i nibble =
        _mm_or_si128(_mm_and_si128(digit, _mm_sub_epi8(c, _mm_set1_epi8('0'))),
                     _mm_and_si128(letter, _mm_sub_epi8(lower, _mm_set1_epi8('a' - 10))));
    // Each pair of digits (the first the high nibble) into a byte, the
    // bytes in the text's order: most significant first.
    const __m128i pairs =
        _mm_or_si128(_mm_slli_epi16(_mm_and_si128(nibble, _mm_set1_epi16(0x00ff)), 4),
                     _mm_srli_epi16(nibble, 8));
    const auto bytes =
        static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
    v = __builtin_bswap64(bytes);
    return true;
#else
    std::uint64_t x = 0;
    unsigned bad = 0;
    for (int i = 0; i < 16; ++i) {
      const std::uint8_t d = kHexValue[static_cast<unsigned char>(p[i])];
      bad |= d;
      x = x << 4 | (d & 0xf);
    }
    v = x;
    return !(bad & 0x80);
#endif
  }

  // The end of the name at `s`: the first newline or tab (one comes before
  // `end`); `bracket` set when a '[' comes before it.
  static const char* name_end(const char* s, const char* end, bool& bracket) {
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'), br = _mm_set1_epi8('[');
    for (; end - s >= 16; s += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
      const auto m = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, tab))));
      const auto b = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, br)));
      if (m) {
        bracket |= (b & ((m & -m) - 1)) != 0;  // those before the end
        return s + __builtin_ctz(m);
      }
      bracket |= b != 0;
    }
#endif
    for (; *s != '\n' && *s != '\t'; ++s) bracket |= *s == '[';
    return s;
  }

  void line(std::string_view line) {
    if (check_) check_->line(line);
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
    symbol(addr, type, sym, module, sym.find('[') != std::string_view::npos);
  }

  // A line's fields; `bracket`: the name has a '['.
  void symbol(std::uint64_t addr, char type, std::string_view sym, std::string_view module,
              bool bracket) {
    if (sym == "_text") info_.ref_reloc_addr = addr, info_.ref_reloc_name = "_text";
    if (sym == "_stext") stext_ = addr;
    const bool lower = type >= 'a' && type <= 'z';
    const char up = lower ? static_cast<char>(type - 'a' + 'A') : type;
    if (up != 'T' && up != 'W' && up != 'D' && up != 'B') return;
    if (!sym.empty() && sym[0] == '$') return;
    std::uint8_t bind = up == 'W' ? kBindWeak : (lower ? kBindLocal : kBindGlobal);
    std::uint8_t stype = (up == 'T' || up == 'W') ? kTypeFunc : kTypeObject;
    // Module symbols keep their "[module]" tail for the fixup rule; lookups
    // cut it (name_of()).
    if (!module.empty()) {
      name_.assign(sym);
      name_ += ' ';
      name_.append(module);
      bracket |= module.find('[') != std::string_view::npos;
      info_.table.add(addr, 0, bind, stype, name_, bracket ? kSymbolBracket : 0);
    } else if (reinterpret_cast<std::uintptr_t>(sym.data()) -
                   reinterpret_cast<std::uintptr_t>(outside_begin_) <
               outside_size_) {
      info_.table.add_outside(addr, 0, bind, stype, sym, bracket ? kSymbolBracket : 0);
    } else {
      info_.table.add(addr, 0, bind, stype, sym, bracket ? kSymbolBracket : 0);
    }
  }

  KallsymsInfo info_;
  const char* outside_begin_ = nullptr;  // names_in()
  std::uintptr_t outside_size_ = 0;
  ModuleCheck* check_ = nullptr;
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

namespace {

// Calls f(begin, end) for the consecutive 1 MiB windows of `file` until it
// returns false (then false), each window made resident first and the one
// before it released after: a kallsyms file is read once, and its pages
// need not stay in the resident set (a line may reach back one window).
template <class F>
bool for_each_window(const MappedFile& file, F&& f) {
  constexpr std::size_t kWindow = 1 << 20;
  const std::size_t n = file.size();
  for (std::size_t w = 0; w < n; w += kWindow) {
    const std::size_t e = std::min(n, w + kWindow);
    base::populate_for_read(file.bytes().data() + w, e - w);
    if (!f(w, e)) return false;
    if (w >= kWindow) file.release(w - kWindow, w);
  }
  return true;
}

// Parses the file at `path` as the kernel prints /proc/kallsyms: in chunks,
// read on one thread and parsed on this one.
Status parse_chunks(const std::string& path, KallsymsParser& parser) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  ChunkQueue q;
  std::thread reader;
  try {
    reader = std::thread([&] { read_chunks(fd, path, q); });
  } catch (const std::system_error&) {
    read_chunks(fd, path, q);  // no thread to spare: read it all first
  }
  std::string chunk;
  while (q.pop(chunk)) parser.feed(chunk);
  if (reader.joinable()) reader.join();
  ::close(fd);
  if (!q.error().empty()) return make_error("{}", q.error());
  return ok();
}

}  // namespace

namespace {

// Room for a large kernel's symbols (about 120k on a distribution kernel):
// /proc/kallsyms has no size to stat, and growing would copy.
void reserve_for_kernel(KallsymsParser& parser) { parser.reserve(1 << 18, 8 << 20); }

// Parses a mapped regular file window by window; the symbols name their
// names in it (the table keeps it mapped).
void parse_mapped(std::shared_ptr<const MappedFile> file, KallsymsParser& parser) {
  parser.names_in(file);
  const char* text = reinterpret_cast<const char*>(file->bytes().data());
  for_each_window(*file, [&](std::size_t begin, std::size_t end) {
    parser.feed(std::string_view(text + begin, end - begin));
    return true;
  });
}

Expected<KallsymsInfo> finish_load(KallsymsParser& parser, const std::string& path) {
  KallsymsInfo info = parser.finish();
  info.path = path;
  bool any = false;
  for (std::size_t i = 0; i < info.table.size() && !any; ++i) any = info.table.at(i).start != 0;
  if (!any) return make_error("{}: no symbol addresses (kptr_restrict?)", path);
  return info;
}

// finish_load of a file parsed where it is mapped (`file`; nullptr: read):
// the pages the parse and the fixups touched leave the resident set (the
// table names its symbols in the file, which some 5 MB of a large kernel's
// would otherwise hold for the whole run). The names stay valid: the few
// that are printed are read again from the page cache.
Expected<KallsymsInfo> finish_mapped(KallsymsParser& parser, const std::string& path,
                                     const MappedFile* file) {
  auto info = finish_load(parser, path);
  if (file) file->release(0, file->size());
  return info;
}

// The check of a kallsyms copy (whose text begins with `copy_text`) against
// PROCFS begun: none when their first 4 KiB differ already (another image,
// another KASLR offset, kptr_restrict) or either is unreadable.
std::optional<ModuleCheck> begin_copy_check(std::string_view copy_text, const std::string& procfs) {
  constexpr std::size_t kPrefix = 4096;
  const std::string live = read_prefix(procfs + "/kallsyms", kPrefix);
  if (live.size() != kPrefix || copy_text.substr(0, kPrefix) != live) return std::nullopt;
  // No /proc/modules: a kernel without module support.
  std::vector<KernelModule> modules;
  if (auto m = read_text_file(procfs + "/modules")) modules = parse_modules(*m);
  return ModuleCheck(std::move(modules));
}

}  // namespace

Expected<KallsymsInfo> load_kallsyms(const std::string& path) {
  KallsymsParser parser;
  reserve_for_kernel(parser);
  // A regular file (a copy, --kallsyms FILE) is parsed where it is mapped;
  // anything else (/proc/kallsyms, a pipe) is read, and opened only once.
  struct stat st;
  std::shared_ptr<const MappedFile> file;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (auto opened = MappedFile::open(path, false)) {
      file = std::make_shared<const MappedFile>(std::move(*opened));
      parse_mapped(file, parser);
    }
  }
  if (!file) PK_TRY(parse_chunks(path, parser));
  return finish_mapped(parser, path, file.get());
}

Expected<KallsymsInfo> load_current_kallsyms(const std::string& copy, const std::string& procfs) {
  struct stat st;
  if (::stat(copy.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (auto opened = MappedFile::open(copy, false)) {
      auto file = std::make_shared<const MappedFile>(std::move(*opened));
      std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), file->size());
      if (std::optional<ModuleCheck> check = begin_copy_check(text, procfs)) {
        KallsymsParser parser;
        reserve_for_kernel(parser);
        parser.check_modules(&*check);
        parse_mapped(file, parser);
        if (check->current()) return finish_mapped(parser, copy, file.get());
      }
    }
  }
  return load_kallsyms(procfs + "/kallsyms");
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

bool kallsyms_copy_is_current(const std::string& copy, const std::string& procfs) {
  auto file = MappedFile::open(copy, false);
  if (!file) return false;
  std::string_view t(reinterpret_cast<const char*>(file->bytes().data()), file->size());
  std::optional<ModuleCheck> check = begin_copy_check(t, procfs);
  if (!check) return false;
  // Only a module's lines have a tab: each is found by one scan of the
  // text rather than line by line.
  std::size_t at = 0;
  const bool ok = for_each_window(*file, [&](std::size_t, std::size_t window_end) {
    while (at < window_end) {
      const void* p = std::memchr(t.data() + at, '\t', window_end - at);
      if (!p) {
        at = window_end;
        break;
      }
      const std::size_t tab = static_cast<std::size_t>(static_cast<const char*>(p) - t.data());
      std::size_t begin = t.rfind('\n', tab);
      begin = begin == std::string_view::npos ? 0 : begin + 1;
      std::size_t end = t.find('\n', tab);
      if (end == std::string_view::npos) end = t.size();
      if (!check->line(t.substr(begin, end - begin))) return false;
      at = end;
    }
    return true;
  });
  return ok && check->current();
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
