// This process's vdso, as perf takes it for a recording's [vdso]: the image
// the kernel mapped, and its build-id, the same whether read through
// libelf or from the image's PT_NOTE segment.
#include "elf/vdso.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "elf/build_id.h"

namespace perfkit::elf {
namespace {

TEST(Vdso, TheImageIsTheMappedElfFile) {
  auto image = own_vdso_image();
  ASSERT_TRUE(image) << image.error().message();
  ASSERT_GE(image->size(), 4096u);
  EXPECT_EQ(image->size() % 4096, 0u);
  EXPECT_EQ(std::memcmp(image->data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  auto again = own_vdso_image();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->data(), image->data());  // the mapping itself, not a copy
}

TEST(Vdso, BuildIdMatchesTheNoteSegment) {
  auto image = own_vdso_image();
  ASSERT_TRUE(image);
  auto file = own_vdso();
  ASSERT_TRUE(file) << file.error().message();
  const BuildId id = own_vdso_build_id();
  ASSERT_FALSE(id.empty());  // the kernels perf runs on give their vdso one
  EXPECT_EQ(id, file->build_id());
  // The 20-byte GNU note is somewhere in the image: find it by its bytes.
  const auto bytes = id.view();
  const auto at = std::search(image->begin(), image->end(), bytes.begin(), bytes.end());
  EXPECT_NE(at, image->end()) << id.hex();
}

}  // namespace
}  // namespace perfkit::elf
