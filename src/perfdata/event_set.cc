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

int EventSet::index_of_many_ids(std::uint64_t id) const {
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), id,
                             [](const auto& e, std::uint64_t v) { return e.first < v; });
  return it != by_id_.end() && it->first == id ? static_cast<int>(it->second) : -1;
}

bool EventSet::consistent_id_positions() const {
  for (const auto& e : events_)
    if (e.layout.id_pos != id_pos_ || e.layout.is_pos != is_pos_) return false;
  return true;
}

}  // namespace perfkit::perfdata
