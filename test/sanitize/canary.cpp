// A program with one deliberate bug per mode, run by the sanitizer build's canary
// tests (test/sanitize/CMakeLists.txt): each must be reported and must stop the
// process, or the sanitizer configuration is not checking what it claims to.
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer-canary heap-overflow|int-overflow|float-cast|leak\n");
    return 2;
  }
  // Values the optimiser cannot see through, so every bug happens at run time.
  volatile int big = INT_MAX;
  volatile double huge = 1e300;
  volatile std::size_t index = 8;
  if (std::strcmp(argv[1], "heap-overflow") == 0) {
    std::vector<int> v(8);
    std::printf("%d\n", v.data()[index]);
  } else if (std::strcmp(argv[1], "int-overflow") == 0) {
    std::printf("%d\n", big + 1);
  } else if (std::strcmp(argv[1], "float-cast") == 0) {
    std::printf("%d\n", static_cast<int>(huge));
  } else if (std::strcmp(argv[1], "leak") == 0) {
    int *lost = new int[4];
    lost[0] = big;
    std::printf("%d\n", lost[0]);
    lost = nullptr;
  } else {
    std::fprintf(stderr, "sanitizer-canary: unknown mode '%s'\n", argv[1]);
    return 2;
  }
  // Reached only if the sanitizer let the bug pass (or, for the leak, before the
  // exit-time check): the tests fail on this line except in leak mode.
  std::printf("canary survived\n");
  return 0;
}
