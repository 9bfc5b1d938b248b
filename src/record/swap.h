// Byte-order conversion of perf records: turns a record written on one
// endianness into the bytes the other endianness would have written, field by
// field (what perf's readers undo when they open a cross-endian file).
//
// Numbers are byte-swapped at their own width: u64 fields, the u32 pairs of
// TID and CPU, u16 fields of KSYMBOL, BPF_EVENT, TEXT_POKE and cpu maps. Byte
// streams keep their bytes: strings, build-ids, TEXT_POKE code bytes, RAW
// tracepoint data (its format carries its own byte order), AUX sample data
// and the trailing payloads of AUXTRACE and HEADER_TRACING_DATA. The user
// stack dump is swapped as u64 words, as a big-endian machine's memory would
// read. Branch-entry flags are a bitfield: its fields are moved to their
// mirrored positions, the attr's flags word has each byte's bits reversed.
//
// Conversion is its own inverse: converting twice gives the original bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "abi/layout.h"
#include "base/bytes.h"
#include "base/error.h"
#include "record/record_view.h"

namespace perfkit::record {

// Converts `r` (read in its own byte order, r.swap) to the other byte order,
// writing exactly r.size bytes to `out` (must not overlap r.bytes). `layout`
// is the layout of the record's attr: it gives a SAMPLE's fields and the
// sample_id_all trailer of other kernel records; nullptr when the record has
// no known attr (a non-SAMPLE then keeps its trailer bytes unconverted).
// HEADER_ATTR converts the attr and its ids; HEADER_FEATURE converts only
// feat_id (the section layout belongs to perfdata/features.h). Records of
// unknown types get only their header converted.
// Errors (naming the record's offset): a record too short for its fixed
// fields, a SAMPLE whose fields run past its end or that has no layout, a
// COMPRESSED or COMPRESSED2 record (its records must be decompressed first).
Status swap_record(const RecordView& r, const abi::RecordLayout* layout, std::uint8_t* out);

// Converts a perf_event_attr of `size` bytes (any attr version; fields that do
// not fit are left as they are) to the other byte order. `out` may be `in`.
void swap_attr(const std::uint8_t* in, std::size_t size, std::uint8_t* out);

// Moves the fields of a branch entry's flags word (mispred, predicted, in_tx,
// abort, cycles, type, spec, new_type, priv, reserved) from the bitfield
// layout of a `from` machine to the other byte order's: a big-endian machine
// allocates bitfields from the most significant bit.
std::uint64_t convert_branch_flags(std::uint64_t flags, ByteOrder from);

}  // namespace perfkit::record
