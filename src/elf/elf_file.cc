#include "elf/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <isa-l/igzip_lib.h>
#include <libelf.h>
#include <lzma.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "base/mapped_file.h"
#include "base/populate.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21  // Linux 5.4
#endif

namespace perfkit::elf {

ElfFile::ElfFile(ElfFile&& o) noexcept { *this = std::move(o); }

ElfFile& ElfFile::operator=(ElfFile&& o) noexcept {
  if (this == &o) return *this;
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(o.path_);
  fd_ = o.fd_;
  elf_ = o.elf_;
  image_ = std::move(o.image_);
  inflated_ = std::move(o.inflated_);
  lazy_ = std::move(o.lazy_);
  type_ = o.type_;
  machine_ = o.machine_;
  is_64_ = o.is_64_;
  swapped_ = o.swapped_;
  segments_ = std::move(o.segments_);
  sections_ = std::move(o.sections_);
  build_id_ = o.build_id_;
  o.fd_ = -1;
  o.elf_ = nullptr;
  return *this;
}

ElfFile::~ElfFile() {
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

Expected<ElfFile> ElfFile::open(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return make_error("libelf initialization failed");
  ElfFile f;
  f.path_ = path;
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd_ < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  f.elf_ = elf_begin(f.fd_, ELF_C_READ_MMAP, nullptr);
  PK_TRY(f.init());
  return f;
}

Expected<ElfFile> ElfFile::from_image(std::vector<std::uint8_t> image, std::string name) {
  if (elf_version(EV_CURRENT) == EV_NONE) return make_error("libelf initialization failed");
  ElfFile f;
  f.path_ = std::move(name);
  f.image_ = std::move(image);
  f.elf_ = elf_memory(reinterpret_cast<char*>(f.image_.data()), f.image_.size());
  PK_TRY(f.init());
  return f;
}

Status ElfFile::init() {
  if (!elf_ || elf_kind(elf_) != ELF_K_ELF) return make_error("{}: not an ELF file", path_);
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf_, &eh)) return make_error("{}: bad ELF header", path_);
  type_ = eh.e_type;
  machine_ = eh.e_machine;
  is_64_ = gelf_getclass(elf_) == ELFCLASS64;
  swapped_ = (eh.e_ident[EI_DATA] == ELFDATA2MSB) != (kHostOrder == ByteOrder::kBig);
  std::size_t nph = 0;
  if (elf_getphdrnum(elf_, &nph) == 0) {
    for (std::size_t i = 0; i < nph; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf_, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
      segments_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_flags});
    }
  }
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf_, &shstrndx) != 0) shstrndx = 0;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    Section s;
    s.index = elf_ndxscn(scn);
    const char* name = shstrndx ? elf_strptr(elf_, shstrndx, sh.sh_name) : nullptr;
    s.name = name ? std::string_view(name) : std::string_view();
    s.type = sh.sh_type;
    s.flags = sh.sh_flags;
    s.addr = sh.sh_addr;
    s.offset = sh.sh_offset;
    s.size = sh.sh_size;
    s.entsize = sh.sh_entsize;
    s.link = sh.sh_link;
    sections_.push_back(s);
  }
  for (const auto& s : sections_) {
    if (s.type != SHT_NOTE || !build_id_.empty()) continue;
    // elf_getdata converts notes to host order.
    build_id_ = find_build_id_note(section_data(s), false);
  }
  if (build_id_.empty()) {
    for (std::size_t i = 0; i < nph && build_id_.empty(); ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf_, static_cast<int>(i), &ph) || ph.p_type != PT_NOTE) continue;
      Elf_Data* d =
          elf_getdata_rawchunk(elf_, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
      if (d && d->d_buf)
        build_id_ =
            find_build_id_note(Bytes(static_cast<const std::uint8_t*>(d->d_buf), d->d_size), false);
    }
  }
  return ok();
}

