#include "seccomp_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

#include "preload/rewind_preload_abi.h"

namespace rwd {

bool install_syscall_filter() {
  constexpr uint32_t kIpLow = offsetof(seccomp_data, instruction_pointer);
  constexpr uint32_t kIpHigh = kIpLow + 4;
  static_assert(uint64_t(RWD_UNTRACED_IP) >> 32 == 0 &&
                uint64_t(RWD_PRIVILEGED_UNTRACED_IP) >> 32 == 0);
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpHigh),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RWD_UNTRACED_IP, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RWD_PRIVILEGED_UNTRACED_IP, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | kRecorderSeccompData),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  // no_new_privs also keeps a setuid program's exec from turning address-space randomization
  // back on (a secure exec), which replay could not follow; the program is told its own
  // setting (RecordSession::answer_seccomp_prctl).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

}  // namespace rwd
