#include "elf/jit_elf.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/flat_map.h"

namespace perfkit::elf {

namespace {

void put_uleb(std::vector<std::uint8_t>& out, std::uint64_t v) {
  do {
    std::uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(b);
  } while (v);
}

void put_sleb(std::vector<std::uint8_t>& out, std::int64_t v) {
  bool more = true;
  while (more) {
    std::uint8_t b = v & 0x7f;
    v >>= 7;
    more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
    out.push_back(more ? b | 0x80 : b);
  }
}

template <class T>
void put(std::vector<std::uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

template <class T>
void patch(std::vector<std::uint8_t>& out, std::size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}

// The DWARF of the lines: a version 2 line program for the code at
// kJitTextOffset, a compile unit that points to it, and its abbreviation.
struct Dwarf {
  std::vector<std::uint8_t> line, info, abbrev;
};

Dwarf make_dwarf(const JitImage& img) {
  Dwarf d;
  std::map<std::string, std::uint32_t> files;  // name -> index (from 1)
  std::vector<const std::string*> order;
  for (const JitLine& l : img.lines)
    if (files.try_emplace(l.file, static_cast<std::uint32_t>(files.size() + 1)).second)
      order.push_back(&l.file);
  auto& o = d.line;
  put<std::uint32_t>(o, 0);  // unit length, patched
  put<std::uint16_t>(o, 2);
  put<std::uint32_t>(o, 0);  // header length, patched
  const std::size_t header_start = o.size();
  o.insert(o.end(), {1, 1});  // minimum instruction length, default is_stmt
  o.push_back(static_cast<std::uint8_t>(-5));
  o.insert(o.end(), {14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1});
  o.push_back(0);  // no include directories
  for (const std::string* f : order) {
    o.insert(o.end(), f->begin(), f->end());
    o.insert(o.end(), {0, 0, 0, 0});  // NUL, directory, time, size
  }
  o.push_back(0);
  patch<std::uint32_t>(o, 6, static_cast<std::uint32_t>(o.size() - header_start));
  const std::uint64_t base = img.load_address;
  std::uint64_t addr = kJitTextOffset;
  o.insert(o.end(), {0, 9, 2});  // DW_LNE_set_address
  put<std::uint64_t>(o, addr);
  std::int64_t line = 1;
  std::uint32_t file = 1;
  for (const JitLine& l : img.lines) {
    const std::uint64_t at = kJitTextOffset + (l.address - base);
    if (l.address < base || at < addr) continue;
    if (const std::uint32_t f = files[l.file]; f != file) {
      o.push_back(4);  // DW_LNS_set_file
      put_uleb(o, f);
      file = f;
    }
    o.push_back(3);  // DW_LNS_advance_line
    put_sleb(o, static_cast<std::int64_t>(l.line) - line);
    line = l.line;
    o.push_back(2);  // DW_LNS_advance_pc
    put_uleb(o, at - addr);
    addr = at;
    o.push_back(1);  // DW_LNS_copy
  }
  o.push_back(2);
  put_uleb(o, kJitTextOffset + img.code.size() - addr);
  o.insert(o.end(), {0, 1, 1});  // DW_LNE_end_sequence
  patch<std::uint32_t>(o, 0, static_cast<std::uint32_t>(o.size() - 4));
  // Abbreviation 1: a compile unit without children: stmt_list, low_pc, high_pc.
  d.abbrev = {1, 0x11 /* DW_TAG_compile_unit */, 0, 0x10, 0x06, 0x11, 0x01, 0x12, 0x01, 0, 0, 0};
  auto& i = d.info;
  put<std::uint32_t>(i, 0);
  put<std::uint16_t>(i, 2);
  put<std::uint32_t>(i, 0);  // abbreviations at 0
  i.push_back(8);
  i.push_back(1);
  put<std::uint32_t>(i, 0);  // the line program at 0
  put<std::uint64_t>(i, kJitTextOffset);
  put<std::uint64_t>(i, kJitTextOffset + img.code.size());
  i.push_back(0);
  patch<std::uint32_t>(i, 0, static_cast<std::uint32_t>(i.size() - 4));
  return d;
}

// Section contents and headers, laid out by hand (libelf's ELF_F_LAYOUT) so
// that .text sits at kJitTextOffset.
class Layout {
 public:
  explicit Layout(Elf* e) : e_(e) {}
  std::uint32_t name(std::string_view n) {
    const auto at = static_cast<std::uint32_t>(shstrtab_.size());
    shstrtab_.insert(shstrtab_.end(), n.begin(), n.end());
    shstrtab_.push_back(0);
    return at;
  }
  Elf_Scn* add(std::uint32_t type, std::uint64_t flags, std::uint64_t addr, const void* data,
               std::size_t size, std::uint64_t align, std::uint32_t name_at) {
    Elf_Scn* scn = elf_newscn(e_);
    Elf_Data* d = elf_newdata(scn);
    d->d_buf = const_cast<void*>(data);
    d->d_size = size;
    d->d_align = align;
    d->d_type = ELF_T_BYTE;
    offset_ = (offset_ + align - 1) / align * align;
    GElf_Shdr sh{};
    gelf_getshdr(scn, &sh);
    sh.sh_name = name_at;
    sh.sh_type = type;
    sh.sh_flags = flags;
    sh.sh_addr = addr;
    sh.sh_offset = offset_;
    sh.sh_size = size;
    sh.sh_addralign = align;
    gelf_update_shdr(scn, &sh);
    offset_ += size;
    return scn;
  }
  std::vector<char>& shstrtab() { return shstrtab_; }
  std::uint64_t offset() const { return offset_; }
  void skip_to(std::uint64_t off) { offset_ = off; }

 private:
  Elf* e_;
  std::vector<char> shstrtab_{0};
  std::uint64_t offset_ = 0;
};

Status write_elf(int fd, const JitImage& img, const std::string& path) {
  Elf* e = elf_begin(fd, ELF_C_WRITE, nullptr);
  if (!e) return make_error("{}: cannot write ELF: {}", path, elf_errmsg(-1));
  struct Closer {
    Elf* e;
    ~Closer() { elf_end(e); }
  } closer{e};
  elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
  Elf64_Ehdr* eh = elf64_newehdr(e);
  eh->e_ident[EI_DATA] = ELFDATA2LSB;
  eh->e_type = ET_DYN;
  eh->e_machine = EM_X86_64;
  eh->e_version = EV_CURRENT;
  eh->e_entry = kJitTextOffset;
  eh->e_phoff = sizeof(Elf64_Ehdr);
  Elf64_Phdr* ph = elf64_newphdr(e, 1);
  Layout lay(e);
  lay.skip_to(kJitTextOffset);
  const std::uint32_t text_name = lay.name(".text");
  Elf_Scn* text = lay.add(SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, kJitTextOffset, img.code.data(),
                          img.code.size(), 16, text_name);
  // .symtab: the null symbol and the function; .strtab its name.
  std::vector<char> strtab{0};
  strtab.insert(strtab.end(), img.symbol.begin(), img.symbol.end());
  strtab.push_back(0);
  Elf64_Sym syms[2]{};
  syms[1].st_name = 1;
  syms[1].st_value = kJitTextOffset;
  syms[1].st_size = img.code.size();
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  syms[1].st_shndx = static_cast<Elf64_Section>(elf_ndxscn(text));
  const std::uint32_t symtab_name = lay.name(".symtab");
  Elf_Scn* symtab = lay.add(SHT_SYMTAB, 0, 0, syms, sizeof syms, 8, symtab_name);
  const std::uint32_t strtab_name = lay.name(".strtab");
  Elf_Scn* strs = lay.add(SHT_STRTAB, 0, 0, strtab.data(), strtab.size(), 1, strtab_name);
  // The build-id note: namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU\0", the id.
  const BuildId id = jit_build_id(img);
  std::uint8_t note[12 + 4 + 20];
  const std::uint32_t head[3] = {4, id.size, NT_GNU_BUILD_ID};
  std::memcpy(note, head, 12);
  std::memcpy(note + 12, "GNU", 4);
  std::memcpy(note + 16, id.bytes.data(), id.size);
  const std::uint32_t note_name = lay.name(".note.gnu.build-id");
  lay.add(SHT_NOTE, SHF_ALLOC, 0, note, sizeof note, 4, note_name);
  Dwarf dwarf;
  if (!img.lines.empty()) {
    dwarf = make_dwarf(img);
    const std::uint32_t l = lay.name(".debug_line"), i = lay.name(".debug_info"),
                        a = lay.name(".debug_abbrev");
    lay.add(SHT_PROGBITS, 0, 0, dwarf.line.data(), dwarf.line.size(), 1, l);
    lay.add(SHT_PROGBITS, 0, 0, dwarf.info.data(), dwarf.info.size(), 1, i);
    lay.add(SHT_PROGBITS, 0, 0, dwarf.abbrev.data(), dwarf.abbrev.size(), 1, a);
  }
  const std::uint32_t shstr_name = lay.name(".shstrtab");
  auto& shstr = lay.shstrtab();
  Elf_Scn* shstrtab = lay.add(SHT_STRTAB, 0, 0, shstr.data(), shstr.size(), 1, shstr_name);
  eh->e_shstrndx = static_cast<Elf64_Half>(elf_ndxscn(shstrtab));
  eh->e_shoff = (lay.offset() + 7) & ~std::uint64_t{7};
  GElf_Shdr sh;
  gelf_getshdr(symtab, &sh);
  sh.sh_link = static_cast<std::uint32_t>(elf_ndxscn(strs));
  sh.sh_info = 1;  // the first global symbol
  sh.sh_entsize = sizeof(Elf64_Sym);
  gelf_update_shdr(symtab, &sh);
  ph->p_type = PT_LOAD;
  ph->p_offset = ph->p_vaddr = ph->p_paddr = kJitTextOffset;
  ph->p_filesz = ph->p_memsz = img.code.size();
  ph->p_flags = PF_R | PF_X;
  ph->p_align = 8;
  if (elf_update(e, ELF_C_WRITE) < 0)
    return make_error("{}: cannot write ELF: {}", path, elf_errmsg(-1));
  return ok();
}

}  // namespace

BuildId jit_build_id(const JitImage& image) {
  // Five 32-bit words from two seeded passes of a 64-bit mix over the bytes.
  std::uint64_t h[3] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL};
  auto feed = [&](Bytes b) {
    for (std::uint8_t c : b)
      for (int k = 0; k < 3; ++k) h[k] = mix64(h[k] ^ (c + 0x100u * static_cast<unsigned>(k)));
  };
  std::uint8_t addr[8];
  std::memcpy(addr, &image.load_address, 8);
  feed(Bytes(addr, 8));
  feed(as_bytes(image.symbol));
  feed(image.code);
  BuildId id;
  id.size = 20;
  std::memcpy(id.bytes.data(), h, 20);
  return id;
}

Status write_jit_elf(const std::string& path, const JitImage& image) {
  if (elf_version(EV_CURRENT) == EV_NONE) return make_error("libelf: {}", elf_errmsg(-1));
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return make_error("{}: cannot create: {}", tmp, std::strerror(errno));
  Status st = write_elf(fd, image, path);
  if (::close(fd) != 0 && st) st = make_error("{}: {}", tmp, std::strerror(errno));
  if (st && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = make_error("{}: cannot rename {} to it: {}", path, tmp, std::strerror(errno));
  if (!st) ::unlink(tmp.c_str());
  return st;
}

}  // namespace perfkit::elf