const Section* ElfFile::section(std::string_view name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

const Section* ElfFile::section_at(std::size_t index) const {
  // Sections are listed from index 1 (elf_nextscn skips the null one), so
  // the index finds its section directly unless one failed to read.
  if (index >= 1 && index <= sections_.size() && sections_[index - 1].index == index)
    return &sections_[index - 1];
  for (const auto& s : sections_)
    if (s.index == index) return &s;
  return nullptr;
}

bool ElfFile::has_contents(std::string_view name) const {
  const Section* s = section(name);
  return s && s->type != SHT_NOBITS;
}

Bytes ElfFile::section_data(const Section& s) const {
  if (s.type == SHT_NOBITS) return {};
  Elf_Scn* scn = elf_getscn(elf_, s.index);
  if (!scn) return {};
  GElf_Shdr sh;
  if ((s.flags & SHF_COMPRESSED) && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED)) {
    // Decompresses in place; later calls see the plain data.
    if (!inflate(scn) && elf_compress(scn, 0, 0) < 0) return {};
  } else if (s.name.starts_with(".zdebug")) {
    if (elf_compress_gnu(scn, 0, 0) < 0) return {};
  }
  Elf_Data* d = elf_getdata(scn, nullptr);
  if (!d || !d->d_buf) return {};
  return Bytes(static_cast<const std::uint8_t*>(d->d_buf), d->d_size);
}

void ElfFile::decompress_debug_sections() const {
  for (const Section& s : sections_)
    if ((s.flags & SHF_COMPRESSED) && s.name.starts_with(".debug_")) (void)section_data(s);
}

void ElfFile::hide_sections(std::initializer_list<std::string_view> names) {
  for (Section& s : sections_) {
    if (std::find(names.begin(), names.end(), s.name) == names.end()) continue;
    Elf_Scn* scn = elf_getscn(elf_, s.index);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) continue;
    sh.sh_type = SHT_NOBITS;
    if (gelf_update_shdr(scn, &sh)) s.type = SHT_NOBITS;
  }
}

namespace {

// Gives back the pages of compressed bytes read no more (clean pages of the
// mapped file: nothing is lost). Errors are of no consequence.
void page_out(const void* bytes, std::size_t size) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = (reinterpret_cast<std::uintptr_t>(bytes) + page - 1) & ~(page - 1);
  const auto to = (reinterpret_cast<std::uintptr_t>(bytes) + size) & ~(page - 1);
  if (to > from) (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_PAGEOUT);
}

}  // namespace

