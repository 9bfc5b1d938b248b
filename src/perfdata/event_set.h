// EventSet: the attrs of a recording (perf's evlist) with their sample ids
// and names, and the rules that attribute each record to its attr.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "abi/attr.h"
#include "abi/layout.h"
#include "base/bytes.h"
#include "base/error.h"
#include "record/record_view.h"

namespace perfkit::perfdata {

struct EventDesc {
  abi::EventAttr attr;
  abi::RecordLayout layout;
  std::vector<std::uint64_t> ids;
  std::string name;  // from EVENT_DESC, EVENT_UPDATE or EVENT_TYPE; may be empty
};

class EventSet {
 public:
  // Adds an attr and its ids (an id already known is re-pointed, as perf does).
  void add(const abi::EventAttr& attr, std::vector<std::uint64_t> ids);

  std::size_t size() const { return events_.size(); }
  bool empty() const { return events_.empty(); }
  const EventDesc& operator[](std::size_t i) const { return events_[i]; }
  EventDesc& operator[](std::size_t i) { return events_[i]; }
  const std::vector<EventDesc>& events() const { return events_; }

  // Index of the attr owning sample id `id`, or -1.
  int index_of_id(std::uint64_t id) const;

  // The attr a record belongs to, by perf's rules: the only attr when there
  // is one; the first for non-samples when it lacks sample_id_all; otherwise
  // by the id at the attr set's id position (IDENTIFIER or ID). Synthesized
  // records with id 0 go to the first attr. -1 when no attr matches or the
  // record is too short to hold the id.
  int attr_index(const record::RecordView& r) const;

  // The id a record carries at the set's id position (false if none/short).
  bool record_id(const record::RecordView& r, std::uint64_t& id) const;

  // True when every attr has the same id positions, which attribution needs
  // when there are several attrs (perf refuses such files otherwise).
  bool consistent_id_positions() const;

  int id_pos() const { return id_pos_; }
  int is_pos() const { return is_pos_; }

 private:
  std::vector<EventDesc> events_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_id_;  // sorted by id
  int id_pos_ = -1;
  int is_pos_ = -1;

  int index_of_many_ids(std::uint64_t id) const;
};

// (inline: every record read is attributed, most often to one of a few ids)
inline int EventSet::index_of_id(std::uint64_t id) const {
  // A few ids per CPU and event: a scan of a short sorted array beats hashing.
  if (by_id_.size() > 16) return index_of_many_ids(id);
  for (const auto& [k, v] : by_id_)
    if (k == id) return static_cast<int>(v);
  return -1;
}

inline bool EventSet::record_id(const record::RecordView& r, std::uint64_t& id) const {
  const std::uint64_t words = (r.bytes.size() - abi::kHeaderSize) / 8;
  const std::uint8_t* body = r.bytes.data() + abi::kHeaderSize;
  if (r.type == abi::kRecordSample) {
    if (id_pos_ < 0 || static_cast<std::uint64_t>(id_pos_) >= words) return false;
    id = load<std::uint64_t>(body + 8 * id_pos_, r.swap);
    return true;
  }
  if (is_pos_ < 0 || static_cast<std::uint64_t>(is_pos_) > words) return false;
  id = load<std::uint64_t>(body + 8 * (words - is_pos_), r.swap);
  return true;
}

inline int EventSet::attr_index(const record::RecordView& r) const {
  if (events_.size() <= 1) return events_.empty() ? -1 : 0;
  if (r.type != abi::kRecordSample && !events_[0].attr.sample_id_all()) return 0;
  std::uint64_t id;
  if (!record_id(r, id)) return -1;
  if (id == 0) return 0;
  return index_of_id(id);
}

}  // namespace perfkit::perfdata
