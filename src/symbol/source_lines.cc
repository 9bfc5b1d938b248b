#include "symbol/source_lines.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "dwarf/source_locator.h"
#include "elf/elf_file.h"

namespace perfkit::symbol {

namespace {

// perf's A2L_FAIL_LIMIT: failures in a row (with no success before) after
// which a DSO's source lines are given up.
constexpr int kFailLimit = 123;

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string_view basename_of(std::string_view p) {
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

struct SourceLines::Answer {
  bool found = false;
  std::string srcline;                // "file:line" when found
  std::vector<std::string> strings;   // backing store of `inlines`
  std::vector<InlineRecord> inlines;  // addr2line's records, innermost first
};

struct SourceLines::Dso {
  std::string long_name, short_name;
  elf::BuildId build_id;
  bool prepared = false, opened = false;
  std::string path;  // where the lines come from (prepare), "" when nowhere
  std::unique_ptr<dwarf::SourceLocator> locator;  // null: addr2line cannot run
  bool adjust = false;                            // ET_EXEC / ET_REL: add text_offset
  std::int64_t text_offset = 0;
  bool has_srcline = true;
  int fails = 1;  // perf's a2l_fails starts at 1; 0 once anything was found
  std::unordered_map<std::uint64_t, Answer> answers;
  std::unordered_map<std::uint64_t, std::string> fallbacks;
  std::vector<dwarf::SourceFrame> frames;  // scratch
};

SourceLines::SourceLines(Symbolizer& symbolizer, SourceLineOptions opts)
    : symbolizer_(symbolizer), opts_(opts) {}
SourceLines::~SourceLines() = default;

SourceLines::Dso* SourceLines::dso(std::string_view long_name, std::string_view short_name,
                                   const elf::BuildId& id) {
  std::string key = std::string(long_name) + '\n' + id.hex();
  auto& d = dsos_[key];
  if (!d) {
    d = std::make_unique<Dso>();
    d->long_name = long_name;
    d->short_name = short_name;
    d->build_id = id;
  }
  return d.get();
}

// perf's dso__name: the file symbols came from when it had .symtab, else the
// recorded name; nothing for "[...]" names and JIT maps.
void SourceLines::prepare(Dso* d) {
  if (d->prepared) return;
  d->prepared = true;
  if (d->long_name.empty() || d->long_name[0] == '[' || d->long_name.starts_with("/tmp/perf-"))
    return;
  const LoadedSymbols& ls = symbolizer_.user_dso(d->long_name, d->build_id);
  if (ls.found && !ls.file.empty() && is_file(ls.file)) {
    auto f = elf::ElfFile::open(ls.file);
    if (f && f->has_symtab()) d->path = ls.file;
  }
  if (d->path.empty()) d->path = symbolizer_.options().symfs + d->long_name;
}

void SourceLines::open(Dso* d) {
  prepare(d);
  d->opened = true;
  if (d->path.empty()) return;
  auto loc = dwarf::SourceLocator::open(d->path);
  if (!loc) return;
  d->locator = std::move(*loc);
  d->adjust = d->locator->elf_type() == elf::kTypeExec || d->locator->elf_type() == elf::kTypeRel;
  d->text_offset = d->locator->text_offset();
}

const SourceLines::Answer& SourceLines::lookup(Dso* d, std::uint64_t addr) {
  auto it = d->answers.find(addr);
  if (it != d->answers.end()) return it->second;
  Answer a;
  if (!d->opened) open(d);
  if (d->locator) {
    std::uint64_t rip = d->adjust ? addr + static_cast<std::uint64_t>(d->text_offset) : addr;
    if (d->locator->lookup(rip, d->frames)) {
      a.found = true;
      a.strings.reserve(d->frames.size() * 2);
      for (const auto& f : d->frames) {
        std::string_view file = f.has_file ? f.file : std::string_view("??");
        if (!opts_.full_path) file = basename_of(file);
        a.strings.emplace_back(f.function.empty() ? std::string_view("??") : f.function);
        a.strings.push_back(fmt::format("{}:{}", file, f.line));
      }
      for (std::size_t i = 0; i < d->frames.size(); ++i)
        a.inlines.push_back(InlineRecord{a.strings[2 * i], a.strings[2 * i + 1]});
      a.srcline = a.strings[1];
    }
  }
  return d->answers.emplace(addr, std::move(a)).first->second;
}

std::string_view SourceLines::srcline(Dso* d, std::uint64_t addr) {
  if (d->has_srcline) {
    const Answer& a = lookup(d, addr);
    if (a.found) {
      d->fails = 0;
      return a.srcline;
    }
    if (d->fails && ++d->fails > kFailLimit) d->has_srcline = false;
  }
  auto it = d->fallbacks.find(addr);
  if (it != d->fallbacks.end()) return it->second;
  std::uint64_t rip = d->adjust ? addr + static_cast<std::uint64_t>(d->text_offset) : addr;
  return d->fallbacks.emplace(addr, fmt::format("{}[{:x}]", d->short_name, rip)).first->second;
}

std::span<const InlineRecord> SourceLines::inlines(Dso* d, std::uint64_t addr) {
  return lookup(d, addr).inlines;
}

}  // namespace perfkit::symbol
