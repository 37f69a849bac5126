package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// deepMLP writes to dir a program of the embedded model's signature (x:
// f32[4, 32] in, f32[4, 16] out) holding layers Linear+ReLU blocks:
// Linear(32, width), then Linear(width, width), then Linear(width, 16),
// each followed by a ReLU, with weights drawn from a fixed seed. With
// layers 500 and width 64 it is the 500-layer MLP of issue 15 (2,002
// nodes lifted), the same shape as torch.nn.Sequential of 500
// (Linear, ReLU) pairs. It returns the file's path.
func deepMLP(tb testing.TB, dir string, layers, width int) string {
	tb.Helper()
	name, err := deepMLPFile(dir, layers, width)
	if err != nil {
		tb.Fatal(err)
	}
	return name
}

// deepMLPFile is deepMLP returning its error.
func deepMLPFile(dir string, layers, width int) (string, error) {
	p, err := pt2.Read(embeddedModel, nil)
	if err != nil {
		return "", err
	}
	fg, err := p.Unlifted()
	if err != nil {
		return "", err
	}
	var linear, relu ops.Target
	var xType ops.Type
	for n := range fg.All() {
		switch {
		case n.Op() == fxgraph.Placeholder:
			xType = n.Type()
		case n.Op() == fxgraph.CallFunction && strings.Contains(targetString(n), "linear"):
			linear = n.Target()
		case n.Op() == fxgraph.CallFunction && strings.Contains(targetString(n), "relu"):
			relu = n.Target()
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	g := fxgraph.New()
	var perr error
	param := func(path string, shape ...int) *fxgraph.Node {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		bound := 1 / float32(shape[len(shape)-1])
		for i := range v {
			v[i] = (2*rng.Float32() - 1) * bound
		}
		t, err := tensor.FromData(tensor.Float32, shape, v)
		if err != nil {
			perr = err
		}
		g.SetAttr(path, t)
		return g.GetAttr(path, ops.Plain(tensor.Float32, ops.ShapeInts(shape)...))
	}
	prev := g.Placeholder("x", xType)
	for i := range layers {
		in, out := width, width
		if i == 0 {
			in = 32
		}
		if i == layers-1 {
			out = 16
		}
		w := param(fmt.Sprintf("layers.%d.weight", 2*i), out, in)
		bias := param(fmt.Sprintf("layers.%d.bias", 2*i), out)
		l := g.Call(linear, prev, w, bias)
		l.SetType(ops.Plain(tensor.Float32, 4, int64(out)))
		r := g.Call(relu, l)
		r.SetType(ops.Plain(tensor.Float32, 4, int64(out)))
		prev = r
	}
	g.SetOutput(ops.Tuple{prev})
	if perr != nil {
		return "", perr
	}
	q, err := p.WithGraph(g)
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("mlp%dx%d.pt2", layers, width))
	return name, q.WriteFile(name, nil)
}

// benchRun runs "fxquant run" with args, failing on a non-zero exit.
func benchRun(b *testing.B, args ...string) {
	b.ReportAllocs()
	for b.Loop() {
		if code := run(append([]string{"run", "--no-progress"}, args...), strings.NewReader(""), io.Discard, os.Stderr); code != 0 {
			b.Fatalf("exit status %d", code)
		}
	}
}

// mlp500Nodes is the node count of the 500-layer MLP after convert (the
// program written is folded, so smaller).
const mlp500Nodes = 12_013

// benchMLP500 is benchRun with args on the 500-layer MLP, writing -o; it
// also reports allocations per node of the converted graph. MB/s counts
// the input archive's bytes.
func benchMLP500(b *testing.B, args ...string) {
	dir := b.TempDir()
	file := deepMLP(b, dir, 500, 64)
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	out := filepath.Join(dir, "out.pt2")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	benchRun(b, append(args, "-o", out, file)...)
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N)/mlp500Nodes, "allocs/node")
}

// BenchmarkRunMLP500 is the whole flow of issue 15 on the 500-layer MLP:
// read, prepare, calibrate 4 batches, convert, verify, SQNR and write -o.
func BenchmarkRunMLP500(b *testing.B) {
	benchMLP500(b)
}

