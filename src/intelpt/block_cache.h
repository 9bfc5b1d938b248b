// BlockCache: decoded basic blocks of one image, keyed by image offset, so
// that hot code is decoded once. A block is the run of instructions from its
// first one up to and including the first that may branch (or up to a size
// limit, or to bytes that do not decode). Blocks hold image offsets and
// relative targets only, so one block serves every address the image is
// mapped at.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"
#include "intelpt/insn.h"

namespace perfkit::intelpt {

struct Block {
  std::uint64_t offset = 0;   // image offset of the first instruction
  std::uint32_t ninsn = 0;    // instructions, the last one included
  std::uint32_t size = 0;     // bytes from the first instruction to the end of the last
  std::uint32_t lengths = 0;  // index of the instruction lengths in the cache's arena
  // The last instruction. kOther when the block was cut at the size limit
  // (the next block starts right after it); kInvalid when the bytes after the
  // other instructions do not decode (that instruction is not counted).
  Insn last;

  // Offset of the last instruction from the first.
  std::uint32_t last_offset() const { return size - last.length; }
};

class BlockCache {
 public:
  static constexpr std::uint32_t kMaxInsns = 1024;

  // The block at image offset `offset` with code bytes `code` (from that
  // offset to the end of the mapping), decoded on first use.
  const Block& get(std::uint64_t offset, Bytes code, ExecMode mode, const InsnDecoder& dec) {
    std::uint64_t key = offset << 2 | static_cast<std::uint64_t>(mode);
    Slot& s = front_[key & (kFront - 1)];
    if (s.key == key && s.block) return *s.block;
    const Block* b = find_or_decode(key, offset, code, mode, dec);
    s.key = key;
    s.block = b;
    return *b;
  }
  const std::uint8_t* lengths(const Block& b) const { return arena_.data() + b.lengths; }
  std::size_t size() const { return map_.size(); }

 private:
  static constexpr std::size_t kFront = 4096;
  struct Slot {
    std::uint64_t key = ~0ULL;
    const Block* block = nullptr;
  };
  const Block* find_or_decode(std::uint64_t key, std::uint64_t offset, Bytes code, ExecMode mode,
                              const InsnDecoder& dec);

  std::vector<Slot> front_ = std::vector<Slot>(kFront);
  std::unordered_map<std::uint64_t, std::unique_ptr<Block>> map_;
  std::vector<std::uint8_t> arena_;
};

}  // namespace perfkit::intelpt
