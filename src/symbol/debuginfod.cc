#include "symbol/debuginfod.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

namespace perfkit::symbol {

Debuginfod::~Debuginfod() {
  if (handle_) ::dlclose(handle_);
}

bool Debuginfod::load() {
  if (tried_) return handle_ != nullptr;
  tried_ = true;
  handle_ = ::dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle_) return false;
  // The C API of elfutils/debuginfod.h, with the client as an opaque pointer.
  begin_ = reinterpret_cast<void* (*)()>(::dlsym(handle_, "debuginfod_begin"));
  end_ = reinterpret_cast<void (*)(void*)>(::dlsym(handle_, "debuginfod_end"));
  find_debuginfo_ = reinterpret_cast<int (*)(void*, const unsigned char*, int, char**)>(
      ::dlsym(handle_, "debuginfod_find_debuginfo"));
  find_executable_ = reinterpret_cast<int (*)(void*, const unsigned char*, int, char**)>(
      ::dlsym(handle_, "debuginfod_find_executable"));
  if (!begin_ || !end_ || !find_debuginfo_ || !find_executable_) {
    ::dlclose(handle_);
    handle_ = nullptr;
  }
  return handle_ != nullptr;
}

std::vector<std::string> Debuginfod::find(const elf::BuildId& id) {
  std::vector<std::string> out;
  if (id.empty() || !load()) return out;
  void* client = begin_();
  if (!client) return out;
  for (auto* fn : {find_debuginfo_, find_executable_}) {
    char* path = nullptr;
    int fd = fn(client, id.bytes.data(), static_cast<int>(id.size), &path);
    if (fd >= 0) {
      ::close(fd);
      if (path) out.emplace_back(path);
    }
    std::free(path);
  }
  end_(client);
  return out;
}

}  // namespace perfkit::symbol
