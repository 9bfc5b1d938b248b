#include "elf/elf_symbols.h"

#include <gelf.h>
#include <libelf.h>

namespace perfkit::elf {

namespace {

bool is_function(const GElf_Sym& s) {
  unsigned t = GELF_ST_TYPE(s.st_info);
  return (t == STT_FUNC || t == STT_GNU_IFUNC) && s.st_name != 0 && s.st_shndx != SHN_UNDEF;
}

bool is_object(const GElf_Sym& s) {
  return GELF_ST_TYPE(s.st_info) == STT_OBJECT && s.st_name != 0 && s.st_shndx != SHN_UNDEF;
}

bool is_label(const GElf_Sym& s) {
  unsigned vis = GELF_ST_VISIBILITY(s.st_other);
  return GELF_ST_TYPE(s.st_info) == STT_NOTYPE && s.st_name != 0 && s.st_shndx != SHN_UNDEF &&
         s.st_shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
}

// ARM mapping symbols ($a, $d, $t, $x and their dotted forms) mark code and
// data runs, not functions.
bool is_arm_mapping_symbol(std::uint16_t machine, std::string_view name) {
  if (machine != EM_ARM && machine != EM_AARCH64) return false;
  return name.size() >= 2 && name[0] == '$' &&
         std::string_view("adtx").find(name[1]) != std::string_view::npos &&
         (name.size() == 2 || name[2] == '.');
}

}  // namespace

std::uint64_t vaddr_to_offset(const ElfFile& f, std::uint64_t vaddr, const Section* section) {
  for (const auto& seg : f.segments()) {
    std::uint64_t sz = std::max(seg.memsz, seg.filesz);
    if (!sz) continue;
    if (vaddr >= seg.vaddr && vaddr < seg.vaddr + sz) return vaddr - (seg.vaddr - seg.offset);
  }
  if (section) return vaddr - (section->addr - section->offset);
  return vaddr;
}

std::size_t read_symbols(const ElfFile& syms, const ElfFile& runtime, SymbolSource which,
                         bool adjust, std::vector<RawSymbol>& out) {
  const Section* table = syms.section(which == SymbolSource::kSymtab ? ".symtab" : ".dynsym");
  if (!table || table->entsize == 0) return 0;
  Elf_Scn* scn = elf_getscn(syms.handle(), table->index);
  Elf_Data* data = scn ? elf_getdata(scn, nullptr) : nullptr;
  const Section* strtab = syms.section_at(table->link);
  if (!data || !strtab) return 0;
  Bytes strs = syms.section_data(*strtab);
  std::size_t n = table->size / table->entsize, added = 0;
  for (std::size_t i = 0; i < n; ++i) {
    GElf_Sym s;
    if (!gelf_getsym(data, static_cast<int>(i), &s)) continue;
    bool label = is_label(s);
    if (!label && !is_function(s) && !is_object(s)) continue;
    if (s.st_name >= strs.size()) continue;
    std::string_view name = c_string(strs.subspan(s.st_name));
    if (is_arm_mapping_symbol(syms.machine(), name)) continue;
    if (s.st_shndx == SHN_ABS) continue;
    const Section* sec = syms.section_at(s.st_shndx);
    if (!sec) continue;
    if (!(sec->flags & SHF_ALLOC)) continue;
    // A debug file's NOBITS sections have no offsets: use the runtime file's.
    if (sec->type == SHT_NOBITS) {
      if (const Section* r = runtime.section_at(s.st_shndx)) sec = r;
    }
    if (label && sec->name.find("text") == std::string_view::npos &&
        sec->name.find("data") == std::string_view::npos)
      continue;
    std::uint64_t value = s.st_value;
    if (syms.machine() == EM_ARM && GELF_ST_TYPE(s.st_info) == STT_FUNC && (value & 1)) --value;
    if (adjust) value = vaddr_to_offset(runtime, value, sec);
    RawSymbol r;
    r.start = value;
    r.size = s.st_size;
    r.binding = static_cast<std::uint8_t>(GELF_ST_BIND(s.st_info));
    r.type = static_cast<std::uint8_t>(GELF_ST_TYPE(s.st_info));
    r.name = name;
    out.push_back(r);
    ++added;
  }
  return added;
}

std::size_t read_plt_symbols(const ElfFile& f, std::vector<RawSymbol>& out) {
  const Section* dynsym = f.section(".dynsym");
  if (!dynsym) return 0;
  const Section* rel = f.section(".rela.plt");
  if (!rel) rel = f.section(".rel.plt");
  const Section* plt = f.section(".plt");
  if (!rel || !plt || rel->link != dynsym->index || rel->entsize == 0) return 0;
  Elf_Scn* rel_scn = elf_getscn(f.handle(), rel->index);
  Elf_Scn* sym_scn = elf_getscn(f.handle(), dynsym->index);
  Elf_Data* rel_data = rel_scn ? elf_getdata(rel_scn, nullptr) : nullptr;
  Elf_Data* sym_data = sym_scn ? elf_getdata(sym_scn, nullptr) : nullptr;
  const Section* strtab = f.section_at(dynsym->link);
  if (!rel_data || !sym_data || !strtab) return 0;
  Bytes strs = f.section_data(*strtab);
  if (strs.empty()) return 0;
  std::uint64_t header = plt->entsize, entry = plt->entsize;
  switch (f.machine()) {
    case EM_ARM:
      header = 20, entry = 12;
      break;
    case EM_AARCH64:
      header = 32, entry = 16;
      break;
    case EM_SPARC:
      header = 48, entry = 12;
      break;
    case EM_SPARCV9:
      header = 128, entry = 32;
      break;
    default:
      break;
  }
  std::uint64_t offset = plt->offset + header;
  std::size_t n = rel->size / rel->entsize, added = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t info;
    if (rel->type == SHT_RELA) {
      GElf_Rela r;
      if (!gelf_getrela(rel_data, static_cast<int>(i), &r)) continue;
      info = r.r_info;
    } else if (rel->type == SHT_REL) {
      GElf_Rel r;
      if (!gelf_getrel(rel_data, static_cast<int>(i), &r)) continue;
      info = r.r_info;
    } else {
      return added;
    }
    GElf_Sym s{};
    gelf_getsym(sym_data, static_cast<int>(GELF_R_SYM(info)), &s);
    RawSymbol r;
    r.start = offset;
    r.size = entry;
    r.binding = STB_GLOBAL;
    r.type = STT_FUNC;
    r.plt = true;
    r.name = s.st_name < strs.size() ? c_string(strs.subspan(s.st_name)) : std::string_view();
    out.push_back(r);
    offset += entry;
    ++added;
  }
  return added;
}

}  // namespace perfkit::elf
