// This process's vdso. The kernel maps one vdso image into every process it
// runs, so perf takes its own copy for a recording's [vdso] (to symbolize,
// to read code, and for its build-id): perfkit does the same, through here.
#pragma once

#include "base/bytes.h"
#include "base/error.h"
#include "elf/build_id.h"
#include "elf/elf_file.h"

namespace perfkit::elf {

// The bytes of this process's [vdso] mapping: it starts at AT_SYSINFO_EHDR
// and ends where /proc/self/maps says. The view stays valid for the life of
// the process. Errors: no vdso is mapped, or /proc/self/maps does not show
// the mapping at that address.
Expected<Bytes> own_vdso_image();

// The same image as an ElfFile named "[vdso]" (a copy of the bytes).
// Errors: own_vdso_image()'s, and an image that is no ELF file.
Expected<ElfFile> own_vdso();

// The build-id of this process's vdso; empty when it has none or there is no
// vdso.
BuildId own_vdso_build_id();

}  // namespace perfkit::elf
