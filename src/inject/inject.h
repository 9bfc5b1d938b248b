// perfkit inject: read a recording and write it back (file or pipe mode on
// either side), the base that inject's options (-b, --itrace) build on.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "elf/build_id.h"
#include "inject/inject_guest.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"

namespace perfkit::inject {

// --known-build-ids 'BUILDID DSO,BUILDID DSO...' as perf parses it: items
// without a space, with an odd or over-long id or a non-hex digit are
// dropped; of several for one DSO, the first in byte order counts.
using KnownBuildIds = std::map<std::string, elf::BuildId, std::less<>>;
KnownBuildIds parse_known_build_ids(std::string_view list);

struct InjectOptions {
  bool pipe_output = false;
  // -b: add HEADER_BUILD_ID records and the build-id table for the DSOs
  // samples land in, as perf inject --build-ids does (inject_buildid.h).
  bool build_ids = false;
  // --buildid-all: a record for every DSO the maps name, before its map
  // record, hit by samples or not.
  bool build_id_all = false;
  // --known-build-ids: with -b, the build-ids of these DSOs (by long name)
  // as given, not read from their files; perf then writes them in the
  // build-id table, not as records. perf's --buildid-all ignores them.
  KnownBuildIds known_build_ids;
  // -s/--sched-stat: the sched_stat_* samples become their tasks' last
  // sched_switch samples (inject_sched_stat.h); records go out in time order.
  bool sched_stat = false;
  // -j/--jit: the jitdumps the recording's processes mapped become ELF
  // images and MMAP2 records of them (inject_jit.h); records go out in time order.
  bool jit = false;
  // Write the other endianness than this host's (tests make big-endian files
  // this way). By default the output is in host order, whatever the input's:
  // a file recorded on a big-endian machine comes out little-endian here.
  bool swap_output = false;
  // --guest-data: a guest's recording merged in (inject_guest.h); the input
  // is `input_path`, a file. Ignored with -b, --buildid-all and -s, as perf.
  std::optional<GuestData> guest;
  std::string input_path;
  std::string guestmount;  // --guestmount
};

// Copies every record of `in` to `out_path` ("-" for a stdout stream):
// compressed records are written decompressed, perf's header records of a
// stream become the file's attrs and feature sections (and back). Records,
// attrs and feature sections are converted when the output's byte order
// differs from the input's (record::swap_record, perfdata features).
// Errors: the reader's, the writer's, a record or feature section that cannot
// be converted (named with its offset).
Status run_inject(perfdata::Reader& in, const std::string& out_path, const InjectOptions& opts);

}  // namespace perfkit::inject
