// perfkit config and perf's configuration files, against perf: the same
// commands in two homes (one perf's, one perfkit's) print the same and
// leave the same ~/.perfconfig; the same file read by both lists the
// same; and the variables that change report's, record's and diff's
// defaults change them as they change perf's.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/report_compare.h"
#include "support/test_support.h"

namespace perfkit::test {
namespace {

// A home for each tool and the environment that makes it theirs (no
// system file, so that the machine's /etc/perfconfig cannot interfere).
struct Homes {
  TempDir perf, ours;
  std::string env(const TempDir& home) const {
    return "HOME=" + sh(home.dir()) + " PERF_CONFIG_NOSYSTEM=1 PERF_PAGER=cat ";
  }
  // (each home's path in the messages reads "~")
  RunResult run_perf(const std::string& args) const {
    return homeless(run(env(perf) + "perf " + args), perf);
  }
  RunResult run_ours(const std::string& args) const {
    return homeless(run(env(ours) + perfkit_bin() + " " + args), ours);
  }
  static RunResult homeless(RunResult r, const TempDir& home) {
    for (std::string* s : {&r.out, &r.err})
      for (std::size_t at; (at = s->find(home.dir())) != std::string::npos;)
        s->replace(at, home.dir().size(), "~");
    return r;
  }
  // The user's build-id cache in both homes (perf reads [vdso] from it).
  void share_cache() const {
    const char* home = std::getenv("HOME");
    if (!home) return;
    for (const TempDir* t : {&perf, &ours})
      std::filesystem::create_directory_symlink(std::string(home) + "/.debug", t->path(".debug"));
  }
  void write(const std::string& text) const {
    write_file(perf.path(".perfconfig"), text);
    write_file(ours.path(".perfconfig"), text);
  }
};

std::string file_or_none(const std::string& path) {
  std::ifstream in(path);
  return in ? read_file(path) : std::string("(none)");
}

TEST(Config, GetSetAndListAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  Homes h;
  // Each step in both homes: the same output, status, first error line
  // (perf's usage names perf) and file.
  for (const char* args :
       {"-l", "report.children=false call-graph.record-mode=dwarf", "-l", "report.children",
        "report.children nosuch.key", "badkey", "report.children=", "report.", "=x",
        "report.children=true report.percent-limit=5", "--user -l", "--user report.x=1",
        "--user --system -l", "-l report.children", "", "report.percent-limit=7 report.children",
        "a.b.c=1", "-l", "-x"}) {
    SCOPED_TRACE(args);
    auto p = h.run_perf(std::string("config ") + args);
    auto k = h.run_ours(std::string("config ") + args);
    EXPECT_EQ(k.status, p.status) << k.err;
    EXPECT_EQ(k.out, p.out);
    EXPECT_EQ(k.err.substr(0, k.err.find('\n')), p.err.substr(0, p.err.find('\n')));
    EXPECT_EQ(file_or_none(h.ours.path(".perfconfig")), file_or_none(h.perf.path(".perfconfig")));
  }
  // $PERF_CONFIG: the one file read and written.
  const std::string p_alt = h.perf.path("alt"), k_alt = h.ours.path("alt");
  auto p = run("PERF_CONFIG=" + sh(p_alt) + " perf config report.group=false ui.x=1");
  auto k =
      run("PERF_CONFIG=" + sh(k_alt) + " " + perfkit_bin() + " config report.group=false ui.x=1");
  EXPECT_EQ(k.status, p.status);
  EXPECT_EQ(file_or_none(k_alt), file_or_none(p_alt));
  auto pl = run("PERF_CONFIG=" + sh(p_alt) + " perf config -l");
  auto kl = run("PERF_CONFIG=" + sh(k_alt) + " " + perfkit_bin() + " config -l");
  EXPECT_EQ(kl.out, pl.out);
  EXPECT_NE(kl.out.find("ui.x=1"), std::string::npos) << kl.out;
  // $PERF_CONFIG=/dev/null (perf's way to read no file) stays the device,
  // and a ~/.perfconfig that is a link stays one, its target written.
  for (const char* tool : {"perf", "ours"}) {
    const std::string cmd = std::string(tool) == "perf" ? "perf" : perfkit_bin();
    auto null = run("PERF_CONFIG=/dev/null " + cmd + " config report.children=false");
    EXPECT_EQ(null.status, 0) << tool << ": " << null.err;
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << tool;
    TempDir home;
    write_file(home.path("real"), "[report]\n\tchildren = true\n");
    std::filesystem::create_symlink(home.path("real"), home.path(".perfconfig"));
    auto set = run("HOME=" + sh(home.dir()) + " PERF_CONFIG_NOSYSTEM=1 " + cmd +
                   " config report.group=false");
    EXPECT_EQ(set.status, 0) << tool << ": " << set.err;
    EXPECT_TRUE(std::filesystem::is_symlink(home.path(".perfconfig"))) << tool;
    EXPECT_NE(read_file(home.path("real")).find("group = false"), std::string::npos) << tool;
  }
}

// perf's (git's) file syntax, and its bad lines.
TEST(Config, FileSyntaxAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const char* files[] = {
      "# comment\n; other\n[report]\n\tChildren = \"fa\\\"lse\" ; trailing\n"
      "  percent-limit=  5  # c\n[call-graph \"Sub\"]\nx = 1\n[A.b]\nc = d\n[ui]\n"
      "show-headers = a \\\n b\nq_w = \"  spaced  \"\nmany =  a   b\t c  \n",
      "[report]\r\n\tchildren = true\r\n[hist]\r\npercentage=relative\r\n",
      "[report]\nchildren = true\nskip-empty\npercent-limit = 3\n",
      "[report]\nchildren = \"unterminated\npercent-limit = 3\n",
      "[report]\nchildren = bad\\escape\n",
      "[]\nx = 1\n",
      "name = 1\n[report]\nchildren = 1\n",
      "[report]\n9lives = 1\n",
      "[report \"x\"\nchildren = 1\n",
      "[report]\nchildren = 1\n[report]\nchildren = 0\ngroup = on\n",
      "[a]\nb.c = 1\n",
      "",
  };
  for (const char* text : files) {
    SCOPED_TRACE(text);
    Homes h;
    h.write(text);
    auto p = h.run_perf("config -l");
    auto k = h.run_ours("config -l");
    EXPECT_EQ(k.status, p.status);
    EXPECT_EQ(k.out, p.out);
    EXPECT_EQ(k.err, p.err);
  }
}

// The variables report reads, each alone, with the command line over them.
TEST(Config, ReportDefaultsAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(fp, "fp.data");
  PK_FIXTURE_OR_SKIP(group, "group.data");
  PK_FIXTURE_OR_SKIP(syswide, "syswide_g.data");
  struct Case {
    const char* config;
    std::string file;
    const char* args;
  };
  const Case cases[] = {
      {"[report]\n\tchildren = false\n", fp, ""},
      {"[report]\n\tchildren = false\n", fp, "--children"},
      {"[report]\n\tchildren = false\n[report]\n\tchildren = true\n", fp, ""},
      {"[report]\n\tpercent-limit = 5\n", syswide, "-g none"},
      {"[report]\n\tpercent-limit = 5\n", syswide, "--percent-limit 1 -g none"},
      {"[report]\n\tpercent-limit = 20\n", fp, "--no-children"},
      {"[report]\n\tsort_order = dso,sym\n", syswide, "-g none"},
      {"[report]\n\tsort_order = sym\n", fp, "--no-children"},
      {"[report]\n\tsort_order = dso\n", syswide, "-g none --sort comm"},
      {"[report]\n\tgroup = false\n", group, ""},
      {"[report]\n\tgroup = true\n", fp, "-g none"},
      {"[hist]\n\tpercentage = relative\n", syswide, "-g none --comm cpuloop"},
      {"[hist]\n\tpercentage = relative\n", syswide,
       "-g none --comm cpuloop --percentage absolute"},
      {"[call-graph]\n\tprint-type = flat\n", fp, "--no-children"},
      {"[call-graph]\n\tprint-type = folded\n", fp, "--no-children"},
      {"[call-graph]\n\tprint-type = fractal\n", fp, ""},
      {"[call-graph]\n\tprint-type = flat\n", fp, "-g caller --no-children"},
      {"[call-graph]\n\torder = caller\n", fp, "--no-children"},
      {"[call-graph]\n\torder = callee\n", fp, "--children"},
      {"[call-graph]\n\tthreshold = 10\n", fp, "--no-children"},
      {"[call-graph]\n\tprint-limit = 2\n", syswide, "--no-children --percent-limit 2"},
      {"[call-graph]\n\tprint-type = folded\n", syswide, "--no-children --percent-limit 2"},
  };
  int compared = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.config) + " | " + c.args);
    Homes h;
    h.write(c.config);
    h.share_cache();
    const std::string args = "report --stdio -i " + sh(c.file) + " " + c.args;
    auto p = h.run_perf(args + " 2>/dev/null");
    auto k = h.run_ours(args);
    ASSERT_EQ(p.status, 0);
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_EQ(report_mismatches(p.out, k.out), "");
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(cases)));
}

