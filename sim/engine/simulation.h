#pragma once

namespace npusim::engine {

// sc_core::sc_start() to the end of the simulation, then (under AddressSanitizer) tells ASan the
// main thread is back on its own stack. Debian's libsystemc 2.3.4 announces its coroutine
// switches to ASan but not the last one back to the main stack when an SC_THREAD returns
// (sc_cor_pkg_qt::abort) or throws; ASan then keeps a freed coroutine stack as the main
// thread's, and LeakSanitizer's exit scan of it crashes ("Tracer caught signal 11").
void run_simulation();

}  // namespace npusim::engine
