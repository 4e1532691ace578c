#include "syscall_capture.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/bpf_capture.h"

namespace rwd {

namespace {
constexpr uint64_t kMaxOut = 256ull << 20;  // one out-parameter, bytes

void add(std::vector<MemoryRegion>& out, pid_t tid, uint64_t addr, uint64_t n) {
  if (addr == 0 || n == 0) return;
  if (n > kMaxOut) throw UnsupportedError("out-parameter of " + std::to_string(n) + " bytes");
  MemoryRegion m;
  m.addr = addr;
  m.bytes = read_memory(tid, addr, n);
  if (!m.bytes.empty()) out.push_back(std::move(m));
}

void add_iov(std::vector<MemoryRegion>& out, pid_t tid, uint64_t addr, uint64_t count,
             uint64_t total) {
  for (const iovec& io : read_iovecs(tid, addr, count)) {
    if (total == 0) break;
    uint64_t n = std::min<uint64_t>(io.iov_len, total);
    add(out, tid, reinterpret_cast<uint64_t>(io.iov_base), n);
    total -= n;
  }
}

/// Bytes System V IPC call `nr` writes at its buffer argument for command `cmd` (msgctl(2),
/// semctl(2), shmctl(2)); 0 for the commands that only read it or take no buffer. A GETALL writes
/// one unsigned short per semaphore of the set (`semid`), counted here by an IPC_STAT.
uint64_t sysv_ctl_output(long nr, uint64_t id, uint64_t cmd) {
  cmd &= ~uint64_t(0x100);  // IPC_64, which the kernel ignores on x86-64
  if (nr == SYS_msgctl) {
    if (cmd == IPC_STAT || cmd == MSG_STAT || cmd == MSG_STAT_ANY) return sizeof(msqid_ds);
    if (cmd == IPC_INFO || cmd == MSG_INFO) return sizeof(msginfo);
    return 0;
  }
  if (nr == SYS_shmctl) {
    if (cmd == IPC_STAT || cmd == SHM_STAT || cmd == SHM_STAT_ANY) return sizeof(shmid_ds);
    if (cmd == IPC_INFO) return sizeof(shminfo);
    if (cmd == SHM_INFO) return sizeof(shm_info);
    return 0;
  }
  if (cmd == IPC_STAT || cmd == SEM_STAT || cmd == SEM_STAT_ANY) return sizeof(semid_ds);
  if (cmd == IPC_INFO || cmd == SEM_INFO) return sizeof(seminfo);
  if (cmd == GETALL) {
    semid_ds ds{};
    if (::semctl(int(id), 0, IPC_STAT, &ds) != 0)
      throw UnsupportedError("semctl GETALL on a semaphore set rewind cannot inspect");
    return ds.sem_nsems * sizeof(unsigned short);
  }
  return 0;
}

/// The contents of the System V segment that shmat(2) attached at `at`: each page holding
/// anything but zeros, and always the last page, so that the regions end where the segment
/// ends (replay sizes its own segment by that: engine/replay/sysv_segments.h). Neighbouring
/// pages make one region, of at most kMaxOut bytes. Reading attaches no more than the program
/// did: the segment's pages are the program's to read.
void add_segment(std::vector<MemoryRegion>& out, pid_t tid, uint64_t at) {
  constexpr uint64_t kPage = 4096, kBlock = 1 << 20;
  uint64_t end = 0;
  for (const ProcMapping& m : read_proc_maps(tid))
    if (m.start == at) end = m.end;
  if (end <= at) throw UnsupportedError("shmat: no segment mapped at " + hex(at));
  for (uint64_t b = at; b < end; b += kBlock) {
    std::vector<uint8_t> bytes = read_memory(tid, b, std::min(kBlock, end - b));
    if (bytes.size() != std::min(kBlock, end - b))
      throw UnsupportedError("shmat: cannot read the segment at " + hex(b));
    for (uint64_t p = 0; p < bytes.size(); p += kPage) {
      const uint8_t* page = bytes.data() + p;
      bool last = b + p + kPage >= end;
      if (!last && std::all_of(page, page + kPage, [](uint8_t c) { return c == 0; })) continue;
      if (!out.empty() && out.back().addr + out.back().bytes.size() == b + p &&
          out.back().bytes.size() + kPage <= kMaxOut)
        out.back().bytes.insert(out.back().bytes.end(), page, page + kPage);
      else
        out.push_back({b + p, std::vector<uint8_t>(page, page + kPage)});
    }
  }
}

/// What the kernel wrote for one received message (recvmsg(2), recvmmsg(2)): its header
/// (`header_size` bytes at `header`: msg_namelen, msg_controllen, msg_flags, and recvmmsg's
/// msg_len, updated), the sender's address, the control data and `len` bytes of data.
void add_received(std::vector<MemoryRegion>& out, pid_t tid, uint64_t header, size_t header_size,
                  const msghdr& h, uint64_t len) {
  add(out, tid, header, header_size);
  add(out, tid, reinterpret_cast<uint64_t>(h.msg_name), h.msg_namelen);
  add(out, tid, reinterpret_cast<uint64_t>(h.msg_control), h.msg_controllen);
  add_iov(out, tid, reinterpret_cast<uint64_t>(h.msg_iov), h.msg_iovlen, len);
}

/// Where keyctl(2) command `a[0]` writes (address, bytes at most), for a call that returned
/// `result` >= 0 (keyctl(2), asm/keyctl.h): a payload, description or label of up to the
/// caller's length (the result is the full size, which may be larger), a public-key query's
/// struct keyctl_pkey_query (56 bytes), an encrypt/decrypt/sign's `result` output bytes.
/// Commands that write nothing give {0, 0}.
std::pair<uint64_t, uint64_t> keyctl_output(const std::array<uint64_t, 6>& a, uint64_t result) {
  switch (a[0]) {
    case KEYCTL_DESCRIBE:
    case KEYCTL_READ:
    case KEYCTL_GET_SECURITY:
    case KEYCTL_DH_COMPUTE:
      return {a[2], std::min(result, a[3])};
    case KEYCTL_CAPABILITIES:
      return {a[1], std::min(result, a[2])};
    case KEYCTL_PKEY_QUERY:
      return {a[4], 56};
    case KEYCTL_PKEY_ENCRYPT:
    case KEYCTL_PKEY_DECRYPT:
    case KEYCTL_PKEY_SIGN:
      return {a[4], result};
    default:
      return {0, 0};
  }
}

/// syslog(2)'s actions that read the kernel log into the buffer (SYSLOG_ACTION_READ,
/// _READ_ALL, _READ_CLEAR): they return the bytes they wrote.
bool syslog_reads(uint64_t action) {
  return action >= 2 && action <= 4;
}

/// The bytes quotactl(2) subcommands write at their `addr` argument on success (linux/quota.h,
/// linux/dqblk_xfs.h): Q_GETFMT's format (4), Q_GETINFO's struct if_dqinfo (24), Q_GETQUOTA's
/// if_dqblk and Q_GETNEXTQUOTA's if_nextdqblk (72), the XFS getters' fs_disk_quota (112),
/// fs_quota_stat (80) and fs_quota_statv (160); 0 for the commands that write nothing. The
/// VFS's subcommands are 0x8000NN (Q_SYNC 1 ... Q_GETNEXTQUOTA 9), XFS's 0x58NN (XQM_CMD(NN),
/// 'X' << 8).
constexpr std::pair<uint32_t, uint64_t> kQuotaWrites[] = {
    {0x800001, 0},  {0x800002, 0}, {0x800003, 0},  {0x800004, 4}, {0x800005, 24}, {0x800006, 0},
    {0x800007, 72}, {0x800008, 0}, {0x800009, 72}, {0x5801, 0},   {0x5802, 0},    {0x5803, 112},
    {0x5804, 0},    {0x5805, 80},  {0x5806, 0},    {0x5807, 0},   {0x5808, 160},  {0x5809, 112}};

/// The most any quotactl command writes (XFS's struct fs_quota_statv), from the table.
constexpr uint64_t kMaxQuotaOutput = [] {
  uint64_t most = 0;
  for (const auto& [sub, bytes] : kQuotaWrites) most = std::max(most, bytes);
  return most;
}();

/// The bytes quotactl(2) command `cmd` (QCMD(subcmd, type) = subcmd << 8 | type) writes at
/// its `addr` argument on success (kQuotaWrites). Throws UnsupportedError for a subcommand
/// rewind does not know.
uint64_t quotactl_output(uint64_t cmd) {
  const uint32_t sub = uint32_t(cmd) >> 8;
  for (const auto& [known, bytes] : kQuotaWrites)
    if (known == sub) return bytes;
  throw UnsupportedError("quotactl command " + hex(cmd) + " is not supported yet");
}

/// getxattrat(2)'s struct xattr_args (include/uapi/linux/xattr.h): where the value goes and
/// the room there (bytes).
struct XattrArgs {
  uint64_t value;
  uint32_t size, flags;
};

/// getxattrat's number (Linux 6.13), newer than the build's headers (syscalls.py NEWER).
constexpr long kSysGetxattrat = 464;
/// quotactl_fd's number (Linux 5.14).
constexpr long kSysQuotactlFd = 443;
/// The longest file system type name sysfs(2) option 2 is read for (names are short:
/// "fuse.sshfs" is among the longest).
constexpr uint64_t kMaxFsName = 256;

/// name_to_handle_at(2)'s struct file_handle holds at most this many handle bytes
/// (MAX_HANDLE_SZ, include/linux/exportfs.h), after its two 4-byte fields.
constexpr uint64_t kMaxHandle = 128, kHandleHeader = 8;
/// AT_HANDLE_MNT_ID_UNIQUE (Linux 6.12): the mount id written is 8 bytes instead of 4.
constexpr uint64_t kHandleMntIdUnique = 1;

// Out-parameters decided by an argument's value rather than by the table (ioctl(2),
// fcntl(2), prctl(2), mincore(2), get_mempolicy(2), seccomp(2), recvmsg(2), recvmmsg(2), msgrcv(2),
// msgctl(2), semctl(2), shmctl(2), shmat(2), keyctl(2), syslog(2),
// getxattrat(2), name_to_handle_at(2), quotactl(2), quotactl_fd(2), sysfs(2), bpf(2)).
bool custom_outputs(std::vector<MemoryRegion>& out, pid_t tid, long nr,
                    const std::array<uint64_t, 6>& a, int64_t result) {
  switch (nr) {
    case SYS_ioctl: {
      if (result < 0) return true;
      if (a[1] == FS_IOC_FIEMAP) {
        // The header, then the extents the kernel found (fm_mapped_extents, at most
        // fm_extent_count of them): Documentation/filesystems/fiemap.rst.
        struct fiemap h;
        read_memory_exact(tid, a[2], &h, sizeof h);
        uint32_t n = h.fm_extent_count ? std::min(h.fm_mapped_extents, h.fm_extent_count) : 0;
        add(out, tid, a[2], sizeof h + uint64_t(n) * sizeof(fiemap_extent));
        return true;
      }
      if (a[1] == SIOCGIFCONF) {
        // The struct ifconf, whose ifc_len the kernel sets, and the ifreqs it wrote into
        // ifc_buf, or none where ifc_buf is NULL (it asked for the length): netdevice(7).
        struct ifconf c;
        read_memory_exact(tid, a[2], &c, sizeof c);
        add(out, tid, a[2], sizeof c);
        if (c.ifc_buf && c.ifc_len > 0)
          add(out, tid, reinterpret_cast<uint64_t>(c.ifc_buf), uint64_t(c.ifc_len));
        return true;
      }
      long n = ioctl_output_size(a[1]);
      if (n < 0)
        throw UnsupportedError("ioctl request " + hex(a[1]) + " on fd " + std::to_string(a[0]) +
                               " is not supported yet");
      add(out, tid, a[2], uint64_t(n));
      return true;
    }
    case SYS_fcntl: {
      if (result < 0) return true;  // refused: nothing written (a command the kernel lacks)
      long n = fcntl_output_size(long(a[1]));
      if (n < 0)
        throw UnsupportedError("fcntl command " + std::to_string(long(a[1])) + " on fd " +
                               std::to_string(a[0]) + " is not supported yet");
      add(out, tid, a[2], uint64_t(n));
      return true;
    }
    case SYS_prctl:
      if (result < 0) return true;
      switch (a[0]) {
        case PR_GET_NAME:
          add(out, tid, a[1], 16);
          break;
        case PR_GET_PDEATHSIG:
        case PR_GET_TSC:
        case PR_GET_CHILD_SUBREAPER:
        case PR_GET_FPEXC:
        case PR_GET_ENDIAN:
        case PR_GET_UNALIGN:
          add(out, tid, a[1], 4);
          break;
        case PR_GET_TID_ADDRESS:
          add(out, tid, a[1], 8);
          break;
        default:
          break;  // the rest return their value or write nothing
      }
      return true;
    case SYS_mincore:
      if (result == 0) add(out, tid, a[2], (a[1] + 4095) / 4096);
      return true;
    case SYS_get_mempolicy:
      if (result == 0) {
        add(out, tid, a[0], 4);
        add(out, tid, a[1], (std::min<uint64_t>(a[2], 1 << 20) + 63) / 64 * 8);
      }
      return true;
    case SYS_seccomp:
      if (result >= 0 && a[0] == SECCOMP_GET_NOTIF_SIZES)
        add(out, tid, a[2], sizeof(seccomp_notif_sizes));
      return true;
    case SYS_recvmsg: {
      if (result < 0) return true;
      struct msghdr h;
      read_memory_exact(tid, a[1], &h, sizeof h);
      add_received(out, tid, a[1], sizeof h, h, uint64_t(result));
      return true;
    }
    case SYS_recvmmsg:  // `result` messages, each header followed by its msg_len
      for (int64_t i = 0; i < result; ++i) {
        uint64_t at = a[1] + uint64_t(i) * sizeof(mmsghdr);
        mmsghdr m;
        read_memory_exact(tid, at, &m, sizeof m);
        add_received(out, tid, at, sizeof m, m.msg_hdr, m.msg_len);
      }
      return true;
    case SYS_msgrcv:  // struct msgbuf: the type (a long), then the text
      if (result >= 0) add(out, tid, a[1], sizeof(long) + uint64_t(result));
      return true;
    case SYS_msgctl:
      if (result >= 0) add(out, tid, a[2], sysv_ctl_output(SYS_msgctl, a[0], a[1]));
      return true;
    case SYS_semctl:
      if (result >= 0) add(out, tid, a[3], sysv_ctl_output(SYS_semctl, a[0], a[2]));
      return true;
    case SYS_shmctl:
      if (result >= 0) add(out, tid, a[2], sysv_ctl_output(SYS_shmctl, a[0], a[1]));
      return true;
    case SYS_shmat:
      if (result >= 0) add_segment(out, tid, uint64_t(result));
      return true;
    case SYS_keyctl:
      if (result >= 0) {
        auto [addr, n] = keyctl_output(a, uint64_t(result));
        add(out, tid, addr, n);
      }
      return true;
    case SYS_syslog:
      if (result > 0 && syslog_reads(a[0])) add(out, tid, a[1], uint64_t(result));
      return true;
    case kSysGetxattrat:
      if (result > 0) {
        XattrArgs x{};
        read_memory_exact(tid, a[4], &x, sizeof x);
        add(out, tid, x.value, std::min<uint64_t>(uint64_t(result), x.size));
      }
      return true;
    case SYS_bpf:
      for (const auto& [addr, n] : bpf_outputs(tid, a, result)) add(out, tid, addr, n);
      return true;
    case SYS_quotactl:  // (cmd, special, id, addr); the type of quota is cmd's low byte
      if (result >= 0) add(out, tid, a[3], quotactl_output(a[0]));
      return true;
    case kSysQuotactlFd:  // (fd, cmd, id, addr)
      if (result >= 0) add(out, tid, a[3], quotactl_output(a[1]));
      return true;
    case SYS_sysfs:  // option 2 copies a file system type's name, with its NUL, to a[2]
      if (result >= 0 && a[0] == 2) {
        std::vector<uint8_t> name = read_memory(tid, a[2], kMaxFsName);
        auto nul = std::find(name.begin(), name.end(), 0);
        if (nul != name.end()) add(out, tid, a[2], uint64_t(nul - name.begin()) + 1);
      }
      return true;
    case SYS_name_to_handle_at:
      // The kernel sets handle_bytes to the size it needs; on success the handle follows.
      if (result == 0) {
        uint32_t bytes = 0;
        read_memory_exact(tid, a[2], &bytes, sizeof bytes);
        add(out, tid, a[2], kHandleHeader + std::min<uint64_t>(bytes, kMaxHandle));
        add(out, tid, a[3], (a[4] & kHandleMntIdUnique) ? 8 : 4);
      } else if (result == -EOVERFLOW) {
        add(out, tid, a[2], 4);
      }
      return true;
    default:
      return false;
  }
}
}  // namespace

std::array<uint64_t, 6> syscall_args(const Registers& r) {
  return {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
}

EntrySnapshot snapshot_entry(pid_t tid, const SyscallSpec& spec, const Registers& entry) {
  EntrySnapshot s;
  auto a = syscall_args(entry);
  for (const auto& o : spec.out) {
    if (o.arg < 0 || o.rule != SizeRule::LenPtr) continue;
    uint64_t p = a[size_t(o.size_arg)];
    if (p) read_memory_exact(tid, p, &s.len_at_entry[size_t(o.arg)], 4);
  }
  return s;
}

std::vector<MemoryRegion> capture_outputs(pid_t tid, const SyscallSpec& spec,
                                          const Registers& entry, int64_t result,
                                          const EntrySnapshot& snap) {
  std::vector<MemoryRegion> out;
  auto a = syscall_args(entry);
  if (custom_outputs(out, tid, spec.nr, a, result)) return out;
  for (const auto& o : spec.out) {
    if (o.arg < 0) break;
    if (result < 0 && o.on_error == ErrorWrites::Never) continue;
    if (result < 0 && o.on_error == ErrorWrites::Interrupted && result != -EINTR &&
        !is_restart_result(result))
      continue;
    uint64_t p = a[size_t(o.arg)];
    uint64_t r = result > 0 ? uint64_t(result) : 0;
    switch (o.rule) {
      case SizeRule::None:
        break;
      case SizeRule::Fixed:
        add(out, tid, p, o.n);
        break;
      case SizeRule::Result:
        add(out, tid, p, r);
        break;
      case SizeRule::ResultTimes:
        add(out, tid, p, r * o.n);
        break;
      case SizeRule::Arg:
        add(out, tid, p, a[size_t(o.size_arg)]);
        break;
      case SizeRule::ArgTimes:
        add(out, tid, p, a[size_t(o.size_arg)] * o.n);
        break;
      case SizeRule::LenPtr:
        add(out, tid, p, snap.len_at_entry[size_t(o.arg)]);
        break;
      case SizeRule::Iov:
        add_iov(out, tid, p, a[size_t(o.size_arg)], r);
        break;
      case SizeRule::FdSet:
        add(out, tid, p, (std::min<uint64_t>(a[size_t(o.size_arg)], 1 << 20) + 63) / 64 * 8);
        break;
    }
  }
  return out;
}

DigestExclusions possible_outputs(pid_t tid, const SyscallSpec& spec, const Registers& entry,
                                  const EntrySnapshot& snap) {
  DigestExclusions out;
  auto a = syscall_args(entry);
  auto add_range = [&](uint64_t p, uint64_t n) {
    if (p && n) out.emplace_back(p, std::min(n, kMaxOut));
  };
  auto add_iov_ranges = [&](uint64_t p, uint64_t count) {
    for (const iovec& io : read_iovecs(tid, p, count))
      add_range(reinterpret_cast<uint64_t>(io.iov_base), io.iov_len);
  };
  switch (spec.nr) {
    case SYS_ioctl: {
      long n = ioctl_output_size(a[1]);
      if (a[1] == FS_IOC_FIEMAP) {  // up to fm_extent_count extents after the header
        struct fiemap h {};
        std::vector<uint8_t> got = read_memory(tid, a[2], sizeof h);
        std::memcpy(&h, got.data(), std::min(got.size(), sizeof h));
        n = long(sizeof h + uint64_t(h.fm_extent_count) * sizeof(fiemap_extent));
      }
      if (a[1] == SIOCGIFCONF) {  // the struct, and the buffer its ifc_len gives
        struct ifconf c {};
        std::vector<uint8_t> got = read_memory(tid, a[2], sizeof c);
        std::memcpy(&c, got.data(), std::min(got.size(), sizeof c));
        if (c.ifc_len > 0) add_range(reinterpret_cast<uint64_t>(c.ifc_buf), uint64_t(c.ifc_len));
        n = sizeof c;
      }
      add_range(a[2], n < 0 ? 4096 : uint64_t(n));
      return out;
    }
    case SYS_fcntl:
      add_range(a[2], 32);
      return out;
    case SYS_prctl:
      add_range(a[1], 16);
      return out;
    case SYS_msgrcv:
      add_range(a[1], sizeof(long) + a[2]);
      return out;
    case SYS_mincore:
      add_range(a[2], (a[1] + 4095) / 4096);
      return out;
    case SYS_get_mempolicy:
      add_range(a[0], 4);
      add_range(a[1], (std::min<uint64_t>(a[2], 1 << 20) + 63) / 64 * 8);
      return out;
    case SYS_msgctl:
      add_range(a[2], sysv_ctl_output(SYS_msgctl, a[0], a[1]));
      return out;
    case SYS_semctl:
      add_range(a[3], sysv_ctl_output(SYS_semctl, a[0], a[2]));
      return out;
    case SYS_shmctl:
      add_range(a[2], sysv_ctl_output(SYS_shmctl, a[0], a[1]));
      return out;
    case SYS_keyctl: {
      auto [addr, n] = keyctl_output(a, kMaxOut);
      add_range(addr, n);
      return out;
    }
    case SYS_syslog:
      if (syslog_reads(a[0])) add_range(a[1], a[2]);
      return out;
    case kSysGetxattrat: {
      XattrArgs x{};
      std::vector<uint8_t> bytes = read_memory(tid, a[4], sizeof x);
      if (bytes.size() == sizeof x) {
        std::memcpy(&x, bytes.data(), sizeof x);
        add_range(x.value, x.size);
      }
      return out;
    }
    case SYS_bpf:  // its attr; what a lookup writes is known only after it (bpf never waits)
      add_range(a[1], a[2]);
      return out;
    case SYS_quotactl:  // at most the largest struct a command writes (quotactl_output)
    case kSysQuotactlFd:
      add_range(a[3], kMaxQuotaOutput);
      return out;
    case SYS_sysfs:
      if (a[0] == 2) add_range(a[2], kMaxFsName);
      return out;
    case SYS_name_to_handle_at:
      add_range(a[2], kHandleHeader + kMaxHandle);
      add_range(a[3], 8);
      return out;
    case SYS_recvmsg:
    case SYS_recvmmsg: {
      uint64_t count = spec.nr == SYS_recvmsg ? 1 : std::min<uint64_t>(a[2], kMaxIovecs);
      size_t size = spec.nr == SYS_recvmsg ? sizeof(msghdr) : sizeof(mmsghdr);
      for (uint64_t i = 0; i < count; ++i) {
        struct msghdr h;
        read_memory_exact(tid, a[1] + i * size, &h, sizeof h);
        add_range(a[1] + i * size, size);
        add_range(reinterpret_cast<uint64_t>(h.msg_name), h.msg_namelen);
        add_range(reinterpret_cast<uint64_t>(h.msg_control), h.msg_controllen);
        add_iov_ranges(reinterpret_cast<uint64_t>(h.msg_iov), h.msg_iovlen);
      }
      return out;
    }
    default:
      break;
  }
  for (const auto& o : spec.out) {
    if (o.arg < 0) break;
    uint64_t p = a[size_t(o.arg)];
    uint64_t cap = o.size_arg >= 0 ? a[size_t(o.size_arg)] : 0;
    switch (o.rule) {
      case SizeRule::None:
        break;
      case SizeRule::Fixed:
        add_range(p, o.n);
        break;
      case SizeRule::Result:
      case SizeRule::Arg:
        add_range(p, cap);
        break;
      case SizeRule::ResultTimes:
      case SizeRule::ArgTimes:
        add_range(p, cap * o.n);
        break;
      case SizeRule::LenPtr:
        add_range(p, snap.len_at_entry[size_t(o.arg)]);
        break;
      case SizeRule::Iov:
        add_iov_ranges(p, cap);
        break;
      case SizeRule::FdSet:
        add_range(p, (std::min<uint64_t>(cap, 1 << 20) + 63) / 64 * 8);
        break;
    }
  }
  return out;
}

}  // namespace rwd
