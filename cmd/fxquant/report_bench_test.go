package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunReferenceMLP500 is "fxquant run --reference" on the
// 500-layer MLP (2,002 nodes, 12,013 after convert), the baseline of
// BenchmarkReportMLP500.
func BenchmarkRunReferenceMLP500(b *testing.B) {
	mlp := deepMLP(b, b.TempDir(), 500, 64)
	b.ResetTimer()
	for b.Loop() {
		if code := run([]string{"run", mlp, "--reference", "--no-progress"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit status %d", code)
		}
	}
}

// BenchmarkReportMLP500 is "fxquant report --reference" on the same MLP:
// the run, the histograms, the per-node comparison (numdebug.Compare), the
// layout of both graphs and the page. The issue asks for it within 3x of the run.
func BenchmarkReportMLP500(b *testing.B) {
	withComparison(b)
	dir := b.TempDir()
	mlp := deepMLP(b, dir, 500, 64)
	out := filepath.Join(dir, "report.html")
	b.ResetTimer()
	for b.Loop() {
		if code := run([]string{"report", mlp, "--reference", "--no-progress", "-o", out}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit status %d", code)
		}
	}
}
