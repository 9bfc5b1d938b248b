#include "perfdata/byte_order.h"

#include "abi/perf_event.h"
#include "perfdata/features.h"
#include "record/records.h"

namespace perfkit::perfdata {

using namespace perfkit::abi;
using perfdata::FeatureData;

Expected<std::vector<FeatureData>> convert_features(const std::vector<FeatureData>& sections,
                                                    bool from_swap) {
  perfdata::Features model;
  std::vector<FeatureData> out;
  for (const auto& s : sections) {
    if (s.id == kFeatTracingData || s.id == kFeatReserved || s.id >= kFeatLastKnown) {
      out.push_back(s);
      continue;
    }
    PK_TRY(perfdata::parse_feature(s.id, s.bytes, from_swap, 0, model));
    PK_ASSIGN(auto bytes, perfdata::encode_feature(model, s.id, !from_swap));
    out.push_back(FeatureData{s.id, std::move(bytes)});
  }
  return out;
}

Status convert_feature_record(const record::RecordView& r, std::vector<std::uint8_t>& out) {
  PK_ASSIGN(auto f, record::parse_header_feature(r));
  std::vector<FeatureData> one{
      FeatureData{static_cast<std::uint32_t>(f.feat_id), {f.data.begin(), f.data.end()}}};
  auto converted = convert_features(one, r.swap);
  if (!converted)
    return make_error("offset {:#x}: HEADER_FEATURE record: {}", r.offset,
                      converted.error().message());
  const auto& data = (*converted)[0].bytes;
  const bool to_swap = !r.swap;
  out.clear();
  append<std::uint32_t>(out, r.type, to_swap);
  append<std::uint16_t>(out, r.misc, to_swap);
  append<std::uint16_t>(out, static_cast<std::uint16_t>(kHeaderSize + 8 + data.size()), to_swap);
  append<std::uint64_t>(out, f.feat_id, to_swap);
  append_bytes(out, data);
  return ok();
}

}  // namespace perfkit::perfdata
