/* A library no driver may depend on: the disallowed DT_NEEDED of the "disallowed_dependency" test driver. C99. */
__attribute__((visibility("default"))) int kiln_test_dummy_dependency(void) { return 42; }
