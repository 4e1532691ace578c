#include "engine/arch/syscall_table.h"

#include <asm/ioctls.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>

using namespace rwd;

TEST_CASE("the table describes out-parameters from the man pages") {
  const SyscallSpec* read = syscall_spec(SYS_read);
  REQUIRE(read);
  CHECK(read->replay == ReplayPolicy::Emulate);
  CHECK(read->out[0].arg == 1);
  CHECK(read->out[0].rule == SizeRule::Result);
  const SyscallSpec* fstat = syscall_spec(SYS_fstat);
  REQUIRE(fstat);
  CHECK(fstat->out[0].rule == SizeRule::Fixed);
  CHECK(fstat->out[0].n == 144);  // struct stat on x86-64
  const SyscallSpec* nanosleep = syscall_spec(SYS_nanosleep);
  // the remainder is written when interrupted (EINTR)
  CHECK(nanosleep->out[0].on_error == ErrorWrites::Always);
  CHECK(syscall_spec(SYS_write)->output == OutputKind::Buffer);
  CHECK(syscall_spec(SYS_writev)->output == OutputKind::Iov);
}

TEST_CASE("address-space syscalls run for real; unknown ones are unsupported") {
  CHECK(syscall_spec(SYS_brk)->replay == ReplayPolicy::Execute);
  CHECK(syscall_spec(SYS_mprotect)->replay == ReplayPolicy::Execute);
  CHECK(syscall_spec(SYS_mmap)->replay == ReplayPolicy::Mmap);
  CHECK(syscall_spec(SYS_mremap)->replay == ReplayPolicy::Mremap);
  CHECK(syscall_spec(SYS_clone3)->replay == ReplayPolicy::Fork);
  CHECK(syscall_spec(SYS_exit_group)->replay == ReplayPolicy::Exit);
  CHECK(syscall_spec(SYS_rt_sigreturn)->replay == ReplayPolicy::Sigreturn);
  CHECK(syscall_spec(SYS_set_tid_address)->replay == ReplayPolicy::ExecuteSetResult);
  CHECK(syscall_spec(SYS_shmat)->replay == ReplayPolicy::SysvShm);
  CHECK(syscall_spec(SYS_shmdt)->replay == ReplayPolicy::Execute);
  CHECK(syscall_spec(SYS_ptrace)->replay == ReplayPolicy::Ptrace);  // answered by the recorder
  // The machine's administration is answered from the trace, never run again by a replay.
  for (long nr : {SYS_reboot, SYS_kexec_load, SYS_init_module, SYS_swapon})
    CHECK(syscall_spec(nr)->replay == ReplayPolicy::Emulate);
  CHECK(syscall_spec(SYS_set_thread_area)->replay == ReplayPolicy::Execute);
  CHECK(syscall_spec(453)->record == RecordPolicy::Enosys);                 // map_shadow_stack
  CHECK(syscall_spec(SYS_io_uring_setup)->record == RecordPolicy::Enosys);  // as rr answers
  CHECK(syscall_spec(100000) == nullptr);
  for (long nr = 0; nr < 470; ++nr)
    if (const SyscallSpec* s = syscall_spec(nr)) CHECK(syscall_name(nr) == s->name);
}

TEST_CASE("syscall names come from the kernel's table") {
  CHECK(syscall_name(0) == "read");
  CHECK(syscall_name(59) == "execve");
  CHECK(syscall_name(441) == "epoll_pwait2");
  CHECK(syscall_name(462) == "mseal");
  CHECK(syscall_name(9999) == "syscall_9999");
}

TEST_CASE("ioctl output sizes: encoded requests and the terminal table") {
  CHECK(ioctl_output_size(TCGETS) == 36);
  CHECK(ioctl_output_size(TIOCGWINSZ) == 8);
  CHECK(ioctl_output_size(TCSETS) == 0);
  CHECK(ioctl_output_size(FIONBIO) == 0);
  CHECK(ioctl_output_size(0x80045430) == 4);  // TIOCGPTN: _IOR('T', 0x30, unsigned int)
  CHECK(ioctl_output_size(0x40045431) == 0);  // TIOCSPTLCK: _IOW, nothing written back
  CHECK(ioctl_output_size(0x5499) == -1);     // unknown legacy request
  // Legacy terminal requests, sized from their structs (asm-generic/ioctls.h).
  CHECK(ioctl_output_size(TIOCGPTPEER) == 0);      // a descriptor as its result
  CHECK(ioctl_output_size(TCGETA) == 18);          // struct termio
  CHECK(ioctl_output_size(TIOCGSERIAL) == 72);     // struct serial_struct
  CHECK(ioctl_output_size(TIOCGLCKTRMIOS) == 36);  // struct termios
  CHECK(ioctl_output_size(FIOQSIZE) == 8);         // loff_t
  // Sockets' interface requests (netdevice(7)): a struct ifreq in and out.
  CHECK(ioctl_output_size(SIOCGIFINDEX) == long(sizeof(struct ifreq)));
  CHECK(ioctl_output_size(SIOCGIFHWADDR) == long(sizeof(struct ifreq)));
  CHECK(ioctl_output_size(SIOCSIFFLAGS) == 0);
}

