#!/usr/bin/env python3
"""Generates rewind's syscall tables from the one declaration, engine/arch/syscalls.py.

Usage: gen_syscalls.py HEADER OUT_DIR
  HEADER   the kernel's x86-64 syscall numbers (linux-libc-dev: asm/unistd_64.h)
  OUT_DIR  where syscall_specs.inc, syscall_names.inc, ioctl_sizes.inc, fcntl_sizes.inc,
           preload_rules.inc, preload_ioctls.inc and preload_fcntls.inc are written (each
           only rewritten when its text changes)

Run by the build (CMakeLists.txt); the outputs are never committed. Exits 1 with one line
on a declaration error (an unknown name, a bad field).
"""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DECL = os.path.join(HERE, "..", "engine", "arch", "syscalls.py")

REPLAY = {"EMULATE": "Emulate", "EXECUTE": "Execute", "EXECUTE_SET_RESULT": "ExecuteSetResult",
          "MMAP": "Mmap", "MREMAP": "Mremap", "FORK": "Fork", "EXIT": "Exit",
          "SIGRETURN": "Sigreturn", "SYSV_SHM": "SysvShm",
          "VM_WRITE": "VmWrite", "PTRACE": "Ptrace"}
RECORD = {"RECORD": "Record", "ENOSYS": "Enosys"}
OUTPUT = {None: "None", "BUFFER": "Buffer", "IOV": "Iov"}
ERROR_WRITES = {False: "Never", True: "Always", "INTERRUPTED": "Interrupted"}
BLOCKS = {"NEVER": "Never", "UNLESS_REGULAR": "UnlessRegular", "MAY_BLOCK": "MayBlock",
          "FUTEX_OP": "FutexOp", "FCNTL_LOCK": "FcntlLock"}
# The preload library's blocking values (preload/rules.h, enum blocking): its futex rule
# narrows MAY_BLOCK by operation, and it buffers no fcntl command that waits.
PRELOAD_BLOCKS = {"NEVER": "NEVER", "UNLESS_REGULAR": "UNLESS_REGULAR", "MAY_BLOCK": "MAY_BLOCK",
                  "FUTEX_OP": "MAY_BLOCK", "FCNTL_LOCK": "NEVER"}
FLAGS = {"CHANGES_MAPPINGS": "kChangesMappings", "MAPS_CODE": "kMapsCode",
         "FORK_LIKE": "kForkLike", "EXEC": "kExec", "EXIT": "kExit",
         "RETURNS_ADDRESS": "kReturnsAddress", "SETS_SIGNAL_MASK": "kSetsSignalMask"}


def fail(msg):
    print("gen_syscalls.py: " + msg, file=sys.stderr)
    sys.exit(1)


