package main

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkRunEmbedded measures the whole "fxquant run" on the embedded
// MLP: read, unlift, prepare, 4 calibration batches, convert, verify and
// the SQNR runs.
func BenchmarkRunEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if code := run([]string{"run"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit status %d", code)
		}
	}
}

// BenchmarkDiff measures reading two fixture programs and diffing them.
func BenchmarkDiff(b *testing.B) {
	b.ReportAllocs()
	a := "../../tests/testdata/pt2e/cnn.float.pt2"
	c := "../../tests/testdata/pt2e/cnn.static.pt2"
	for b.Loop() {
		if code := run([]string{"diff", a, c}, strings.NewReader(""), io.Discard, io.Discard); code != 1 {
			b.Fatalf("exit status %d, want 1", code)
		}
	}
}
