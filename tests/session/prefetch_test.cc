// Session::open starts reading the recorded kernel's symbols on a thread
// of its own, unless the caller resolves no address (evlist, buildid-list,
// report --header-only): then nothing is read and nothing waited for.
#include <gtest/gtest.h>

#include "session/session.h"
#include "support/test_support.h"

namespace perfkit::session {
namespace {

TEST(SessionPrefetch, KernelSymbolsAreReadAheadOnlyWhenAsked) {
  // (-a: the header lists the kernel, with its build-id)
  PK_FIXTURE_OR_SKIP(path, "syswide.data");
  for (bool prefetch : {true, false}) {
    SessionOptions so;
    so.prefetch_kernel = prefetch;
    so.warn = [](const std::string&) {};
    auto s = Session::open(path, so);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ((*s)->symbolizer().kernel_prefetched(), prefetch) << "prefetch " << prefetch;
  }
}

}  // namespace
}  // namespace perfkit::session
