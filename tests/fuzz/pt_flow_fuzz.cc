// libFuzzer target for the Intel PT flow decoder: any trace bytes, decoded
// against a small code image with every kind of branch (conditional, direct
// and indirect calls and jumps, compressed returns, syscall, rep, loop),
// through the synthesizer with call chains and last branches on, must never
// crash, read out of bounds or hang. The first byte picks decoder options.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "intelpt/flow_decoder.h"
#include "intelpt/synth.h"

using namespace perfkit;
using namespace perfkit::intelpt;

namespace {

// 0x400000: xor eax,eax; inc eax; cmp eax,10; jne -7; call +10; call rbx;
// jmp rax; syscall; jmp -22; nop; nop; test rdi,rdi; je +1; ret; ret;
// rep movsq; loop -2; ret
const std::vector<std::uint8_t> kCode = {0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x75, 0xf9, 0xe8,
                                         0x0a, 0x00, 0x00, 0x00, 0xff, 0xd3, 0xff, 0xe0, 0x0f, 0x05,
                                         0xeb, 0xea, 0x90, 0x90, 0x48, 0x85, 0xff, 0x74, 0x01, 0xc3,
                                         0xc3, 0xf3, 0x48, 0xa5, 0xe2, 0xfe, 0xc3};

struct Sink : SampleSink {
  std::uint64_t n = 0;
  void on_sample(const SynthSample& s) override { n += s.ip + s.callchain_nr + s.branch_nr; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static ImageSet* images = [] {
    auto* set = new ImageSet;
    set->add(Image::from_bytes("code", kCode));
    return set;
  }();
  static AddressSpace* space = [] {
    auto* s = new AddressSpace;
    static auto img = Image::from_bytes("code", kCode);
    s->add({0x400000, 0x400000 + kCode.size(), 0, img.get(), 0});
    return s;
  }();
  (void)images;
  const std::uint8_t opt = data[0];
  Bytes trace(data + 1, size - 1);
  PtConfig cfg;
  cfg.have_config = true;
  cfg.config =
      (opt & 1 ? 0x800 : 0) | (opt & 2 ? 0x200 | (3 << 14) : 0) | 0x400 | (opt & 4 ? 2 : 0);
  cfg.tsc_ctc_ratio_n = 100;
  cfg.tsc_ctc_ratio_d = 2;
  cfg.max_non_turbo_ratio = 20;
  cfg.time_shift = 31;
  cfg.time_mult = 1u << 30;
  FlowOptions fo;
  fo.return_compression = cfg.return_compression();
  fo.max_blocks_without_trace = 1000;
  FlowDecoder dec(trace, cfg, space, fo, 0, opt & 8 ? 0x1234567890 : 0);
  ItraceOptions it;
  if (!parse_itrace(opt & 16 ? "i0nsbxwpeg8l4" : "i100ibepcr", false, it)) return 0;
  Sink sink;
  Synthesizer synth(it, cfg, sink);
  dec.run(synth);
  return 0;
}
