// Package tests holds fxquant's cross-package tests: the PyTorch vector
// harness, graph goldens against real torchao listings, and end-to-end
// pipeline tests. It has no non-test code of its own.
package tests
