"""Benchmarks behind ``masume bench`` (figures recorded in docs/benchmarks.md)."""
