// main() of the GPU tests: without a usable GPU every test is reported to ctest as skipped
// (exit code 77, SKIP_RETURN_CODE), with the reason on stdout. Listing tests needs no GPU.
#include "dq/runtime/hip/HipDevice.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  std::string why;
  if (!GTEST_FLAG_GET(list_tests) && !dq::rt::hipDeviceAvailable(&why)) {
    std::printf("SKIPPED: the hip device cannot run here (%s)\n", why.c_str());
    return 77;
  }
  return RUN_ALL_TESTS();
}
