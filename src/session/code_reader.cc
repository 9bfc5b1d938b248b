#include "session/code_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "elf/vdso.h"

namespace perfkit::session {

CodeReader::~CodeReader() {
  for (auto& [dso, fd] : fds_)
    if (fd >= 0) ::close(fd);
}

// perf's order for a DSO's data: the build-id cache, then the file itself.
int CodeReader::fd_of(const machine::Dso& dso) {
  auto [it, fresh] = fds_.try_emplace(&dso, -1);
  if (!fresh) return it->second;
  if (!dso.build_id.empty() && !opts_.buildid_dir.empty()) {
    std::string cached = symbol::buildid_cache_file(opts_.buildid_dir, dso.long_name, dso.build_id);
    it->second = ::open(cached.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (it->second < 0)
    it->second = ::open((opts_.symfs + dso.long_name).c_str(), O_RDONLY | O_CLOEXEC);
  return it->second;
}

bool CodeReader::read(const machine::Location& loc, std::uint8_t* buf, std::size_t n) {
  if (!loc.map || !loc.dso || loc.map->identity) return false;
  if (loc.dso->kind == machine::DsoKind::kVdso) {
    if (loc.dso->long_name != "[vdso]") return false;
    if (!vdso_tried_) {
      auto image = elf::own_vdso_image();
      if (image) vdso_ = *image;
      vdso_tried_ = true;
    }
    if (loc.addr > vdso_.size() || n > vdso_.size() - loc.addr) return false;
    std::memcpy(buf, vdso_.data() + loc.addr, n);
    return true;
  }
  if (loc.dso->kind != machine::DsoKind::kUser) return false;
  const int fd = fd_of(*loc.dso);
  if (fd < 0) return false;
  return ::pread(fd, buf, n, static_cast<off_t>(loc.addr)) == static_cast<ssize_t>(n);
}

unsigned CodeReader::fetch_insn(const machine::Location& loc, std::uint8_t (&code)[16]) {
  std::size_t n = sizeof code;
  while (n && !read(loc, code, n)) --n;  // the end of the file may be nearer
  if (!n) return 0;
  return decoder_.decode(Bytes(code, n)).length;
}

}  // namespace perfkit::session
