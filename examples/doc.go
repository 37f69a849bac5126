// Package examples holds runnable programs that show fxquant's main API
// end to end. Each lives in its own directory as a main package:
//
//   - quickstart: build a small float MLP with the Go API, annotate it with
//     the XNNPACK-style quantizer, prepare, calibrate, convert, rewrite to
//     the reference representation, verify, print, and compare the float
//     and quantized outputs.
//
// Run one with `go run ./examples/quickstart`.
package examples
