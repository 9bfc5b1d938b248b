#include "intelpt/block_cache.h"

namespace perfkit::intelpt {

const Block* BlockCache::find_or_decode(std::uint64_t key, std::uint64_t offset, Bytes code,
                                        ExecMode mode, const InsnDecoder& dec) {
  if (auto it = map_.find(key); it != map_.end()) return it->second.get();
  auto b = std::make_unique<Block>();
  b->offset = offset;
  b->lengths = static_cast<std::uint32_t>(arena_.size());
  std::size_t at = 0;
  while (true) {
    Insn insn = dec.decode(code.subspan(std::min(at, code.size())), mode);
    if (insn.cls == InsnClass::kInvalid) {
      b->last = insn;
      break;
    }
    arena_.push_back(insn.length);
    ++b->ninsn;
    at += insn.length;
    b->size = static_cast<std::uint32_t>(at);
    b->last = insn;
    if (insn.cls != InsnClass::kOther || b->ninsn >= kMaxInsns) break;
  }
  const Block* p = b.get();
  map_.emplace(key, std::move(b));
  return p;
}

}  // namespace perfkit::intelpt
