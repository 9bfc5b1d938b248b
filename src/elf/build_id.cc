#include "elf/build_id.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/cursor.h"
#include "base/mapped_file.h"

namespace perfkit::elf {

namespace {
constexpr std::uint32_t kNtGnuBuildId = 3;
}

std::string BuildId::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * size);
  for (std::uint8_t i = 0; i < size; ++i) {
    s += kDigits[bytes[i] >> 4];
    s += kDigits[bytes[i] & 15];
  }
  return s;
}

BuildId BuildId::from_bytes(Bytes b) {
  BuildId id;
  id.size = static_cast<std::uint8_t>(std::min<std::size_t>(b.size(), id.bytes.size()));
  std::memcpy(id.bytes.data(), b.data(), id.size);
  return id;
}

Expected<BuildId> BuildId::from_hex(std::string_view hex) {
  if (hex.size() % 2 || hex.size() > 40 || hex.empty())
    return make_error("'{}' is not a build-id (2 to 40 hex digits)", hex);
  BuildId id;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return make_error("'{}' is not a build-id (bad hex digit)", hex);
    id.bytes[i / 2] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  id.size = static_cast<std::uint8_t>(hex.size() / 2);
  return id;
}

BuildId find_build_id_note(Bytes notes, bool swap) {
  Cursor c(notes, swap);
  while (c.remaining() >= 12) {
    std::uint32_t namesz = c.u32(), descsz = c.u32(), type = c.u32();
    std::string_view name = c_string(c.bytes(align_up(namesz, 4)));
    Bytes desc = c.bytes(align_up(descsz, 4));
    if (!c.ok()) break;
    if (type == kNtGnuBuildId && name == "GNU" && descsz > 0)
      return BuildId::from_bytes(desc.subspan(0, descsz));
  }
  return {};
}

Expected<BuildId> read_build_id(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return make_error("libelf initialization failed");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("{}: cannot open: {}", path, std::strerror(errno));
  Elf* e = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    if (e) elf_end(e);
    ::close(fd);
    return make_error("{}: not an ELF file", path);
  }
  BuildId id;
  Elf_Scn* scn = nullptr;
  while (id.empty() && (scn = elf_nextscn(e, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d || !d->d_buf) continue;
    // elf_getdata converts notes to host order.
    id = find_build_id_note(Bytes(static_cast<const std::uint8_t*>(d->d_buf), d->d_size), false);
  }
  std::size_t nph = 0;
  if (id.empty() && elf_getphdrnum(e, &nph) == 0) {
    for (std::size_t i = 0; i < nph && id.empty(); ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(e, static_cast<int>(i), &ph) || ph.p_type != PT_NOTE) continue;
      Elf_Data* d =
          elf_getdata_rawchunk(e, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
      if (d && d->d_buf)
        id =
            find_build_id_note(Bytes(static_cast<const std::uint8_t*>(d->d_buf), d->d_size), false);
    }
  }
  elf_end(e);
  ::close(fd);
  return id;
}

Expected<BuildId> kernel_build_id(const std::string& sysfs_root) {
  PK_ASSIGN(std::string notes, read_text_file(sysfs_root + "/kernel/notes"));
  return find_build_id_note(as_bytes(notes));
}

Expected<BuildId> module_build_id(const std::string& module, const std::string& sysfs_root) {
  PK_ASSIGN(std::string notes,
            read_text_file(sysfs_root + "/module/" + module + "/notes/.note.gnu.build-id"));
  return find_build_id_note(as_bytes(notes));
}

}  // namespace perfkit::elf
