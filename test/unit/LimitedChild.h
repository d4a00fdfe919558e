// Runs a test body in a child process whose address space is limited (RLIMIT_AS), so
// a test can run out of host memory without touching the test process.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace ptoc::test {

/// Whether this build runs under AddressSanitizer, whose allocator ends the process on
/// a failed operator new instead of throwing std::bad_alloc, and whose shadow memory
/// makes address-space limits meaningless: the tests of running out skip themselves.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

/// What the child did: its exit status, or the signal that ended it, and what it
/// wrote to `out`.
struct ChildResult {
  int exitStatus = -1; ///< -1 when a signal ended it
  int signal = 0;
  std::string out;
};

/// Forks; the child limits its address space to what it has mapped plus `extraBytes`,
/// runs `body(out)` and exits with its return value (without running destructors or
/// atexit handlers: `_exit`).
inline ChildResult runUnderAddressLimit(int64_t extraBytes,
                                        const std::function<int(std::string &out)> &body) {
  ChildResult result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    close(fds[0]);
    long pages = 0;
    if (FILE *f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + rlim_t(extraBytes);
    rlimit rl{limit, limit};
    setrlimit(RLIMIT_AS, &rl);
    std::string out;
    int status = body(out);
    (void)!write(fds[1], out.data(), out.size());
    _exit(status);
  }
  close(fds[1]);
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) result.out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.exitStatus = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

} // namespace ptoc::test
