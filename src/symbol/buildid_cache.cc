#include "symbol/buildid_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "base/mapped_file.h"
#include "elf/elf_file.h"
#include "symbol/symbolizer.h"

namespace perfkit::symbol {

namespace fs = std::filesystem;

namespace {

// A name beside `p` for what becomes `p` by a rename: another session
// reading the cache meanwhile sees the old file or the new one, never half
// of one.
std::string temp_beside(const fs::path& p) {
  return p.string() + ".tmp." + std::to_string(::getpid());
}

Status write_file(const fs::path& p, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec)
    return make_error("{}: cannot create directory: {}", p.parent_path().string(), ec.message());
  const std::string tmp = temp_beside(p);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return make_error("{}: cannot write", p.string());
    }
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    const int e = errno;
    fs::remove(tmp, ec);
    return make_error("{}: cannot write: {}", p.string(), std::strerror(e));
  }
  return ok();
}

// Links DIR/.build-id/xx/rest -> ../../PATH/ID.
Status link_build_id(const std::string& dir, std::string_view name, const elf::BuildId& id) {
  std::string link = buildid_link_path(dir, id);
  std::string target =
      "../.." + std::string(name.starts_with("/") ? "" : "/") + std::string(name) + "/" + id.hex();
  std::error_code ec;
  fs::create_directories(fs::path(link).parent_path(), ec);
  // (made aside and renamed over the old link: never missing meanwhile)
  const std::string tmp = temp_beside(link);
  fs::remove(tmp, ec);
  if (::symlink(target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), link.c_str()) != 0) {
    const int e = errno;
    fs::remove(tmp, ec);
    return make_error("{}: cannot link: {}", link, std::strerror(e));
  }
  return ok();
}

}  // namespace

Status BuildIdCache::add_bytes(const std::string& name, const elf::BuildId& id,
                               std::string_view bytes, const std::string& leaf) {
  if (id.empty()) return make_error("{}: no build-id", name);
  fs::path d = buildid_cache_dir(dir_, name, id);
  PK_TRY(write_file(d / leaf, bytes));
  return link_build_id(dir_, name, id);
}

Status BuildIdCache::add(const std::string& path) {
  std::error_code ec;
  std::string abs = fs::absolute(path, ec).lexically_normal().string();
  PK_ASSIGN(auto id, elf::read_build_id(abs));
  if (id.empty()) return make_error("{}: no build-id", abs);
  fs::path d = buildid_cache_dir(dir_, abs, id);
  if (fs::exists(d / "elf", ec)) return ok();
  fs::create_directories(d, ec);
  if (ec) return make_error("{}: cannot create directory: {}", d.string(), ec.message());
  // A hard link when on the same file system (as perf does), else a copy.
  if (::link(abs.c_str(), (d / "elf").c_str()) != 0) {
    fs::copy_file(abs, d / "elf", fs::copy_options::overwrite_existing, ec);
    if (ec) return make_error("{}: cannot copy into the cache: {}", abs, ec.message());
  }
  return link_build_id(dir_, abs, id);
}

Status BuildIdCache::remove(const std::string& path) {
  std::error_code ec;
  std::string abs = fs::absolute(path, ec).lexically_normal().string();
  PK_ASSIGN(auto id, elf::read_build_id(abs));
  if (id.empty()) return make_error("{}: no build-id", abs);
  fs::remove(buildid_link_path(dir_, id), ec);
  fs::remove_all(buildid_cache_dir(dir_, abs, id), ec);
  if (ec) return make_error("{}: cannot remove from the cache: {}", abs, ec.message());
  return ok();
}

Status BuildIdCache::purge(const std::string& path) {
  std::error_code ec;
  std::string abs = fs::absolute(path, ec).lexically_normal().string();
  fs::path d = dir_ + abs;
  if (!fs::is_directory(d, ec)) return make_error("{}: not in the build-id cache", abs);
  // (the iterators' error-code forms throughout: the library never throws)
  for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
    auto id = elf::BuildId::from_hex(it->path().filename().string());
    std::error_code rec;
    if (id) fs::remove(buildid_link_path(dir_, *id), rec);
  }
  fs::remove_all(d, ec);
  if (ec) return make_error("{}: cannot purge: {}", abs, ec.message());
  return ok();
}

std::vector<std::pair<std::string, std::string>> BuildIdCache::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  fs::path top = fs::path(dir_) / ".build-id";
  for (fs::directory_iterator s(top, ec), end; !ec && s != end; s.increment(ec)) {
    const fs::directory_entry& sub = *s;
    std::string xx = sub.path().filename().string();
    if (xx.size() != 2) continue;
    std::error_code iec;
    for (fs::directory_iterator li(sub.path(), iec); !iec && li != end; li.increment(iec)) {
      const fs::directory_entry& l = *li;
      std::error_code lec;
      if (!fs::is_symlink(l.symlink_status(lec))) continue;
      if (!fs::exists(l.path(), lec)) continue;  // only valid entries
      std::string target = fs::read_symlink(l.path(), lec).string();
      std::string bid = xx + l.path().filename().string();
      // "../../PATH/ID" -> "PATH"
      std::string name = target;
      if (name.starts_with("../..")) name = name.substr(5);
      if (name.ends_with("/" + bid)) name.resize(name.size() - bid.size() - 1);
      if (name.size() > 1 && name[0] == '/' && name[1] == '[') name = name.substr(1);
      out.emplace_back(bid, name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status BuildIdCache::add_kcore(const std::string& proc_dir) {
  PK_ASSIGN(auto id, elf::kernel_build_id());
  PK_ASSIGN(std::string kallsyms, read_text_file(proc_dir + "/kallsyms"));
  std::string modules;
  if (auto m = read_text_file(proc_dir + "/modules")) modules = *m;
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S00", std::localtime(&now));
  fs::path d = buildid_cache_dir(dir_, "[kernel.kcore]", id);
  d /= stamp;
  PK_TRY(write_file(d / "kallsyms", kallsyms));
  PK_TRY(write_file(d / "modules", modules));
  // kallsyms for the kernel too, so report finds it by build-id.
  return write_file(buildid_cache_dir(dir_, "[kernel.kallsyms]", id) + "/kallsyms", kallsyms);
}

}  // namespace perfkit::symbol
