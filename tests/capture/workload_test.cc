#include "capture/workload.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/test_support.h"

namespace perfkit::capture {
namespace {

TEST(Workload, ExitCodeBecomesShellStatus) {
  auto w = Workload::prepare({"sh", "-c", "exit 7"});
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_GT(w->pid(), 0);
  ASSERT_TRUE(w->start()) << "start";
  auto e = w->wait();
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(e->exited);
  EXPECT_EQ(e->exit_code, 7);
  EXPECT_EQ(e->shell_status(), 7);
  // A second wait gives the same answer without waiting again.
  auto again = w->wait();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->exit_code, 7);
}

TEST(Workload, HeldBeforeExecUntilStart) {
  test::TempDir dir;
  std::string marker = dir.path("ran");
  auto w = Workload::prepare({"sh", "-c", "echo x > " + marker});
  ASSERT_TRUE(w);
  usleep(100 * 1000);
  EXPECT_FALSE(std::ifstream(marker).good()) << "the command ran before start()";
  // The child is alive and waiting: try_wait sees it running.
  auto running = w->try_wait();
  ASSERT_TRUE(running);
  EXPECT_FALSE(running->has_value());
  ASSERT_TRUE(w->start());
  ASSERT_TRUE(w->wait());
  EXPECT_TRUE(std::ifstream(marker).good());
}

TEST(Workload, ExecFailureNamesTheCommand) {
  auto w = Workload::prepare({"/nonexistent/perfkit-workload"});
  ASSERT_TRUE(w);
  auto s = w->start();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("/nonexistent/perfkit-workload"), std::string::npos);
  EXPECT_NE(s.error().message().find("No such file or directory"), std::string::npos)
      << s.error().message();
  EXPECT_TRUE(w->reaped());
}

TEST(Workload, SignalIsForwardedAndReported) {
  auto w = Workload::prepare({"sleep", "30"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->start());
  ASSERT_TRUE(w->signal(SIGTERM));
  auto e = w->wait();
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->signaled);
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(e->shell_status(), 128 + SIGTERM);
}

TEST(Workload, DestroyingAPreparedWorkloadNeverRunsIt) {
  test::TempDir dir;
  std::string marker = dir.path("ran");
  pid_t pid;
  {
    auto w = Workload::prepare({"sh", "-c", "echo x > " + marker});
    ASSERT_TRUE(w);
    pid = w->pid();
  }
  // Reaped by the destructor: the pid no longer exists as our child.
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_FALSE(std::ifstream(marker).good());
}

TEST(Workload, EmptyCommandIsAnError) {
  auto w = Workload::prepare({});
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message().find("no workload"), std::string::npos);
}

TEST(Workload, RawStatusForm) {
  auto w = Workload::create({"sh", "-c", "exit 3"});
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->wait(false).has_value());
  ASSERT_TRUE(w->start());
  auto st = w->wait(true);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st));
  EXPECT_EQ(WEXITSTATUS(*st), 3);
}

}  // namespace
}  // namespace perfkit::capture
