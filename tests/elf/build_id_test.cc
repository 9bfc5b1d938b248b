#include "elf/build_id.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace perfkit::elf {
namespace {

TEST(BuildId, HexRoundTrip) {
  auto id = BuildId::from_hex("0123456789abcdef0123456789ABCDEF01234567");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->size, 20);
  EXPECT_EQ(id->hex(), "0123456789abcdef0123456789abcdef01234567");
  EXPECT_FALSE(BuildId::from_hex("xyz0"));
  EXPECT_FALSE(BuildId::from_hex("abc"));
}

TEST(BuildId, FindsTheGnuNoteAmongOthers) {
  std::vector<std::uint8_t> notes;
  auto note = [&](std::string_view name, std::uint32_t type, std::vector<std::uint8_t> desc,
                  bool swap) {
    append<std::uint32_t>(notes, static_cast<std::uint32_t>(name.size() + 1), swap);
    append<std::uint32_t>(notes, static_cast<std::uint32_t>(desc.size()), swap);
    append<std::uint32_t>(notes, type, swap);
    append_padded_string(notes, name, 4);
    desc.resize(align_up(desc.size(), 4));
    append_bytes(notes, desc);
  };
  for (bool swap : {false, true}) {
    notes.clear();
    note("Xen", 3, {1, 2, 3}, swap);
    note("GNU", 1, {0, 0, 0, 0, 3, 0, 0, 0}, swap);  // ABI tag
    note("GNU", 3, {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}, swap);
    auto id = find_build_id_note(notes, swap);
    EXPECT_EQ(id.hex(), "deadbeef01020304");
  }
  EXPECT_TRUE(find_build_id_note(Bytes()).empty());
}

TEST(BuildId, ReadsAnElfFileLikeReadelf) {
  // Compare with readelf's view of a system binary.
  auto r = test::run("readelf -n /bin/true 2>/dev/null | awk '/Build ID/ {print $3}'");
  std::string expect = r.out.substr(0, r.out.find('\n'));
  if (expect.empty()) GTEST_SKIP() << "/bin/true has no build-id or readelf is missing";
  auto id = read_build_id("/bin/true");
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(id->hex(), expect);
}

TEST(BuildId, Errors) {
  auto missing = read_build_id("/nonexistent");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent"), std::string::npos);
  auto notelf = read_build_id("/etc/hostname");
  ASSERT_FALSE(notelf);
  EXPECT_NE(notelf.error().message().find("not an ELF"), std::string::npos);
}

TEST(BuildId, KernelNotes) {
  auto id = kernel_build_id();
  if (!id) GTEST_SKIP() << id.error().message();
  auto perf = test::run("perf buildid-list -k 2>/dev/null");
  std::string expect = perf.out.substr(0, perf.out.find('\n'));
  if (!expect.empty()) {
    EXPECT_EQ(id->hex(), expect);
  }
}

}  // namespace
}  // namespace perfkit::elf
