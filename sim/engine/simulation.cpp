#include "sim/engine/simulation.h"

#include <systemc>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace npusim::engine {

namespace {

void announce_main_stack() {
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const bool ok = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return;
  __sanitizer_start_switch_fiber(nullptr, bottom, size);
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace

void run_simulation() {
  try {
    sc_core::sc_start();
  } catch (...) {
    announce_main_stack();
    throw;
  }
  announce_main_stack();
}

}  // namespace npusim::engine
