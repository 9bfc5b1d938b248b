#include "perfdata/feature_bpf.h"

#include <fmt/format.h>

#include "base/cursor.h"

namespace perfkit::perfdata {

namespace {

// Offsets of the struct bpf_prog_info fields perf prints (linux/bpf.h).
enum ProgInfoOffset : std::size_t {
  kId = 4,
  kName = 64,
  kNameLen = 16,
  kNrJitedKsyms = 104,
  kNrJitedFuncLens = 108,
  kJitedKsyms = 112,
  kJitedFuncLens = 120,
  kBtfId = 128,
  kFuncInfoRecSize = 132,
  kFuncInfo = 136,
  kNrFuncInfo = 144,
  kNrProgTags = 180,
  kProgTags = 184,
};

class InfoFields {
 public:
  InfoFields(const std::vector<std::uint8_t>& info, bool swap) : info_(info), swap_(swap) {}
  template <class T>
  T get(std::size_t off) const {
    if (off + sizeof(T) > info_.size()) return 0;  // beyond info_len: zero, as perf pads it
    return load<T>(info_.data() + off, swap_);
  }
  std::string name() const {
    if (info_.size() <= kName) return "";
    std::size_t n = std::min<std::size_t>(kNameLen, info_.size() - kName);
    return std::string(c_string(Bytes(info_.data() + kName, n)));
  }

 private:
  const std::vector<std::uint8_t>& info_;
  bool swap_;
};

// The `count` elements of `size` bytes at data offset `offset`.
Expected<Bytes> array_at(const BpfProgInfo& p, std::uint64_t offset, std::uint64_t count,
                         std::uint64_t size, std::string_view what) {
  if (count == 0) return Bytes{};
  if (size == 0 || offset > p.data.size() || count > (p.data.size() - offset) / size)
    return make_error("bpf_prog_info: {} ({} x {} bytes at {:#x}) runs past its {} bytes of data",
                      what, count, size, offset, p.data.size());
  return Bytes(p.data.data() + offset, count * size);
}

// BTF kinds and the bytes each adds after the 12-byte btf_type.
std::optional<std::uint64_t> btf_extra(std::uint32_t kind, std::uint32_t vlen) {
  switch (kind) {
    case 1:
      return 4;  // INT
    case 2:
    case 7:
    case 8:
    case 9:
    case 10:  // PTR FWD TYPEDEF VOLATILE CONST
    case 11:
    case 12:
    case 16:
    case 18:
      return 0;  // RESTRICT FUNC FLOAT TYPE_TAG
    case 3:
      return 12;  // ARRAY
    case 4:
    case 5:
      return 12ull * vlen;  // STRUCT UNION
    case 6:
      return 8ull * vlen;  // ENUM
    case 13:
      return 8ull * vlen;  // FUNC_PROTO
    case 14:
      return 4;  // VAR
    case 15:
      return 12ull * vlen;  // DATASEC
    case 17:
      return 4;  // DECL_TAG
    case 19:
      return 12ull * vlen;  // ENUM64
    default:
      return std::nullopt;
  }
}

}  // namespace

Expected<BpfProgSummary> summarize_bpf_prog(const BpfProgInfo& p, bool swap) {
  InfoFields f(p.info, swap);
  BpfProgSummary s;
  s.id = f.get<std::uint32_t>(kId);
  s.btf_id = f.get<std::uint32_t>(kBtfId);
  s.name = f.name();
  s.nr_jited_ksyms = f.get<std::uint32_t>(kNrJitedKsyms);
  s.nr_jited_func_lens = f.get<std::uint32_t>(kNrJitedFuncLens);
  s.nr_prog_tags = f.get<std::uint32_t>(kNrProgTags);
  PK_ASSIGN(Bytes ksyms,
            array_at(p, f.get<std::uint64_t>(kJitedKsyms), s.nr_jited_ksyms, 8, "jited_ksyms"));
  for (std::size_t i = 0; i < ksyms.size(); i += 8)
    s.jited_ksyms.push_back(load<std::uint64_t>(ksyms.data() + i, swap));
  PK_ASSIGN(Bytes lens, array_at(p, f.get<std::uint64_t>(kJitedFuncLens), s.nr_jited_func_lens, 4,
                                 "jited_func_lens"));
  for (std::size_t i = 0; i < lens.size(); i += 4)
    s.jited_func_lens.push_back(load<std::uint32_t>(lens.data() + i, swap));
  PK_ASSIGN(Bytes tags,
            array_at(p, f.get<std::uint64_t>(kProgTags), s.nr_prog_tags, 8, "prog_tags"));
  for (std::size_t i = 0; i < tags.size(); i += 8) {
    std::array<std::uint8_t, 8> t{};
    std::copy(tags.begin() + i, tags.begin() + i + 8, t.begin());
    s.prog_tags.push_back(t);
  }
  std::uint32_t rec = f.get<std::uint32_t>(kFuncInfoRecSize);
  std::uint32_t nr_func = f.get<std::uint32_t>(kNrFuncInfo);
  if (rec >= 8) {
    auto funcs = array_at(p, f.get<std::uint64_t>(kFuncInfo), nr_func, rec, "func_info");
    if (funcs) {  // only needed with BTF; perf tolerates its absence
      for (std::size_t i = 0; i < funcs->size(); i += rec)
        s.func_type_ids.push_back(load<std::uint32_t>(funcs->data() + i + 4, swap));
    }
  }
  return s;
}

std::optional<std::string> btf_type_name(Bytes btf, std::uint32_t type_id) {
  if (btf.size() < 24) return std::nullopt;
  std::uint16_t magic = load<std::uint16_t>(btf.data(), false);
  bool swap = magic == 0x9feb;
  if (!swap && magic != 0xeb9f) return std::nullopt;
  Cursor h(btf, swap);
  h.skip(4);
  std::uint64_t hdr_len = h.u32(), type_off = h.u32(), type_len = h.u32();
  std::uint64_t str_off = h.u32(), str_len = h.u32();
  if (hdr_len + type_off + type_len > btf.size() || hdr_len + str_off + str_len > btf.size())
    return std::nullopt;
  Bytes strings = btf.subspan(hdr_len + str_off, str_len);
  Cursor t(btf.subspan(hdr_len + type_off, type_len), swap);
  std::uint32_t name_off = 0;
  bool found = false;
  for (std::uint32_t id = 1; !t.at_end(); ++id) {
    std::uint32_t name = t.u32(), info = t.u32();
    t.u32();  // size or type
    auto extra = btf_extra((info >> 24) & 0x1f, info & 0xffff);
    if (!extra || !t.skip(*extra) || t.failed()) return std::nullopt;
    if (id == type_id) {
      name_off = name;
      found = true;
    }
  }
  if (!found || name_off >= strings.size()) return std::nullopt;
  return std::string(c_string(strings.subspan(name_off)));
}

std::string bpf_prog_name(const BpfProgSummary& s, std::uint32_t sub, const BpfBtf* btf) {
  std::string out = "bpf_prog_";
  if (sub < s.prog_tags.size())
    for (std::uint8_t b : s.prog_tags[sub]) out += fmt::format("{:02x}", b);
  std::optional<std::string> short_name;
  if (btf && sub < s.func_type_ids.size())
    short_name = btf_type_name(btf->data, s.func_type_ids[sub]);
  if (!short_name) {
    if (sub == 0 && s.nr_jited_ksyms == 1) {
      if (!s.name.empty()) short_name = s.name;
    } else {
      short_name = "F";
    }
  }
  if (short_name) out += "_" + *short_name;
  return out;
}

}  // namespace perfkit::perfdata
