// ElfFile: one ELF object opened through libelf (either class, either byte
// order; libelf converts to host order), with what symbolization needs: the
// file type, PT_LOAD segments for load bias, sections by name or index
// (compressed sections decompressed), the build-id, .gnu_debuglink and
// .gnu_debugdata (MiniDebugInfo, an xz-compressed ELF inside the ELF).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "elf/build_id.h"

typedef struct Elf Elf;  // libelf's handle, kept out of this header

namespace perfkit::elf {

inline constexpr std::uint16_t kTypeRel = 1;   // ET_REL
inline constexpr std::uint16_t kTypeExec = 2;  // ET_EXEC
inline constexpr std::uint16_t kTypeDyn = 3;   // ET_DYN

struct Segment {
  std::uint64_t vaddr = 0, offset = 0, filesz = 0, memsz = 0;
  std::uint32_t flags = 0;  // PF_X = 1, PF_W = 2, PF_R = 4
};

struct Section {
  std::size_t index = 0;
  std::string_view name;  // points into the ELF's string table
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
  std::uint32_t link = 0;
};

// A compressed section inflated only as far as its reader asks
// (ElfFile::inflate_lazily): to libelf, and so to libdw, its data is its
// whole plain size from the start, of which the first ready() bytes hold
// the section's bytes; the rest reads as zero until ensure() reaches it.
class LazySection {
 public:
  ~LazySection();
  LazySection(const LazySection&) = delete;
  LazySection& operator=(const LazySection&) = delete;
  // Inflates the section up to byte `end` (its size at most). False when
  // the compressed bytes do not inflate that far (the rest stays zero).
  bool ensure(std::uint64_t end);
  std::uint64_t ready() const { return done_; }
  std::uint64_t size() const { return size_; }
  bool complete() const { return !failed_ && done_ == size_; }

 private:
  friend class ElfFile;
  struct Stream;
  LazySection() = default;
  std::unique_ptr<Stream> stream_;
  std::uint8_t* out_ = nullptr;  // size_ bytes, mapped anonymous (zero until written)
  std::uint64_t size_ = 0, done_ = 0;
  bool failed_ = false;
};

struct Debuglink {
  std::string name;
  std::uint32_t crc = 0;
};

class ElfFile {
 public:
  ElfFile(ElfFile&&) noexcept;
  ElfFile& operator=(ElfFile&&) noexcept;
  ~ElfFile();

  // Opens `path`. Errors: cannot open (path and errno text), not an ELF file.
  static Expected<ElfFile> open(const std::string& path);
  // An ELF image held in memory (a decompressed .gnu_debugdata); `name` is
  // used in messages. Errors: not an ELF image.
  static Expected<ElfFile> from_image(std::vector<std::uint8_t> image, std::string name);

  const std::string& path() const { return path_; }
  std::uint16_t type() const { return type_; }
  std::uint16_t machine() const { return machine_; }
  bool is_64() const { return is_64_; }
  const std::vector<Segment>& segments() const { return segments_; }  // PT_LOAD only
  const std::vector<Section>& sections() const { return sections_; }
  const Section* section(std::string_view name) const;
  const Section* section_at(std::size_t index) const;
  // The section's bytes (decompressed for SHF_COMPRESSED), empty for
  // SHT_NOBITS or on a read error. Valid while this ElfFile lives.
  Bytes section_data(const Section& s) const;
  // Decompresses every compressed .debug_* section now, so that libdw
  // (dwarf_begin_elf on handle()) finds them plain.
  void decompress_debug_sections() const;
  // Inflates compressed section `s` (zlib) only as far as asked from now
  // on; nullptr when it is not such a section (or its header is bad).
  // Valid while this ElfFile lives.
  LazySection* inflate_lazily(const Section& s) const;
  // The file's byte order is not this machine's (its sections' raw bytes
  // read swapped).
  bool swapped() const { return swapped_; }
  // Makes the named sections look empty (SHT_NOBITS) to whoever reads this
  // file through handle() from now on: libdw then neither inflates nor
  // keeps debug sections a reader has no use for.
  void hide_sections(std::initializer_list<std::string_view> names);

  const BuildId& build_id() const { return build_id_; }
  std::optional<Debuglink> debuglink() const;
  // The ELF image inside .gnu_debugdata, decompressed. Errors: no such
  // section, or xz data that does not decode.
  Expected<ElfFile> mini_debuginfo() const;

  // Whether the table is there with its contents: a separate debug file
  // keeps the runtime sections (.dynsym among them) as SHT_NOBITS headers.
  bool has_symtab() const { return has_contents(".symtab"); }
  bool has_dynsym() const { return has_contents(".dynsym"); }
  Elf* handle() const { return elf_; }

 private:
  ElfFile() = default;
  bool has_contents(std::string_view name) const;
  Status init();
  bool inflate(void* scn) const;

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::vector<std::uint8_t> image_;  // owned bytes for in-memory images
  // Sections decompressed by inflate(), which libelf's data points into.
  mutable std::vector<std::unique_ptr<std::uint8_t[]>> inflated_;
  mutable std::vector<std::unique_ptr<LazySection>> lazy_;
  std::uint16_t type_ = 0, machine_ = 0;
  bool is_64_ = false, swapped_ = false;
  std::vector<Segment> segments_;
  std::vector<Section> sections_;
  BuildId build_id_;
};

// The CRC32 that .gnu_debuglink carries (zlib's polynomial), of a whole file.
Expected<std::uint32_t> file_crc32(const std::string& path);

}  // namespace perfkit::elf