// A zlib-compressed section (ELFCOMPRESS_ZLIB) decompressed by ISA-L's
// igzip, about 2.7x as fast as libelf's zlib (and 1.3x libdeflate: 11 ms
// against 15 ms for a libc's line and unit sections here), its Adler-32
// checked, and handed to libelf as
// elf_compress(scn, 0, 0) leaves it: the section's raw and converted data
// are the plain bytes, its header loses SHF_COMPRESSED and takes the plain
// size and alignment. libdw reads the raw data; the buffer is ours (libelf
// frees only what it allocated) and lives as long as the ELF handle.
namespace {

// A zlib section's compressed stream and what libelf holds of it.
struct ZlibSection {
  GElf_Chdr ch;
  GElf_Shdr sh;
  Elf_Data *data = nullptr, *raw = nullptr;
  const std::uint8_t* bytes = nullptr;  // the raw data (hand_plain repoints raw)
  std::size_t size = 0;
  std::uint8_t* stream = nullptr;  // after the compression header
  std::size_t stream_size = 0;
};

// `scn` as a ZlibSection, if it is one whose sizes are sound (a plain size
// beyond what deflate can reach, 1032:1, is a corrupt header; both fit
// ISA-L's 32-bit counts).
std::optional<ZlibSection> zlib_section(Elf_Scn* scn, bool is_64) {
  ZlibSection z;
  if (!scn || !gelf_getchdr(scn, &z.ch) || z.ch.ch_type != ELFCOMPRESS_ZLIB ||
      !gelf_getshdr(scn, &z.sh) || !(z.sh.sh_flags & SHF_COMPRESSED))
    return std::nullopt;
  z.data = elf_getdata(scn, nullptr);
  z.raw = elf_rawdata(scn, nullptr);
  const std::size_t header = is_64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
  if (!z.data || !z.raw || !z.raw->d_buf || z.raw->d_size < header) return std::nullopt;
  z.bytes = static_cast<const std::uint8_t*>(z.raw->d_buf);
  z.size = z.raw->d_size;
  z.stream = static_cast<std::uint8_t*>(z.raw->d_buf) + header;
  z.stream_size = z.raw->d_size - header;
  if (z.ch.ch_size == 0 || z.ch.ch_size / 1032 > z.raw->d_size || z.ch.ch_size > UINT32_MAX ||
      z.stream_size > UINT32_MAX)
    return std::nullopt;
  return z;
}

// Hands libelf the plain bytes at `plain` as elf_compress(scn, 0, 0) leaves
// a section: its raw and converted data are them, its header loses
// SHF_COMPRESSED and takes the plain size and alignment.
bool hand_plain(Elf_Scn* scn, ZlibSection& z, std::uint8_t* plain) {
  z.sh.sh_flags &= ~static_cast<GElf_Xword>(SHF_COMPRESSED);
  z.sh.sh_size = z.ch.ch_size;
  z.sh.sh_addralign = z.ch.ch_addralign;
  if (!gelf_update_shdr(scn, &z.sh)) return false;
  for (Elf_Data* e : {z.raw, z.data}) {
    e->d_buf = plain;
    e->d_size = z.ch.ch_size;
    e->d_type = ELF_T_BYTE;
    e->d_off = 0;
    e->d_align = z.ch.ch_addralign;
  }
  return true;
}

}  // namespace

// A zlib-compressed section (ELFCOMPRESS_ZLIB) decompressed by ISA-L's
// igzip, about 2.7x as fast as libelf's zlib (and 1.3x libdeflate: 11 ms
// against 15 ms for a libc's line and unit sections here), its Adler-32
// checked, and handed to libelf (hand_plain). libdw reads the raw data; the
// buffer is ours (libelf frees only what it allocated) and lives as long
// as the ELF handle.
bool ElfFile::inflate(void* section) const {
  auto* scn = static_cast<Elf_Scn*>(section);
  std::optional<ZlibSection> z = zlib_section(scn, is_64_);
  if (!z) return false;
  std::unique_ptr<std::uint8_t[]> out(new (std::nothrow) std::uint8_t[z->ch.ch_size]);
  if (!out) return false;
  base::populate_for_write(out.get(), z->ch.ch_size);
  inflate_state st;
  isal_inflate_init(&st);
  st.next_in = z->stream;
  st.avail_in = static_cast<std::uint32_t>(z->stream_size);
  st.next_out = out.get();
  st.avail_out = static_cast<std::uint32_t>(z->ch.ch_size);
  st.crc_flag = ISAL_ZLIB;
  if (isal_inflate_stateless(&st) != ISAL_DECOMP_OK || st.total_out != z->ch.ch_size) return false;
  if (!hand_plain(scn, *z, out.get())) return false;
  inflated_.push_back(std::move(out));
  // The compressed bytes are read no more (an image held in memory is
  // left as it is).
  if (image_.empty()) page_out(z->bytes, z->size);
  return true;
}

struct LazySection::Stream {
  inflate_state z;
  const std::uint8_t* compressed = nullptr;
  std::size_t compressed_size = 0;
  bool release = false;  // page the compressed bytes out once inflated
};

LazySection::~LazySection() {
  if (out_) ::munmap(out_, size_);
}

