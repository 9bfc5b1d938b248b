// GzipWriter: members compressed on worker threads, written in order: the
// output gunzips to the input (every member), is the same whatever the
// number of threads, with pieces made on the workers in their place, and an
// empty input is a valid empty gzip file.
#include "export/gzip.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "support/test_support.h"

namespace perfkit::exports {
namespace {

std::string compress(const std::string& input, std::size_t chunk, unsigned jobs,
                     const std::string& path) {
  auto w = FdWriter::create(path);
  EXPECT_TRUE(w.has_value());
  {
    GzipWriter zip(*w, 1, chunk, jobs);
    // Written in uneven pieces, across chunk boundaries.
    for (std::size_t at = 0; at < input.size(); at += 777)
      zip.write(input.data() + at, std::min<std::size_t>(777, input.size() - at));
    EXPECT_TRUE(zip.finish().has_value());
  }
  EXPECT_TRUE(w->close().has_value());
  return test::read_file(path);
}

TEST(GzipWriter, MembersGunzipToTheInputWhateverTheThreads) {
  test::TempDir tmp;
  std::string input;
  for (int i = 0; i < 200000; ++i) input += std::to_string(i * 7919 % 100003) + ";";
  const std::string one = compress(input, 64 << 10, 1, tmp.path("one.gz"));
  const std::string four = compress(input, 64 << 10, 4, tmp.path("four.gz"));
  EXPECT_EQ(one, four);
  EXPECT_LT(one.size(), input.size() * 3 / 4);
  auto r = test::run("gunzip -c " + test::sh(tmp.path("four.gz")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out == input);
  // Several members: the chunk is smaller than the input.
  EXPECT_GT(input.size(), std::size_t{64 << 10} * 10);
}

// Deferred pieces (made on the workers) land where they were written
// among the direct ones, whatever the number of threads.
TEST(GzipWriter, DeferredPiecesKeepTheirPlace) {
  test::TempDir tmp;
  std::string expected;
  auto run = [&](unsigned jobs, const std::string& path) {
    auto w = FdWriter::create(path);
    EXPECT_TRUE(w.has_value());
    expected.clear();
    GzipWriter zip(*w, 1, 4096, jobs);
    for (int i = 0; i < 40; ++i) {
      const std::string direct = "direct " + std::to_string(i) + ";";
      zip.write(direct.data(), direct.size());
      expected += direct;
      std::string made;
      for (int j = 0; j < 500 * (i % 3); ++j) made += std::to_string(i * j) + ",";
      expected += made;
      zip.write_deferred([made] {
        ByteBuffer b;
        b.resize(made.size());
        if (!made.empty()) std::memcpy(b.data(), made.data(), made.size());
        return b;
      });
    }
    EXPECT_TRUE(zip.finish().has_value());
    EXPECT_TRUE(w->close().has_value());
    return test::read_file(path);
  };
  const std::string one = run(1, tmp.path("one.gz"));
  EXPECT_EQ(one, run(3, tmp.path("three.gz")));
  auto r = test::run("gunzip -c " + test::sh(tmp.path("three.gz")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out == expected);
}

// Every level gunzips back, igzip's (1-3) and libdeflate's (above), on
// text and on bytes that do not compress (stored blocks, near the bound).
TEST(GzipMember, EveryLevelGunzipsBackCompressibleOrNot) {
  test::TempDir tmp;
  std::string text, noise;
  for (int i = 0; i < 50000; ++i) text += "frame_" + std::to_string(i % 97) + ";";
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 300000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    noise += static_cast<char>(x >> 56);
  }
  for (int level : {1, 2, 3, 6}) {
    for (const std::string* input : {&text, &noise}) {
      auto member = gzip_member(*input, level);
      ASSERT_TRUE(member.has_value()) << level;
      const std::string path = tmp.path("m" + std::to_string(level) + ".gz");
      test::write_file(path, *member);
      auto r = test::run("gunzip -c " + test::sh(path));
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_TRUE(r.out == *input) << "level " << level << ", " << input->size() << " bytes";
      if (input == &text) EXPECT_LT(member->size(), input->size() / 4) << level;
    }
  }
}

TEST(GzipWriter, EmptyInputIsAnEmptyGzipFile) {
  test::TempDir tmp;
  compress("", 1 << 20, 2, tmp.path("empty.gz"));
  auto r = test::run("gunzip -c " + test::sh(tmp.path("empty.gz")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace perfkit::exports
