// Build-ids: the GNU build-id note of an ELF file, of the running kernel
// (/sys/kernel/notes) and of its modules (/sys/module/NAME/notes), and
// their text form. A build-id names the exact binary a profile touched.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/error.h"

namespace perfkit::elf {

struct BuildId {
  std::array<std::uint8_t, 20> bytes{};
  std::uint8_t size = 0;  // 20 for SHA-1 ids; others (e.g. 16 for MD5) exist

  bool empty() const { return size == 0; }
  Bytes view() const { return Bytes(bytes.data(), size); }
  // Lower-case hex, as perf prints it.
  std::string hex() const;
  static BuildId from_bytes(Bytes b);
  // Parses hex text (any length up to 40 digits, even). Errors on bad digits.
  static Expected<BuildId> from_hex(std::string_view hex);
  bool operator==(const BuildId& o) const {
    return size == o.size && view().size() == o.view().size() &&
           std::equal(view().begin(), view().end(), o.view().begin());
  }
};

// Finds the NT_GNU_BUILD_ID note in a buffer of ELF notes (the contents of
// a .note section or of /sys/kernel/notes). `swap` is the notes' byte order.
// Returns an empty BuildId when there is none.
BuildId find_build_id_note(Bytes notes, bool swap = false);

// Reads the build-id of an ELF file from its note sections or PT_NOTE
// segments. Errors: cannot open, not ELF; an ELF without a build-id
// returns an empty BuildId.
Expected<BuildId> read_build_id(const std::string& path);

// The running kernel's build-id from /sys/kernel/notes (root may not be
// needed), or a module's from /sys/module/NAME/notes/.note.gnu.build-id.
Expected<BuildId> kernel_build_id(const std::string& sysfs_root = "/sys");
Expected<BuildId> module_build_id(const std::string& module,
                                  const std::string& sysfs_root = "/sys");

}  // namespace perfkit::elf
