#include "perfdata/event_set.h"

#include <algorithm>

namespace perfkit::perfdata {

void EventSet::add(const abi::EventAttr& attr, std::vector<std::uint64_t> ids) {
  EventDesc d;
  d.attr = attr;
  d.layout = abi::make_layout(attr);
  d.ids = std::move(ids);
  auto index = static_cast<std::uint32_t>(events_.size());
  for (std::uint64_t id : d.ids) {
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), id,
                               [](const auto& e, std::uint64_t v) { return e.first < v; });
    if (it != by_id_.end() && it->first == id)
      it->second = index;  // a later attr claiming the id wins
    else
      by_id_.insert(it, {id, index});
  }
  if (events_.empty()) {
    id_pos_ = d.layout.id_pos;
    is_pos_ = d.layout.is_pos;
  }
  events_.push_back(std::move(d));
}

int EventSet::index_of_id(std::uint64_t id) const {
  // A few ids per CPU and event: a scan of a short sorted array beats hashing.
  if (by_id_.size() <= 16) {
    for (const auto& [k, v] : by_id_)
      if (k == id) return static_cast<int>(v);
    return -1;
  }
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), id,
                             [](const auto& e, std::uint64_t v) { return e.first < v; });
  return it != by_id_.end() && it->first == id ? static_cast<int>(it->second) : -1;
}

bool EventSet::consistent_id_positions() const {
  for (const auto& e : events_)
    if (e.layout.id_pos != id_pos_ || e.layout.is_pos != is_pos_) return false;
  return true;
}

bool EventSet::record_id(const record::RecordView& r, std::uint64_t& id) const {
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

int EventSet::attr_index(const record::RecordView& r) const {
  if (events_.empty()) return -1;
  if (events_.size() == 1) return 0;
  if (r.type != abi::kRecordSample && !events_[0].attr.sample_id_all()) return 0;
  std::uint64_t id;
  if (!record_id(r, id)) return -1;
  if (id == 0) return 0;
  return index_of_id(id);
}

}  // namespace perfkit::perfdata
