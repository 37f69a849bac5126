package pt2_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/fxquant/fxquant/pt2"
)

// largestFixture returns the bytes of the largest .pt2 fixture.
func largestFixture(b *testing.B) []byte {
	var best []byte
	for _, f := range fixtures(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if len(data) > len(best) {
			best = data
		}
	}
	return best
}

func BenchmarkRead(b *testing.B) {
	data := largestFixture(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pt2.Read(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	p, err := pt2.Read(largestFixture(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := p.WriteArchive(&buf, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
