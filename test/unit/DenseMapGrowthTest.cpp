// support::reserveOneMore: a DenseMap grown through it stays whole when the host's
// memory runs out, where DenseMap's own growth leaves it describing buckets it does
// not have (destroying it then crashed ptoc under a memory limit).
#include <catch2/catch.hpp>

#include <cstdint>
#include <new>
#include <string>

#include "LimitedChild.h"
#include "llvm/ADT/DenseMap.h"
#include "ptoc/support/DenseMapGrowth.h"

using ptoc::support::reserveOneMore;

TEST_CASE("reserveOneMore: the map grows as DenseMap would and keeps every entry",
          "[support]") {
  llvm::DenseMap<uint64_t, std::string> map;
  for (uint64_t i = 0; i < 10'000; ++i) {
    reserveOneMore(map);
    size_t bytes = map.getMemorySize();
    map[i * 7919] = std::to_string(i);
    CHECK(map.getMemorySize() == bytes); // the insertion itself never grew the map
  }
  REQUIRE(map.size() == 10'000);
  for (uint64_t i = 0; i < 10'000; ++i) CHECK(map.lookup(i * 7919) == std::to_string(i));
  // Twice the buckets at each growth, as DenseMap's own: a power of two.
  size_t buckets = map.getMemorySize() / sizeof(llvm::detail::DenseMapPair<uint64_t, std::string>);
  CHECK(buckets == 16384);
}

TEST_CASE("reserveOneMore: running out of memory leaves the map whole", "[support]") {
  if (ptoc::test::kAddressSanitizer) {
    WARN("not under ASan: its operator new ends the process instead of throwing");
    return;
  }
  // Short strings live inside their buckets, so the only allocations are the bucket
  // arrays: under a 64 MiB limit a growth fails (at about a million entries). With
  // DenseMap's own growth, destroying the map then frees garbage and the child dies.
  ptoc::test::ChildResult child =
      ptoc::test::runUnderAddressLimit(int64_t(64) << 20, [](std::string &out) {
        llvm::DenseMap<uint64_t, std::string> map;
        try {
          for (uint64_t i = 0; i < (uint64_t(1) << 30); ++i) {
            reserveOneMore(map);
            map[i] = std::to_string(i);
          }
        } catch (const std::bad_alloc &) {
          for (uint64_t i = 0; i < map.size(); ++i)
            if (map.lookup(i) != std::to_string(i)) return 2;
          out = std::to_string(map.size());
          return 0; // and the map is destroyed on the way out
        }
        return 3; // never ran out
      });
  INFO("child output: " << child.out);
  CHECK(child.signal == 0);
  CHECK(child.exitStatus == 0);
  CHECK(std::stoull("0" + child.out) > 100'000);
}
