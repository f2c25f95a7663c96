// libsystemc.so provides main() and calls sc_main: a test binary linked with SystemC needs its
// own sc_main that runs GoogleTest (gtest_main would silently run nothing).
#include <gtest/gtest.h>

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