bool LazySection::ensure(std::uint64_t end) {
  end = std::min(end, size_);
  if (failed_ || done_ >= end) return !failed_ && done_ >= end;
  // Steps of at least 256 KiB: the stream's calls stay few.
  const std::uint64_t target = std::min(size_, std::max(end, done_ + (std::uint64_t{256} << 10)));
  inflate_state& z = stream_->z;
  z.next_out = out_ + done_;
  z.avail_out = static_cast<std::uint32_t>(target - done_);
  base::populate_for_write(out_ + done_, target - done_);
  int r = isal_inflate(&z);
  done_ = z.total_out;
  // At the section's end the stream's own end (the Adler-32 after the last
  // block) is checked too.
  if (r == ISAL_DECOMP_OK && done_ == size_ && z.block_state != ISAL_BLOCK_FINISH)
    r = isal_inflate(&z);
  if (r != ISAL_DECOMP_OK || done_ != target ||
      (done_ == size_ && z.block_state != ISAL_BLOCK_FINISH)) {
    failed_ = true;
    return false;
  }
  if (done_ == size_ && stream_->release) page_out(stream_->compressed, stream_->compressed_size);
  return done_ >= end;
}

LazySection* ElfFile::inflate_lazily(const Section& s) const {
  Elf_Scn* scn = elf_getscn(elf_, s.index);
  std::optional<ZlibSection> z =
      s.flags & SHF_COMPRESSED ? zlib_section(scn, is_64_) : std::nullopt;
  if (!z) return nullptr;
  void* out =
      ::mmap(nullptr, z->ch.ch_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (out == MAP_FAILED) return nullptr;
  std::unique_ptr<LazySection> lz(new LazySection());
  lz->out_ = static_cast<std::uint8_t*>(out);
  lz->size_ = z->ch.ch_size;
  lz->stream_ = std::make_unique<LazySection::Stream>();
  LazySection::Stream& st = *lz->stream_;
  isal_inflate_init(&st.z);
  st.compressed = z->bytes;
  st.compressed_size = z->size;
  st.release = image_.empty();
  st.z.next_in = z->stream;
  st.z.avail_in = static_cast<std::uint32_t>(z->stream_size);
  st.z.crc_flag = ISAL_ZLIB;
  if (!hand_plain(scn, *z, lz->out_)) return nullptr;
  return lazy_.emplace_back(std::move(lz)).get();
}

std::optional<Debuglink> ElfFile::debuglink() const {
  const Section* s = section(".gnu_debuglink");
  if (!s) return std::nullopt;
  Bytes b = section_data(*s);
  std::string_view name = c_string(b);
  if (name.empty()) return std::nullopt;
  Debuglink link;
  link.name = std::string(name);
  std::size_t at = align_up(name.size() + 1, 4);
  if (at + 4 <= b.size()) {
    link.crc = load<std::uint32_t>(b.data() + at, swapped_);
  }
  return link;
}

Expected<ElfFile> ElfFile::mini_debuginfo() const {
  const Section* s = section(".gnu_debugdata");
  if (!s) return make_error("{}: no .gnu_debugdata section", path_);
  Bytes xz = section_data(*s);
  lzma_stream strm = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
    return make_error("{}: cannot start the xz decoder", path_);
  std::vector<std::uint8_t> out(std::max<std::size_t>(xz.size() * 4, 4096));
  strm.next_in = xz.data();
  strm.avail_in = xz.size();
  strm.next_out = out.data();
  strm.avail_out = out.size();
  lzma_ret r;
  for (;;) {
    r = lzma_code(&strm, LZMA_FINISH);
    if (r != LZMA_OK) break;
    if (strm.avail_out == 0) {
      std::size_t used = out.size();
      out.resize(used * 2);
      strm.next_out = out.data() + used;
      strm.avail_out = out.size() - used;
    }
  }
  std::size_t total = strm.total_out;
  lzma_end(&strm);
  if (r != LZMA_STREAM_END) return make_error("{}: .gnu_debugdata does not decode as xz", path_);
  out.resize(total);
  return from_image(std::move(out), path_ + " [.gnu_debugdata]");
}

Expected<std::uint32_t> file_crc32(const std::string& path) {
  static const auto kTable = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  PK_ASSIGN(auto file, MappedFile::open(path));
  std::uint32_t crc = 0xffffffffu;
  for (std::uint8_t b : file.bytes()) crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

}  // namespace perfkit::elf
