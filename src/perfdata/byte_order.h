// Byte-order conversion of what record::swap_record cannot convert alone:
// feature sections (their layouts are perfdata's) and the HEADER_FEATURE
// records that carry them in a stream.
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "perfdata/writer.h"
#include "record/record_view.h"

namespace perfkit::perfdata {

// Converts feature sections from the byte order `from_swap` says to the other
// one: known sections through perfdata's feature model (in the given order:
// CPU_TOPOLOGY needs NRCPUS before it), unknown ones and TRACING_DATA (which
// describes its own byte order) byte for byte.
// Errors: a section that does not parse, named with its feature.
Expected<std::vector<perfdata::FeatureData>> convert_features(
    const std::vector<perfdata::FeatureData>& sections, bool from_swap);

// Converts a HEADER_FEATURE record `r` (read in its own order) to the other
// byte order, replacing `out`. Errors: the record or its section does not
// parse, named with the record's offset.
Status convert_feature_record(const record::RecordView& r, std::vector<std::uint8_t>& out);

}  // namespace perfkit::perfdata
