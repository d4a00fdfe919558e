// How much more memory this process may allocate (see HostMemory.h).
#include "ptoc/support/HostMemory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/StringRef.h"

namespace ptoc::support {
namespace {

/// The first line of a small file, or nullopt when it cannot be read.
std::optional<std::string> firstLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<int64_t> numberIn(const std::string &path) {
  std::optional<std::string> line = firstLine(path);
  int64_t v = 0;
  if (!line || !absl::SimpleAtoi(*line, &v)) return std::nullopt;
  return v;
}

/// The value of `key` in a "key value" file (a cgroup's memory.stat), or 0.
int64_t statValue(const std::string &path, llvm::StringRef key) {
  std::ifstream in(path);
  std::string k;
  int64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

/// Keeps the smaller of `h` and (`bytes`, `why`).
void tighten(MemoryHeadroom &h, int64_t bytes, const std::string &why) {
  if (bytes < 0) bytes = 0;
  if (bytes < h.bytes) h = {bytes, why};
}

void addressSpace(MemoryHeadroom &h) {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  // The first field of statm: the mapped size, in pages (what RLIMIT_AS counts).
  std::optional<std::string> statm = firstLine("/proc/self/statm");
  int64_t pages = 0;
  if (!statm || !absl::SimpleAtoi(llvm::StringRef(*statm).split(' ').first.str(), &pages))
    return;
  int64_t limit = rl.rlim_cur > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(rl.rlim_cur);
  int64_t used = pages * int64_t(sysconf(_SC_PAGESIZE));
  tighten(h, limit - used,
          absl::StrCat("the address-space limit (RLIMIT_AS, ulimit -v) of ", limit / 1024,
                       " KiB, of which ", bytesText(double(used)), " are in use"));
}

/// One cgroup level's limit (v2 `max`, v1 limit_in_bytes) less what it uses, the
/// inactive page cache counted as free (the kernel reclaims it before failing).
void cgroupLevel(MemoryHeadroom &h, const std::string &dir, bool v2) {
  std::optional<int64_t> limit = numberIn(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  // v2 writes "max" and v1 a huge page-aligned number for no limit.
  if (!limit || *limit >= (int64_t(1) << 60)) return;
  std::optional<int64_t> usage =
      numberIn(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
  if (!usage) return;
  int64_t reclaimable =
      statValue(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
  int64_t used = *usage - reclaimable;
  tighten(h, *limit - used,
          absl::StrCat("the memory cgroup's limit (", dir, v2 ? "/memory.max" : "/memory.limit_in_bytes",
                       ") of ", bytesText(double(*limit)), ", of which ", bytesText(double(used)),
                       " are in use"));
}

void cgroups(MemoryHeadroom &h) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    auto [id, rest] = llvm::StringRef(line).split(':');
    auto [controllers, path] = rest.split(':');
    bool v2 = id == "0" && controllers.empty();
    bool v1 = false;
    for (llvm::StringRef c = controllers; !c.empty();) {
      auto [name, more] = c.split(',');
      v1 |= name == "memory";
      c = more;
    }
    if (!v1 && !v2) continue;
    std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    // Every level up to the mount: a parent's limit binds its children too.
    for (llvm::StringRef p = path;; p = p.rsplit('/').first) {
      cgroupLevel(h, mount + (p == "/" ? "" : p.str()), v2);
      if (p.empty() || p == "/") break;
    }
  }
}

void hostMemory(MemoryHeadroom &h) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0, available = -1, swapFree = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") available = kib;
    else if (key == "SwapFree:") swapFree = kib;
  }
  if (available < 0) return;
  tighten(h, (available + swapFree) * 1024,
          absl::StrCat("the host's available memory and swap (/proc/meminfo: MemAvailable ",
                       bytesText(double(available) * 1024), ", SwapFree ",
                       bytesText(double(swapFree) * 1024), ")"));
}

} // namespace

MemoryHeadroom memoryHeadroom() {
  MemoryHeadroom h;
  addressSpace(h);
  cgroups(h);
  hostMemory(h);
  return h;
}

std::string bytesText(double bytes) {
  if (bytes >= double(1 << 30)) return absl::StrFormat("%.1f GiB", bytes / (1 << 30));
  if (bytes >= double(1 << 20)) return absl::StrFormat("%.1f MiB", bytes / (1 << 20));
  return absl::StrFormat("%.0f KiB", bytes / 1024);
}

} // namespace ptoc::support
