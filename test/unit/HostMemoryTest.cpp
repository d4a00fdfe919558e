// support::memoryHeadroom: the memory a process may still allocate, from the limits
// that would stop it; and bytesText for messages.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "LimitedChild.h"
#include "ptoc/support/HostMemory.h"

using ptoc::support::bytesText;
using ptoc::support::memoryHeadroom;
using ptoc::support::MemoryHeadroom;

namespace {

constexpr int64_t kMiB = int64_t(1) << 20;

} // namespace

TEST_CASE("memoryHeadroom: the address-space limit less what is mapped", "[support]") {
  if (ptoc::test::kAddressSanitizer) {
    WARN("not under ASan: its allocator and shadow memory do not fit an address-space limit");
    return;
  }
  ptoc::test::ChildResult child = ptoc::test::runUnderAddressLimit(64 * kMiB, [](std::string &out) {
    MemoryHeadroom h = memoryHeadroom();
    out = std::to_string(h.bytes) + "\n" + h.limit;
    return 0;
  });
  REQUIRE(child.exitStatus == 0);
  const std::string &text = child.out;
  size_t newline = text.find('\n');
  REQUIRE(newline != std::string::npos);
  int64_t bytes = std::stoll(text.substr(0, newline));
  std::string limit = text.substr(newline + 1);
  // What the child mapped after reading its size (the headroom's own reading) comes
  // off the 64 MiB; nothing else limits it that much on a machine that runs tests.
  CHECK(bytes <= 64 * kMiB);
  CHECK(bytes > 48 * kMiB);
  CHECK_THAT(limit, Catch::Matchers::StartsWith(
                        "the address-space limit (RLIMIT_AS, ulimit -v) of "));
  CHECK_THAT(limit, Catch::Matchers::Contains(" KiB, of which "));
  CHECK_THAT(limit, Catch::Matchers::EndsWith(" are in use"));
}

TEST_CASE("memoryHeadroom: unlimited or the host's memory, always with its reason",
          "[support]") {
  MemoryHeadroom h = memoryHeadroom();
  CHECK(h.bytes > 0);
  // A finite headroom names what limits it; INT64_MAX means nothing could be read.
  if (h.bytes < INT64_MAX) CHECK_FALSE(h.limit.empty());
}

TEST_CASE("bytesText: KiB, MiB and GiB as messages print them", "[support]") {
  CHECK(bytesText(15 * 1024) == "15 KiB");
  CHECK(bytesText(24000) == "23 KiB");
  CHECK(bytesText(350.0 * kMiB) == "350.0 MiB");
  CHECK(bytesText(8388608.0 * 1200) == "9.4 GiB");
}
