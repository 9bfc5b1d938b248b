#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>

#include "base/bytes.h"
#include "base/cursor.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "base/output.h"
#include "support/test_support.h"

namespace perfkit {
namespace {

TEST(Bytes, LoadsBothByteOrders) {
  const std::uint8_t b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ((load<std::uint32_t, false>(b)), 0x04030201u);
  EXPECT_EQ((load<std::uint32_t, true>(b)), 0x01020304u);
  EXPECT_EQ(load<std::uint64_t>(b, true), 0x0102030405060708ULL);
  EXPECT_EQ(load<std::uint16_t>(b + 1, false), 0x0302);
  std::uint8_t out[8];
  store<std::uint64_t>(out, 0x0102030405060708ULL, true);
  EXPECT_EQ(0, std::memcmp(out, b, 8));
}

TEST(Bytes, SplitViewCopiesAcrossTheWrap) {
  const std::uint8_t a[] = {1, 2, 3};
  const std::uint8_t b[] = {4, 5, 6, 7};
  SplitBytes s{Bytes(a, 3), Bytes(b, 4)};
  EXPECT_EQ(s.size(), 7u);
  std::uint8_t out[4] = {};
  s.copy_to(1, 4, out);
  EXPECT_EQ(std::vector<int>(out, out + 4), (std::vector<int>{2, 3, 4, 5}));
  auto sub = s.subview(2, 3);
  EXPECT_EQ(sub.first.size(), 1u);
  EXPECT_EQ(sub.second.size(), 2u);
  EXPECT_EQ(sub.second[1], 5);
}

TEST(Bytes, CStringStopsAtNul) {
  const char raw[] = {'a', 'b', 0, 'c'};
  EXPECT_EQ(c_string(Bytes(reinterpret_cast<const std::uint8_t*>(raw), 4)), "ab");
  EXPECT_EQ(c_string(as_bytes("xyz")), "xyz");
}

TEST(Cursor, ReadsFieldsAndTracksOffsets) {
  std::vector<std::uint8_t> v;
  append<std::uint32_t>(v, 7);
  append<std::uint64_t>(v, 0x1122334455667788ULL);
  append_padded_string(v, "comm", 8);
  Cursor c(v, false, 0x100);
  EXPECT_EQ(c.u32(), 7u);
  EXPECT_EQ(c.file_offset(), 0x104u);
  EXPECT_EQ(c.u64(), 0x1122334455667788ULL);
  EXPECT_EQ(c.rest_string(), "comm");
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.at_end());
}

TEST(Cursor, ErrorIsStickyAndNamesTheOffset) {
  std::vector<std::uint8_t> v(6, 0xff);
  Cursor c(v, false, 0x40);
  EXPECT_EQ(c.u32(), 0xffffffffu);
  EXPECT_EQ(c.u64(), 0u);  // only 2 bytes left
  EXPECT_TRUE(c.failed());
  EXPECT_EQ(c.u8(), 0u);  // sticky: no further reads
  EXPECT_EQ(c.fail_offset(), 0x44u);
  std::string msg = c.error("MMAP record").message();
  EXPECT_NE(msg.find("offset 0x44"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MMAP record"), std::string::npos) << msg;
}

TEST(Cursor, SwappedReads) {
  std::vector<std::uint8_t> v;
  append<std::uint32_t>(v, 0xdeadbeef, true);
  append<std::uint16_t>(v, 0x1234, true);
  Cursor c(v, true);
  EXPECT_EQ(c.u32(), 0xdeadbeefu);
  EXPECT_EQ(c.u16(), 0x1234u);
}

TEST(Cursor, SeekAndBytesPastEndFail) {
  std::vector<std::uint8_t> v(16);
  Cursor c(v, false);
  EXPECT_FALSE(c.seek(17));
  EXPECT_TRUE(c.failed());
  Cursor d(v, false);
  EXPECT_TRUE(d.bytes(17).empty());
  EXPECT_TRUE(d.failed());
}

Expected<int> half(int x) {
  if (x % 2) return make_error("{} is odd", x);
  return x / 2;
}

Expected<int> quarter(int x) {
  PK_ASSIGN(int h, half(x));
  PK_ASSIGN(int q, half(h));
  return q;
}

TEST(Cursor, Leb128AndSizedNumbers) {
  // 624485 (e5 8e 26), -123456 (c0 bb 78), a 3-byte number, a 2-byte one.
  const std::uint8_t b[] = {0xe5, 0x8e, 0x26, 0xc0, 0xbb, 0x78, 0x01, 0x02, 0x03, 0x34, 0x12};
  Cursor c(Bytes(b, sizeof b), false);
  EXPECT_EQ(c.uleb128(), 624485u);
  EXPECT_EQ(c.sleb128(), -123456);
  EXPECT_EQ(c.uint_n(3), std::endian::native == std::endian::little ? 0x030201u : 0x010203u);
  EXPECT_EQ(c.uint_n(2), std::endian::native == std::endian::little ? 0x1234u : 0x3412u);
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.at_end());
  Cursor swapped(Bytes(b + 6, 3), true);
  EXPECT_EQ(swapped.uint_n(3), std::endian::native == std::endian::little ? 0x010203u : 0x030201u);
}

TEST(Cursor, TruncatedLeb128FailsAndSticks) {
  const std::uint8_t b[] = {0x80, 0x80};
  Cursor c(Bytes(b, sizeof b), false, 0x100);
  EXPECT_EQ(c.uleb128(), 0u);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.u8(), 0u);
  EXPECT_EQ(c.error("a number").message(),
            "offset 0x102: a number is truncated (needs bytes past 0x102)");
  Cursor s(Bytes(b, 1), false);
  EXPECT_EQ(s.sleb128(), 0);
  EXPECT_FALSE(s.ok());
}

TEST(Cursor, CStringsAndLimits) {
  const std::uint8_t b[] = {'a', 'b', 0, 'c', 0, 'd', 'e'};
  Cursor c(Bytes(b, sizeof b), false);
  EXPECT_EQ(c.cstr(), "ab");
  EXPECT_EQ(c.position(), 3u);
  c.limit(5);
  EXPECT_EQ(c.cstr(), "c");
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.cstr(), "");  // past the limit: no NUL to find
  EXPECT_FALSE(c.ok());
  Cursor d(Bytes(b + 5, 2), false);
  EXPECT_EQ(d.cstr(), "");  // no NUL at all
  EXPECT_FALSE(d.ok());
  Cursor e(Bytes(b, sizeof b), false);
  e.seek(6);
  e.limit(4);  // the position is past the new end
  EXPECT_FALSE(e.ok());
}

