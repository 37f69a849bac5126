package main

import (
	"os"
	"testing"

	"github.com/fxquant/fxquant/pt2"
)

// BenchmarkReadMLP500 measures pt2.Read of the 500-layer MLP that
// BenchmarkRunMLP500 quantizes (2,002 nodes lifted, 10 MB of weights).
// MB/s counts the archive's bytes.
func BenchmarkReadMLP500(b *testing.B) {
	data, err := os.ReadFile(deepMLP(b, b.TempDir(), 500, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pt2.Read(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}