TEST_CASE("fcntl output sizes come from the declaration's table") {
  CHECK(fcntl_output_size(F_GETLK) == 32);
  CHECK(fcntl_output_size(F_GETOWN_EX) == 8);
  CHECK(fcntl_output_size(1035) == 8);  // F_GET_RW_HINT: a u64
  CHECK(fcntl_output_size(1037) == 8);  // F_GET_FILE_RW_HINT
  CHECK(fcntl_output_size(F_SETFL) == 0);
  CHECK(fcntl_output_size(F_DUPFD_CLOEXEC) == 0);
  CHECK(fcntl_output_size(1100) == -1);  // not a command rewind knows
}

TEST_CASE("flags, record policy and blocking rules come from the declaration") {
  CHECK(syscall_has(SYS_mmap, kChangesMappings));
  CHECK(syscall_has(SYS_mmap, kMapsCode));
  CHECK(syscall_has(SYS_mprotect, kMapsCode));
  CHECK_FALSE(syscall_has(SYS_mprotect, kChangesMappings));
  CHECK(syscall_has(SYS_munmap, kChangesMappings));
  for (long nr : {SYS_fork, SYS_vfork, SYS_clone, SYS_clone3}) CHECK(syscall_has(nr, kForkLike));
  CHECK(syscall_has(SYS_execve, kExec));
  CHECK(syscall_has(SYS_exit, kExit));
  CHECK_FALSE(syscall_has(SYS_read, kExit));
  CHECK_FALSE(syscall_has(100000, kExit));
  CHECK(syscall_spec(SYS_rseq)->record == RecordPolicy::Enosys);
  CHECK(syscall_spec(SYS_read)->record == RecordPolicy::Record);
  CHECK(syscall_spec(SYS_read)->blocks == BlockRule::UnlessRegular);
  CHECK(syscall_spec(SYS_pread64)->blocks == BlockRule::Never);
  CHECK(syscall_spec(SYS_futex)->blocks == BlockRule::FutexOp);
  CHECK(syscall_spec(SYS_fcntl)->blocks == BlockRule::FcntlLock);
  CHECK(syscall_spec(SYS_ioctl)->custom_out);
  CHECK_FALSE(syscall_spec(SYS_read)->custom_out);
  // The table is ordered by number, as syscall_spec's binary search needs.
  long last = -1;
  for (long nr = 0; nr < 470; ++nr)
    if (const SyscallSpec* s = syscall_spec(nr)) {
      CHECK(s->nr > last);
      last = s->nr;
    }
}

// librewind_preload.so's rules (preload/rules.c, generated from the same declaration).
extern "C" int rwd_may_buffer(long nr);

TEST_CASE("the preload library buffers only syscalls the engine can replay") {
  int buffered = 0;
  for (long nr = 0; nr < 470; ++nr) {
    if (!rwd_may_buffer(nr)) continue;
    ++buffered;
    INFO("syscall " << nr << " (" << syscall_name(nr) << ")");
    const SyscallSpec* s = syscall_spec(nr);
    REQUIRE(s);
    // A buffered call is never run in replay, but brk and the signal state's two calls: the
    // library makes them again there, where the replayer runs them for real (RUN_IN_REPLAY,
    // run_call_in_replay).
    if (nr == SYS_brk || nr == SYS_rt_sigaction || nr == SYS_rt_sigprocmask)
      CHECK(s->replay == ReplayPolicy::Execute);
    else
      CHECK(s->replay == ReplayPolicy::Emulate);
    CHECK(s->record == RecordPolicy::Record);
  }
  CHECK(rwd_may_buffer(SYS_brk));
  CHECK(rwd_may_buffer(SYS_rt_sigaction));
  CHECK(rwd_may_buffer(SYS_rt_sigprocmask));
  CHECK(buffered > 80);
  CHECK(rwd_may_buffer(SYS_read));
  CHECK(rwd_may_buffer(SYS_futex));
  CHECK_FALSE(rwd_may_buffer(SYS_mmap));
  CHECK_FALSE(rwd_may_buffer(-1));
}