// A bad value of a variable every command reads stops the command with
// perf's words and status; a bad boolean is warned of and read as false.
TEST(Config, BadValuesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  PK_FIXTURE_OR_SKIP(fp, "fp.data");
  for (const char* text :
       {"[hist]\n\tpercentage = weird\n", "[call-graph]\n\tprint-type = bogus\n",
        "[call-graph]\n\trecord-mode = xyz\n", "[call-graph]\n\tdump-size = 99999999\n",
        "[call-graph]\n\tthreshold = x\n", "[call-graph]\n\torder = up\n",
        "[call-graph]\n\tsort-key = name\n", "[call-graph]\n\tprint-limit = none\n",
        "[report]\n\tchildren = maybe\n", "[stat]\n\tbig-num = z\n"}) {
    SCOPED_TRACE(text);
    Homes h;
    h.write(text);
    const std::string args = "report --stdio -g none --no-children -i " + sh(fp);
    auto p = h.run_perf(args);
    auto k = h.run_ours(args);
    EXPECT_EQ(k.status, p.status) << k.err;
    EXPECT_EQ(k.err, p.err);
    if (p.status == 0) {
      EXPECT_EQ(report_mismatches(p.out, k.out), "");
    }
  }
}

// record: -g takes call-graph.record-mode (and dump-size); record.build-id.
TEST(Config, RecordReadsItsVariablesAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  const std::string loop = workload("cpuloop");
  // The first event's call-graph fields, as perf evlist -v prints them.
  auto fields = [](const std::string& data) {
    auto v = run("perf evlist -v -i " + sh(data) + " 2>/dev/null | head -1");
    std::string out;
    for (const char* f : {"sample_type: ", "sample_regs_user: ", "sample_stack_user: "}) {
      const auto at = v.out.find(f);
      if (at != std::string::npos) out += v.out.substr(at, v.out.find(',', at) - at) + ";";
    }
    return out;
  };
  for (const char* text : {"[call-graph]\n\trecord-mode = dwarf\n\tdump-size = 4096\n",
                           "[record]\n\tcall-graph = dwarf,1024\n",
                           "[call-graph]\n\trecord-mode = dwarf\n[record]\n\tcall-graph = fp\n"}) {
    SCOPED_TRACE(text);
    Homes h;
    h.write(text);
    const std::string pd = h.perf.path("p.data"), kd = h.ours.path("k.data");
    auto p = h.run_perf("record -q -g -o " + sh(pd) + " " + loop + " 20");
    auto k = h.run_ours("record -q -g -o " + sh(kd) + " " + loop + " 20");
    ASSERT_EQ(p.status, 0) << p.err;
    ASSERT_EQ(k.status, 0) << k.err;
    EXPECT_FALSE(fields(pd).empty());
    EXPECT_EQ(fields(kd), fields(pd));
  }
  // record.build-id: skip records no build-ids; a bad value stops.
  Homes h;
  h.write("[record]\n\tbuild-id = skip\n");
  const std::string pd = h.perf.path("p.data"), kd = h.ours.path("k.data");
  ASSERT_EQ(h.run_perf("record -q -o " + sh(pd) + " " + loop + " 20").status, 0);
  ASSERT_EQ(h.run_ours("record -q -o " + sh(kd) + " " + loop + " 20").status, 0);
  // (perf lists the hit DSOs then, each without an id)
  auto ids = [](const std::string& data) {
    auto l = run("perf buildid-list -i " + sh(data) + " | grep -c '^[0-9a-f]'");
    return std::stoi("0" + l.out);
  };
  EXPECT_EQ(ids(kd), 0);
  EXPECT_EQ(ids(pd), 0);
  h.write("[record]\n\tbuild-id = sometimes\n");
  auto p = h.run_perf("record -q -o " + sh(pd) + " " + loop + " 20");
  auto k = h.run_ours("record -q -o " + sh(kd) + " " + loop + " 20");
  EXPECT_EQ(k.status, p.status);
  EXPECT_EQ(k.err, p.err);
}

