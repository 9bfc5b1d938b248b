// Debuginfod: fetches a build-id's debug file and executable through
// libdebuginfod, loaded with dlopen on first use. The library pulls in
// libcurl and some twenty more libraries; linking it would make every
// perfkit command pay for loading them, debuginfod or not (elfutils' own
// libdw loads it the same way).
#pragma once

#include <string>
#include <vector>

#include "elf/build_id.h"

namespace perfkit::symbol {

class Debuginfod {
 public:
  Debuginfod() = default;
  Debuginfod(const Debuginfod&) = delete;
  Debuginfod& operator=(const Debuginfod&) = delete;
  ~Debuginfod();

  // The local paths (debuginfod's cache) of `id`'s debug file and
  // executable, those the servers in DEBUGINFOD_URLS have; empty when
  // libdebuginfod.so.1 cannot be loaded.
  std::vector<std::string> find(const elf::BuildId& id);

 private:
  bool load();

  void* handle_ = nullptr;
  bool tried_ = false;
  void* (*begin_)() = nullptr;
  void (*end_)(void*) = nullptr;
  int (*find_debuginfo_)(void*, const unsigned char*, int, char**) = nullptr;
  int (*find_executable_)(void*, const unsigned char*, int, char**) = nullptr;
};

}  // namespace perfkit::symbol
