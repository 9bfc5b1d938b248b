#include "analysis/code_reader.h"

#include <Zydis/Zydis.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace perfkit::analysis {

namespace {

// This process's vdso: its bytes in memory, "" when there is none.
std::string_view own_vdso() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    std::uint64_t lo = std::stoull(line, nullptr, 16);
    std::uint64_t hi = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (lo != getauxval(AT_SYSINFO_EHDR) || hi <= lo) break;
    return {reinterpret_cast<const char*>(lo), static_cast<std::size_t>(hi - lo)};
  }
  return {};
}

}  // namespace

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
    if (!vdso_tried_) vdso_ = own_vdso(), vdso_tried_ = true;
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
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction insn;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, nullptr, code, n, &insn))) return 0;
  return insn.length;
}

}  // namespace perfkit::analysis