// buildid.dir: where record puts the build-id cache, as perf's.
TEST(Config, BuildidDirAsPerf) {
  PK_SKIP_WITHOUT_PERF();
  Homes h;
  const std::string loop = workload("cpuloop");
  write_file(h.perf.path(".perfconfig"), "[buildid]\n\tdir = " + h.perf.path("cache") + "\n");
  write_file(h.ours.path(".perfconfig"), "[buildid]\n\tdir = " + h.ours.path("cache") + "\n");
  ASSERT_EQ(h.run_perf("record -q -o " + sh(h.perf.path("p.data")) + " " + loop + " 20").status, 0);
  ASSERT_EQ(h.run_ours("record -q -o " + sh(h.ours.path("k.data")) + " " + loop + " 20").status, 0);
  // (the binaries perf copies, not its "probes" and "debug" extras)
  auto listing = [](const std::string& dir) {
    return run("cd " + sh(dir) + " && find . -path '*cpuloop*' -type f -name elf | sort").out;
  };
  EXPECT_NE(listing(h.perf.path("cache")), "");
  EXPECT_EQ(listing(h.ours.path("cache")), listing(h.perf.path("cache")));
  EXPECT_FALSE(std::filesystem::exists(h.ours.path(".debug")));
  // -N, and record.build-id = no-cache: nothing cached.
  for (const char* how : {"-N", ""}) {
    TempDir home;
    write_file(home.path(".perfconfig"), "[buildid]\n\tdir = " + home.path("cache") +
                                             (*how ? "\n" : "\n[record]\n\tbuild-id = no-cache\n"));
    auto r = run("HOME=" + sh(home.dir()) + " PERF_CONFIG_NOSYSTEM=1 " + perfkit_bin() +
                 " record -q " + how + " -o " + sh(home.path("k.data")) + " " + loop + " 20");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(std::filesystem::exists(home.path("cache"))) << how;
  }
}

}  // namespace
}  // namespace perfkit::test
