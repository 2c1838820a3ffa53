"""Helpers the tests and the benchmarks share (`tests/` is on their import path)."""