TEST(Expected, PropagatesErrors) {
  ASSERT_TRUE(quarter(8));
  EXPECT_EQ(*quarter(8), 2);
  auto e = quarter(6);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(), "3 is odd");
  EXPECT_EQ(e.error().with_context("file").message(), "file: 3 is odd");
}

TEST(MappedFile, MissingFileNamesThePath) {
  auto f = MappedFile::open("/nonexistent/perf.data");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("/nonexistent/perf.data"), std::string::npos);
  EXPECT_NE(f.error().message().find("No such file"), std::string::npos);
}

TEST(MappedFile, DirectoryIsRejected) {
  auto f = MappedFile::open("/tmp");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("not a regular file"), std::string::npos);
}

// Readers side by side over one mapping: pages go behind the slowest only,
// and what a reader that left held goes once the others are past it.
TEST(SharedMapping, ReleasesBehindTheSlowestReader) {
  test::TempDir dir;
  test::write_file(dir.path("f"), std::string(64 << 10, 'r'));
  auto f = MappedFile::open(dir.path("f"));
  ASSERT_TRUE(f);
  SharedMapping m(std::move(*f), 3);
  m.release(0, 40 << 10);
  m.release(1, 20 << 10);
  EXPECT_EQ(m.released(), 0u);  // reader 2 is at the start
  m.release(2, 30 << 10);
  EXPECT_EQ(m.released(), 20u << 10);
  m.release(1, 10 << 10);  // (never back)
  EXPECT_EQ(m.released(), 20u << 10);
  m.release(1, UINT64_MAX);  // it reads no more
  EXPECT_EQ(m.released(), 30u << 10);
  m.release(2, 64 << 10);
  EXPECT_EQ(m.released(), 40u << 10);
  // The pages stay readable.
  EXPECT_EQ(m.file().bytes()[0], 'r');
  EXPECT_EQ(m.file().bytes()[(64 << 10) - 1], 'r');
}

TEST(FdWriter, WritesBufferedAndPositioned) {
  test::TempDir dir;
  auto w = FdWriter::create(dir.path("out"), 16);
  ASSERT_TRUE(w);
  w->write(std::string_view("0123456789"));
  w->print("{}-{}", 1, 2);
  w->write(std::string(40, 'x'));  // larger than the buffer
  EXPECT_EQ(w->offset(), 53u);
  ASSERT_TRUE(w->pwrite(0, as_bytes("AB")));
  ASSERT_TRUE(w->close());
  std::string got = test::read_file(dir.path("out"));
  EXPECT_EQ(got.substr(0, 13), "AB234567891-2");
  EXPECT_EQ(got.size(), 53u);
}

TEST(FdWriter, ReportsWriteErrors) {
  auto w = FdWriter::create("/dev/full");
  ASSERT_TRUE(w);
  w->write(std::string_view("data"));
  auto st = w->flush();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("No space left"), std::string::npos) << st.error().message();
}

TEST(FdWriter, CreateFailsInMissingDirectory) {
  auto w = FdWriter::create("/nonexistent/dir/out");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message().find("/nonexistent/dir/out"), std::string::npos);
}

}  // namespace
}  // namespace perfkit

namespace perfkit {
namespace {

// OutputFile writes a whole file under its name at the end; /dev/null (or
// any file that is no regular one) is written as it is and stays what it
// is, and a symbolic link stays a link, the file it names replaced.
TEST(OutputFile, DevicesStayAndLinksAreFollowed) {
  auto null = OutputFile::create("/dev/null");
  ASSERT_TRUE(null) << null.error().message();
  null->writer().write("discarded");
  ASSERT_TRUE(null->commit());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  test::TempDir tmp;
  test::write_file(tmp.path("real"), "old");
  ASSERT_EQ(::symlink(tmp.path("real").c_str(), tmp.path("link").c_str()), 0);
  auto f = OutputFile::create(tmp.path("link"));
  ASSERT_TRUE(f) << f.error().message();
  f->writer().write("new");
  ASSERT_TRUE(f->commit());
  ASSERT_EQ(::lstat(tmp.path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(test::read_file(tmp.path("real")), "new");
  EXPECT_FALSE(OutputFile::create(tmp.dir()));
}

}  // namespace
}  // namespace perfkit