// BenchmarkFlowMLP500 is BenchmarkRunMLP500 without the per-node
// comparison (--no-compare): the steps of torchao's flow that issue 15
// times against (load, prepare, calibrate 4 batches, convert, save), plus
// the verifier.
func BenchmarkFlowMLP500(b *testing.B) {
	benchMLP500(b, "--no-compare")
}

// BenchmarkRunZoo runs the whole flow, 4 random batches at the programs'
// recorded input shapes, on the zoo's CNNs and BERT-like encoder.
func BenchmarkRunZoo(b *testing.B) {
	for _, m := range []string{"bert_encoder", "mnasnet0_5", "mobilenet_v3_large", "regnet_x_400mf", "shufflenet_v2_x1_0"} {
		b.Run(m, func(b *testing.B) {
			file := filepath.Join("..", "..", "tests", "testdata", "zoo", m+".float.pt2")
			st, err := os.Stat(file)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			benchRun(b, "-o", filepath.Join(b.TempDir(), "out.pt2"), file)
		})
	}
}

// converted12k is the archive fxquant run writes for a 1,200-layer MLP
// (about 12k nodes lifted), made once per test process.
var converted12k = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "fxquant-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file, err := deepMLPFile(dir, 1200, 64)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "out.pt2")
	var stderr strings.Builder
	if code := run([]string{"run", "--no-progress", "-o", out, file}, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		return nil, fmt.Errorf("run: exit status %d: %s", code, stderr.String())
	}
	return os.ReadFile(out)
})

// readConverted12k returns converted12k's archive and the program read
// from it, checking that it has at least 12k nodes.
func readConverted12k(b *testing.B) ([]byte, *pt2.Program) {
	b.Helper()
	data, err := converted12k()
	if err != nil {
		b.Fatal(err)
	}
	p, err := pt2.Read(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	if n := p.Graph.Len(); n < 12_000 {
		b.Fatalf("converted program has %d nodes, want at least 12k", n)
	}
	return data, p
}

// BenchmarkReadConverted12k measures pt2.Read of a converted program of
// about 12k nodes (the 1,200-layer MLP after run): mostly decoding
// model.json. MB/s counts the archive's bytes.
func BenchmarkReadConverted12k(b *testing.B) {
	data, _ := readConverted12k(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pt2.Read(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunAllocsLinear bounds the flow's allocations per node: each
// further 80 layers of the MLP (about 1,900 converted nodes) cost run
// --no-compare the same number of allocations, within 10%, from 20 to
// 100 layers as from 100 to 180: no per-node cost grows with the graph.
func TestRunAllocsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the flow 9 times")
	}
	dir := t.TempDir()
	allocs := map[int]float64{}
	for _, layers := range []int{20, 100, 180} {
		file := deepMLP(t, dir, layers, 64)
		out := filepath.Join(dir, "out.pt2")
		allocs[layers] = testing.AllocsPerRun(2, func() {
			if code := run([]string{"run", "--no-progress", "--no-compare", "-o", out, file}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
				t.Fatalf("%d layers: exit status %d", layers, code)
			}
		})
	}
	first, second := allocs[100]-allocs[20], allocs[180]-allocs[100]
	t.Logf("allocations: %v; per 80 layers %.0f then %.0f", allocs, first, second)
	if ratio := second / first; ratio < 0.9 || ratio > 1.1 {
		t.Errorf("allocations per 80 layers: %.0f from 20 to 100 layers, %.0f from 100 to 180 (ratio %.2f), want equal within 10%%", first, second, ratio)
	}
}

// BenchmarkWriteConverted12k measures Program.WriteArchive of the
// converted program of about 12k nodes that BenchmarkReadConverted12k
// reads: encoding model.json, the payload configs and the zip container
// (written to io.Discard). MB/s counts the archive's bytes; cpu-ms/op is
// the process's CPU time per write.
func BenchmarkWriteConverted12k(b *testing.B) {
	data, p := readConverted12k(b)
	// The unchanged program writes back byte for byte.
	var buf bytes.Buffer
	if err := p.WriteArchive(&buf, nil); err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		b.Fatal("the program read does not write back to the same bytes")
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		if err := p.WriteArchive(io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (garbage collection included) is steadier than wall
	// time on a shared machine.
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
}
