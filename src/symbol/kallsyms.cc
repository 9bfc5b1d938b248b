#include "symbol/kallsyms.h"

#include <cctype>
#include <charconv>

#include "base/mapped_file.h"

namespace perfkit::symbol {

namespace {

bool parse_hex(std::string_view s, std::uint64_t& v) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

KallsymsInfo parse_kallsyms(std::string_view text) {
  KallsymsInfo info;
  std::uint64_t stext = 0;
  std::string name;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > line.size()) continue;
    std::uint64_t addr;
    if (!parse_hex(line.substr(0, sp1), addr)) continue;
    char type = line[sp1 + 1];
    std::string_view sym = line.substr(sp1 + 3);
    std::size_t tab = sym.find('\t');
    std::string_view module;
    if (tab != std::string_view::npos) {
      module = sym.substr(tab + 1);
      sym = sym.substr(0, tab);
    }
    if (sym == "_text") info.ref_reloc_addr = addr, info.ref_reloc_name = "_text";
    if (sym == "_stext") stext = addr;
    char up = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
    if (up != 'T' && up != 'W' && up != 'D' && up != 'B') continue;
    if (!sym.empty() && sym[0] == '$') continue;
    std::uint8_t bind =
        up == 'W' ? kBindWeak
                  : (std::isupper(static_cast<unsigned char>(type)) ? kBindGlobal : kBindLocal);
    std::uint8_t stype = (up == 'T' || up == 'W') ? kTypeFunc : kTypeObject;
    // Module symbols keep their "[module]" tail for the fixup rule; lookups
    // cut it (name_of()).
    if (!module.empty()) {
      name.assign(sym);
      name += ' ';
      name.append(module);
      info.table.add(addr, 0, bind, stype, name);
    } else {
      info.table.add(addr, 0, bind, stype, sym);
    }
  }
  if (!info.ref_reloc_addr && stext) info.ref_reloc_addr = stext, info.ref_reloc_name = "_stext";
  info.table.fixup(true);
  return info;
}

Expected<KallsymsInfo> load_kallsyms(const std::string& path) {
  PK_ASSIGN(std::string text, read_text_file(path));
  KallsymsInfo info = parse_kallsyms(text);
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

}  // namespace perfkit::symbol
