// The arguments of the syscalls that create a task (fork, vfork, clone, clone3), decoded in
// one place: clone(2) and its struct clone_args (include/uapi/linux/sched.h).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>

#include "engine/arch/registers.h"

namespace rwd {

/// What the layers above need of a task-creating syscall's arguments.
struct CloneArgs {
  /// CLONE_* flags: clone's first argument, clone3's clone_args.flags; fork has none and
  /// vfork CLONE_VM | CLONE_VFORK, as the kernel treats them (kernel/fork.c).
  uint64_t flags = 0;
  uint64_t parent_tid = 0;  ///< where CLONE_PARENT_SETTID stores the new tid (0: nowhere)
  uint64_t child_tid = 0;   ///< where CLONE_CHILD_SETTID stores it in the child (0: nowhere)

  /// A thread of the caller's process (CLONE_THREAD).
  bool thread() const { return flags & CLONE_THREAD; }
  /// The new task uses the caller's memory, not a copy (CLONE_VM: vfork, threads, and
  /// processes sharing memory).
  bool shares_memory() const { return flags & CLONE_VM; }
  /// The new task gets the caller's memory without its descriptor table, or the table
  /// without the memory (CLONE_VM without CLONE_FILES, as vfork; CLONE_FILES without CLONE_VM).
  bool splits_fd_table() const { return bool(flags & CLONE_VM) != bool(flags & CLONE_FILES); }
  /// A process that shares the caller's memory without being its thread or a vfork child
  /// (some runtimes' spawn helpers).
  bool shared_memory_process() const {
    return (flags & CLONE_VM) && !(flags & (CLONE_THREAD | CLONE_VFORK));
  }
};

/// The CLONE_NEW* flags that put the new task into namespaces of its own (namespaces(7)).
/// Not CLONE_NEWTIME: clone's bit 7 belongs to its exit signal, and only clone3 takes it.
inline constexpr uint64_t kNamespaceCloneFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
                                                 CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                                 CLONE_NEWNET;

/// Decodes the arguments of the task-creating syscall that task `tid` is making (`entry`:
/// its registers at the syscall's entry, orig_rax the syscall number; the recorded entry
/// registers do as well). clone3's struct clone_args is read from the task's memory, which
/// must still hold it. Other syscalls decode to no flags. Throws SystemError when clone3's
/// struct cannot be read.
CloneArgs decode_clone_args(pid_t tid, const Registers& entry);

}  // namespace rwd