def load_declaration():
    spec = importlib.util.spec_from_file_location("rewind_syscalls", DECL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernel_numbers(header):
    nums = {}
    with open(header) as f:
        for line in f:
            m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
            if m:
                nums[m.group(1)] = int(m.group(2))
    if not nums:
        fail(header + ": no __NR_ definitions")
    return nums


def pick(table, key, what, name):
    if key not in table:
        fail("%s: unknown %s %r" % (name, what, key))
    return table[key]


def spec_rows(decl, nums):
    rows = []
    for name, s in decl.SYSCALLS.items():
        nr = nums[name]
        custom = s["out"] == decl.CUSTOM
        outs = [] if custom else list(s["out"])
        if len(outs) > 4:
            fail(name + ": more than 4 out-parameters")
        out_text = ", ".join(
            "{%d, SizeRule::%s, %d, %d, ErrorWrites::%s}" % (
                o["arg"], o["rule"], o["n"], o["size_arg"],
                pick(ERROR_WRITES, o["on_error"], "error rule", name))
            for o in outs)
        flags = " | ".join(pick(FLAGS, f, "flag", name) for f in s["flags"]) or "0"
        rows.append((nr, '{%d, "%s", ReplayPolicy::%s, RecordPolicy::%s, {{%s}}, OutputKind::%s, '
                     'BlockRule::%s, %s, %s},' % (
                         nr, name, pick(REPLAY, s["replay"], "replay policy", name),
                         pick(RECORD, s["record"], "record policy", name), out_text,
                         pick(OUTPUT, s["output"], "output kind", name),
                         pick(BLOCKS, s["blocks"], "blocking rule", name),
                         "true" if custom else "false", flags)))
    return [text for _, text in sorted(rows)]


def preload_rows(decl, nums):
    rows = []
    for name, s in decl.SYSCALLS.items():
        b = s["buffer"]
        if b is None:
            continue
        kind = b["kind"]
        # struct out_rule: buffered, arg, size, size_arg, elem, unit, in_out, fd_check, blocks,
        # unarmed_ok, vector, run_in_replay (preload/rules.h).
        arg, size, size_arg, elem, unit, in_out = -1, 0, 0, 0, 0, 0
        run_in_replay = 1 if kind == "RUN_IN_REPLAY" else 0
        if kind == "FIXED":
            arg, size = b["arg"], b["size"]
        elif kind == "BY_RESULT":
            arg, size_arg, elem, unit = b["arg"], b["size_arg"], 1, 1
        elif kind == "ITEMS_BY_RESULT":
            arg, size_arg, elem, unit = b["arg"], b["size_arg"], b["elem"], b["elem"]
        elif kind == "IN_OUT_ARRAY":
            arg, size_arg, elem, in_out = b["arg"], b["size_arg"], b["elem"], 1
        elif kind not in ("NO_OUT", "VECTOR", "RUN_IN_REPLAY"):
            fail(name + ": unknown buffer kind " + kind)
        blocks = pick(PRELOAD_BLOCKS, s["blocks"], "blocking rule", name)
        rows.append((nums[name], "[%d] = {{1, %d, %d, %d, %d, %d, %d, %s, %s, 0, %s, %d}, %s}, /* %s */" %
                     (nums[name], arg, size, size_arg, elem, unit, in_out, b["fd"], blocks,
                      b["vector"], run_in_replay, b["when"], name)))
    return [text for _, text in sorted(rows)]


def write_if_changed(path, lines, comment):
    text = comment + "\n" + "\n".join(lines) + "\n"
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 3:
        fail("usage: gen_syscalls.py HEADER OUT_DIR")
    header, out_dir = sys.argv[1], sys.argv[2]
    decl = load_declaration()
    nums = kernel_numbers(header)
    for nr, name in decl.NEWER.items():
        if name in nums and nums[name] != nr:
            fail("%s: %d in NEWER, %d in %s" % (name, nr, nums[name], header))
        nums.setdefault(name, nr)
    for name in decl.SYSCALLS:
        if name not in nums:
            fail("declared syscall %r is not in %s or NEWER" % (name, header))
    os.makedirs(out_dir, exist_ok=True)
    note = "/* Generated by tools/gen_syscalls.py from engine/arch/syscalls.py. Do not edit. */"
    write_if_changed(os.path.join(out_dir, "syscall_specs.inc"), spec_rows(decl, nums), note)
    names = ['{%d, "%s"},' % (nr, name) for name, nr in sorted(nums.items(), key=lambda x: x[1])]
    write_if_changed(os.path.join(out_dir, "syscall_names.inc"), names, note)
    ioctls = ["{%s, %d}," % (req, size) for req, size, _ in decl.IOCTLS]
    write_if_changed(os.path.join(out_dir, "ioctl_sizes.inc"), ioctls, note)
    write_if_changed(os.path.join(out_dir, "preload_rules.inc"), preload_rows(decl, nums), note)
    buffered = ["{%s, %d, %s}," % (req, size, fd) for req, size, fd in decl.IOCTLS if fd]
    write_if_changed(os.path.join(out_dir, "preload_ioctls.inc"), buffered, note)
    fcntls = ["{%d, %d},  /* %s */" % (cmd, size, name) for name, cmd, size, _ in decl.FCNTLS]
    write_if_changed(os.path.join(out_dir, "fcntl_sizes.inc"), fcntls, note)
    buffered = ["{%d, %d},  /* %s */" % (cmd, size, name)
                for name, cmd, size, buf in decl.FCNTLS if buf]
    write_if_changed(os.path.join(out_dir, "preload_fcntls.inc"), buffered, note)


if __name__ == "__main__":
    main()
