/* Which syscalls librewind_preload.so buffers, and how (rules.c): the out-parameter each one
 * has, the files it is limited to, conditions on its arguments, and whether it may block. */
#ifndef REWIND_PRELOAD_RULES_H
#define REWIND_PRELOAD_RULES_H

#include "preload.h"

/* Which file descriptors (argument 0) a call is buffered on; the buffered fstat that decides
 * costs a record. */
enum fd_check {
  ANY_FD,                /* any (or argument 0 is no descriptor) */
  REGULAR_FILE,          /* regular files only */
  REGULAR_NOT_OUTPUT,    /* regular files, except those behind rewind's stdout and stderr and the
                          * files this memory maps shared (RWD_FEATURE_SHARED_FILES) */
  NOT_OUTPUT,            /* any file except those (their writes stay traced, so that replay can
                          * print them again or put them into its copy of a shared file) */
  REGULAR_TO_NOT_OUTPUT, /* argument 0 a regular file, argument 2 (copy_file_range's
                          * destination) not one of those */
  PATH_NOT_SHARED,       /* argument 0 is a path (truncate's), not of a file this memory maps
                          * shared (a buffered stat decides, only when one is listed) */
};

/* Whether a call may wait for another task (a reader, a writer, a futex wake-up): such a call
 * is buffered only with the desched counter enabled around it (preload/README.md). */
enum blocking {
  NEVER,
  UNLESS_REGULAR, /* on anything but a regular file: pipes, sockets, terminals, FIFOs */
  MAY_BLOCK,
};

/* Calls whose data the kernel scatters over the caller's iovecs (hook.c, vector calls): made
 * with one iovec over the record's data, then copied out over the caller's. */
enum vector_kind {
  NOT_VECTOR,
  IOV_READ, /* readv, preadv: the iovec array is argument 1, its length argument 2 */
  MSG_READ, /* recvmsg: argument 1 is a struct msghdr; its header and source address are
             * kept in the record too */
};

/* How a call is buffered. The out-parameter is argument `arg` (-1: none); the most the kernel
 * writes there is `size` bytes, or, when size is 0, argument `size_arg` times `elem` bytes;
 * the record keeps result times `unit` bytes of it (unit 0: all of it). */
struct out_rule {
  unsigned char buffered; /* 0: always traced */
  signed char arg;
  unsigned short size;
  unsigned char size_arg;
  unsigned char elem;
  unsigned char unit;
  unsigned char in_out;   /* the kernel reads the out-parameter first (poll's array) */
  unsigned char fd_check; /* enum fd_check */
  unsigned char blocks;   /* enum blocking */
  /* Buffered even where no desched counter can be enabled: an open for reading, which waits
   * only on a FIFO (the recording then hangs if another task of the process must open the
   * other end; preload/README.md, known limits). */
  unsigned char unarmed_ok;
  unsigned char vector; /* enum vector_kind: the out-parameter is an iovec array (arg, size
                         * and elem unused) */
  /* Made for real in replay too, through the untraced page's instruction, where the replayer
   * runs it and checks its result against the record's (brk; rewind_preload_abi.h). */
  unsigned char run_in_replay;
};

/* The rule for call nr with arguments a[0..5], or 0 when it is always traced. Rules made for
 * the request or command (ioctl, fcntl, futex) are written into `scratch`. */
RWD_HIDDEN const struct out_rule* rwd_rule_for(long nr, const long* a, struct out_rule* scratch);

#endif
