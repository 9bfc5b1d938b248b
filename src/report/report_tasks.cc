#include "report/report_tasks.h"

#include <sys/mman.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace perfkit::report {
namespace {

struct Task {
  const machine::Thread* thread = nullptr;
  std::vector<Task*> children;
  bool listed = false;  // under its parent, or a root
};

class TaskTree {
 public:
  explicit TaskTree(const machine::Machine& m) : threads_(m.threads()) {
    // perf's walk of its thread table: 256 buckets by tid, each by tid
    std::stable_sort(threads_.begin(), threads_.end(),
                     [](const machine::Thread* a, const machine::Thread* b) {
                       return static_cast<std::uint32_t>(a->tid) % 256 <
                              static_cast<std::uint32_t>(b->tid) % 256;
                     });
    tasks_.resize(threads_.size());
    for (std::size_t i = 0; i < threads_.size(); ++i) {
      tasks_[i].thread = threads_[i];
      by_tid_.emplace(threads_[i]->tid, &tasks_[i]);
    }
  }

  // perf's order: threads in table order, each hung under its parent the first time
  // it or one of its descendants is met; the top of each chain (no parent,
  // ppid -1) becomes a root when first reached.
  Status build() {
    for (Task& t : tasks_) {
      if (t.listed) continue;
      PK_ASSIGN(Task * root, link(t));
      if (root) {
        root->listed = true;
        roots_.push_back(root);
      }
    }
    return ok();
  }

  void print(bool maps, FdWriter& out) const {
    out.print("# {:>8} {:>8} {:>8}  {}\n", "pid", "tid", "ppid", "comm");
    for (const Task* t : roots_) print(*t, 0, maps, out);
  }

 private:
  // Hangs `t` and its ancestors up to the first one already listed;
  // returns the root it reached (nullptr: an ancestor was listed).
  Expected<Task*> link(Task& first) {
    for (Task* t = &first;;) {
      if (t->listed) return static_cast<Task*>(nullptr);
      if (t->thread->ppid == -1) return t;
      auto it = by_tid_.find(t->thread->ppid);
      if (it == by_tid_.end())
        return make_error("failed to process tasks: the parent {} of thread {} is unknown",
                          t->thread->ppid, t->thread->tid);
      it->second->children.push_back(t);
      t->listed = true;
      t = it->second;
    }
  }

  static void print(const Task& t, int level, bool maps, FdWriter& out) {
    const machine::Thread& th = *t.thread;
    out.print("  {:8} {:8} {:8} |{:{}}{}\n", th.pid, th.tid, th.ppid, "", level,
              th.comm ? *th.comm : std::string());
    if (maps && th.maps) {
      const int indent = 30 + level;  // the width of the line up to the name
      for (const machine::Map& m : th.maps->maps())
        out.print("{:{}}  {:x}-{:x} {}{}{}{} {:08x} {} {}\n", "", indent, m.start, m.end,
                  m.prot & PROT_READ ? 'r' : '-', m.prot & PROT_WRITE ? 'w' : '-',
                  m.prot & PROT_EXEC ? 'x' : '-', m.flags & MAP_SHARED ? 's' : 'p', m.pgoff,
                  m.ino || !m.dso ? m.ino : m.dso->ino, m.dso ? m.dso->long_name : std::string());
    }
    for (const Task* c : t.children) print(*c, level + 1, maps, out);
  }

  std::vector<const machine::Thread*> threads_;
  std::vector<Task> tasks_;
  std::unordered_map<std::int32_t, Task*> by_tid_;
  std::vector<Task*> roots_;
};

}  // namespace

Status print_tasks(const machine::Machine& machine, bool maps, FdWriter& out) {
  TaskTree tree(machine);
  PK_TRY(tree.build());
  tree.print(maps, out);
  return ok();
}

}  // namespace perfkit::report
