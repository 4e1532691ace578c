// Children created straight into namespaces of their own by clone and clone3 (CLONE_NEWUSER,
// CLONE_NEWUTS), as sandboxes and container tools make them, rather than by unshare. Each child
// maps a file its parent opened, shared and writable (a file replay keeps one copy of, which
// the replayed child must open from the replayer's /proc), writes into it, sets its host name
// in its own UTS namespace and reports it. programs.sh clone_namespaces compares the output with
// a native run's. Prints "no user namespaces" where the kernel refuses them.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int child(int fd, const char* how) {
  char* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) return 2;
  snprintf(page, 64, "written by the %s child", how);
  char name[16];
  snprintf(name, sizeof name, "ns-%s", how);
  int set = sethostname(name, strlen(name));
  struct utsname u;
  uname(&u);
  printf("%s child: sethostname %d, host name %s\n", how, set, u.nodename);
  fflush(stdout);
  return 77;
}

static void report(pid_t pid, int fd, const char* how) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) perror("waitpid");
  char buf[64] = {0};
  pread(fd, buf, sizeof buf - 1, 0);
  printf("%s child exited %d; the file says: %s\n", how,
         WIFEXITED(status) ? WEXITSTATUS(status) : -1, buf);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  char path[] = "/tmp/rewind-clone-ns-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return 1;
  unlink(path);
  pid_t pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0) {
    printf("no user namespaces (%s)\n", strerror(errno));
    return 0;
  }
  if (pid == 0) _exit(child(fd, "clone"));
  report(pid, fd, "clone");

  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_NEWUSER | CLONE_NEWUTS;
  args.exit_signal = SIGCHLD;
  pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) {
    printf("clone3: %s\n", strerror(errno));
    return 1;
  }
  if (pid == 0) _exit(child(fd, "clone3"));
  report(pid, fd, "clone3");
  printf("flags as the program left them: %s\n",
         args.flags == (CLONE_NEWUSER | CLONE_NEWUTS) ? "unchanged" : "changed");
  struct utsname u;
  uname(&u);
  printf("parent host name unchanged: %d\n", strncmp(u.nodename, "ns-", 3) != 0);
  return 0;
}
