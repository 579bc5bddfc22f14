// The sanitizer runtimes' default options in a FULCRUM_SANITIZE build (`make test-asan`), for
// every binary linked with the core (the tests, fulcrum, the benches) however it is started: by
// ctest, by hand or by an e2e script. ASAN_OPTIONS / UBSAN_OPTIONS in the environment still
// override them.
//
// intercept_tls_get_addr=0: GCC 12's LeakSanitizer reads a header before each dynamic TLS block
// that glibc 2.36 no longer writes (the block is a plain malloc), so its exit scan followed a
// garbage range and crashed after tests that had passed (PoCL's dlopen'ed modules with TLS). The
// blocks stay reachable through the thread's DTV, a heap object the static TLS points to, so no
// leak is hidden (a deliberate leak is still reported with it).
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() {
  return "intercept_tls_get_addr=0";
}
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}
#endif
