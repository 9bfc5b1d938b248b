// What perf prints of the BPF_PROG_INFO and BPF_BTF features: the fields of
// a struct bpf_prog_info kept as bytes (with its arrays stored as offsets into
// the entry's data, as perf's bpil writes them), and function names from a
// BTF blob.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"
#include "perfdata/features.h"

namespace perfkit::perfdata {

// The fields of one bpf_prog_info that name and place its functions.
struct BpfProgSummary {
  std::uint32_t id = 0;
  std::uint32_t btf_id = 0;
  std::string name;  // bpf_prog_info.name (16 bytes, cut at the NUL)
  std::uint32_t nr_jited_ksyms = 0;
  std::uint32_t nr_jited_func_lens = 0;
  std::uint32_t nr_prog_tags = 0;
  std::vector<std::uint64_t> jited_ksyms;      // address of each sub-program
  std::vector<std::uint32_t> jited_func_lens;  // size of each sub-program
  std::vector<std::array<std::uint8_t, 8>> prog_tags;
  std::vector<std::uint32_t> func_type_ids;  // BTF type of each sub-program (func_info)
};

// Reads the summary of `p` (fields past info's length read as zero, as perf
// does). Errors: an array whose offset and count run outside the entry's data.
Expected<BpfProgSummary> summarize_bpf_prog(const BpfProgInfo& p, bool swap);

// The name of BTF type `type_id` in `btf` (a raw BTF blob: header, types,
// strings), or nullopt when the blob is malformed or has no such type.
std::optional<std::string> btf_type_name(Bytes btf, std::uint32_t type_id);

// perf's name for sub-program `sub` of a program: "bpf_prog_<tag>_<name>",
// with the name from BTF when `btf` is given, else the program's own name (for
// a program without sub-programs) or "F".
std::string bpf_prog_name(const BpfProgSummary& s, std::uint32_t sub, const BpfBtf* btf);

}  // namespace perfkit::perfdata
