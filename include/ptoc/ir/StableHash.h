// Hashes that are identical across runs, processes and platforms (structural hashes,
// cache keys). absl::Hash is salted per process, so it cannot serve here.
#pragma once

#include <cstdint>

#include "llvm/ADT/StringRef.h"

namespace ptoc::ir {

/// Mixes `v` into `seed` (splitmix64 finaliser over a golden-ratio combine).
constexpr uint64_t hashMix(uint64_t seed, uint64_t v) {
  uint64_t x = seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// FNV-1a over bytes, then mixed.
inline uint64_t hashBytes(llvm::StringRef s, uint64_t seed = 0) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return hashMix(seed, h);
}

} // namespace ptoc::ir
