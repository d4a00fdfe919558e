// HostMemory: how much more memory this process may allocate before an allocation
// fails or the kernel kills it, so that a compile or a run too big for the host
// stops early with an error instead of dying half way (docs/reliability.md).
#pragma once

#include <cstdint>
#include <string>

namespace ptoc::support {

/// The tightest of the limits on the memory this process may still allocate.
struct MemoryHeadroom {
  /// Bytes the process may still allocate; INT64_MAX when nothing limits it.
  int64_t bytes = INT64_MAX;
  /// The limit that sets `bytes`, for messages, e.g. "the address-space limit
  /// (RLIMIT_AS, ulimit -v) of 600000 KiB, of which 102.4 MiB are in use"; empty
  /// when nothing limits it.
  std::string limit;
};

/// The smallest of: the address-space limit (RLIMIT_AS, `ulimit -v`) less the
/// process's mapped size (/proc/self/statm); the memory cgroup's limit less its
/// usage, at every level of the hierarchy (v2 memory.max / memory.current, v1
/// memory.limit_in_bytes / memory.usage_in_bytes; reclaimable page cache counts as
/// free); the host's MemAvailable plus SwapFree (/proc/meminfo). A limit that cannot
/// be read does not count. Reads a few small files: call it once per compile or run,
/// not per allocation.
MemoryHeadroom memoryHeadroom();

/// `bytes` for people: "15 KiB", "350.0 MiB", "5.9 GiB".
std::string bytesText(double bytes);

} // namespace ptoc::support
