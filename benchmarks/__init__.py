"""The benchmark suite (not part of the test suite): see benchmarks/README.md."""
