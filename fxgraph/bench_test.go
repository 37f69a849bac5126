package fxgraph

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// irBenchSizes are the graph sizes of the benchmarks: the 60,000-node
// figures should stay within about 12x of the 6,000-node ones.
var irBenchSizes = []int{6_000, 60_000}

// irBenchGraph builds a typed graph of about n nodes from blocks of
//
//	w = get_attr; l = linear(prev, w); r = relu(l);
//	q = quantize_per_tensor(r, ...); a = add(r, r, alpha=1)
//
// with every block also reading the input x (a hub with n/6 users) and,
// when dead is set, a dead relu chain of two nodes per block. The seed
// picks which earlier block each block reads, so the graph is not a
// plain chain.
func irBenchGraph(tb testing.TB, n int, dead bool) *Graph {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	f := ops.Plain(tensor.Float32, 2, 8)
	wt := ops.Plain(tensor.Float32, 8, 8)
	qe, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.5, 3)
	if err != nil {
		tb.Fatal(err)
	}
	qt := ops.TensorType{Shape: []int64{2, 8}, Elem: qe}
	g := New()
	x := g.Placeholder("x", f)
	block := 6
	if dead {
		block = 8
	}
	var outs []*Node
	prev := x
	for i := 0; g.Len() < n-block-1; i++ {
		path := "w" + strconv.Itoa(i)
		g.SetAttr(path, i)
		w := g.GetAttr(path, wt)
		l := g.Call(irLinear, prev, w)
		l.SetType(f)
		r := g.Call(irRelu, l)
		r.SetType(f)
		q := g.Call(irQuant, r, 0.5, int64(3), int64(-128), int64(127), tensor.Int8)
		q.SetType(qt)
		a := g.CallKw(irAdd, []ops.Value{r, x}, []Kwarg{{Name: "alpha", Value: int64(1)}})
		a.SetType(f)
		if dead {
			d := g.Call(irRelu, a)
			d.SetType(f)
			d = g.Call(irRelu, d)
			d.SetType(f)
		}
		outs = append(outs, q)
		prev = a
		if len(outs) > 1 && rng.IntN(4) == 0 {
			prev = outs[rng.IntN(len(outs))]
			prev = prev.Args()[0].(*Node) // a relu of an earlier block
		}
	}
	tuple := make(ops.Tuple, len(outs))
	for i, o := range outs {
		tuple[i] = o
	}
	g.SetOutput(tuple)
	return g
}

func irSized(b *testing.B, f func(b *testing.B, n int)) {
	for _, n := range irBenchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			f(b, n)
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		for b.Loop() {
			irBenchGraph(b, n, false)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	reg := irRegistry(b)
	irSized(b, func(b *testing.B, n int) {
		g := irBenchGraph(b, n, false)
		opts := VerifyOptions{Registry: reg, RequireTypes: true}
		if err := Verify(g, opts); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := Verify(g, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDCE(b *testing.B) {
	reg := irRegistry(b)
	irSized(b, func(b *testing.B, n int) {
		src := irBenchGraph(b, n, true)
		for b.Loop() {
			b.StopTimer()
			g, _ := src.Clone()
			runtime.GC() // charge no collection of the clone's garbage to DCE
			b.StartTimer()
			if !g.EliminateDeadCode(reg, nil) {
				b.Fatal("nothing erased")
			}
		}
	})
}

// BenchmarkDCECold is BenchmarkDCE with the processor's caches flushed
// before each timed run, so that both sizes start from memory. It is not
// the goal's measure (a pass usually follows another that has just read
// the graph, as in BenchmarkDCE); it separates how DCE's work grows with
// the graph from how much of the graph the cache holds.
func BenchmarkDCECold(b *testing.B) {
	reg := irRegistry(b)
	flush := make([]byte, 128<<20) // four times this machine's last-level cache
	irSized(b, func(b *testing.B, n int) {
		src := irBenchGraph(b, n, true)
		for b.Loop() {
			b.StopTimer()
			g, _ := src.Clone()
			runtime.GC()
			for i := 0; i < len(flush); i += 64 {
				flush[i]++
			}
			b.StartTimer()
			if !g.EliminateDeadCode(reg, nil) {
				b.Fatal("nothing erased")
			}
		}
	})
}

func BenchmarkClone(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		g := irBenchGraph(b, n, false)
		for b.Loop() {
			g.Clone()
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		g := irBenchGraph(b, n, false)
		for b.Loop() {
			Format(g)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		text := Format(irBenchGraph(b, n, false))
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := ParseString(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRewireHub replaces every use of a node with n/2 users and then
// erases the users one by one: quadratic with naive use-list removal.
func BenchmarkRewireHub(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		for b.Loop() {
			b.StopTimer()
			g := New()
			x := g.Placeholder("x", nil)
			y := g.Placeholder("y", nil)
			users := make([]*Node, 0, n/2)
			for range n / 2 {
				users = append(users, g.Call(irAdd, x, x))
			}
			b.StartTimer()
			g.ReplaceAllUsesWith(x, y, nil)
			for _, u := range users {
				if err := g.Erase(u); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkCopyNames copies a graph into itself, so every copy's name
// (add_tensor_k, relu_default_k, ...) is taken and must be re-suffixed:
// quadratic with FX's own probing loop (pytorch/pytorch#176515).
func BenchmarkCopyNames(b *testing.B) {
	irSized(b, func(b *testing.B, n int) {
		src := irBenchGraph(b, n/2, false)
		for b.Loop() {
			b.StopTimer()
			g, _ := src.Clone()
			b.StartTimer()
			restore := g.InsertingBefore(g.Last())
			if _, err := g.GraphCopy(src, map[*Node]*Node{}); err != nil {
				b.Fatal(err)
			}
			restore()
		}
	})
}

// TestBenchGraphIsValid keeps the benchmark fixture honest.
func TestBenchGraphIsValid(t *testing.T) {
	for _, dead := range []bool{false, true} {
		g := irBenchGraph(t, 600, dead)
		if err := Verify(g, VerifyOptions{Registry: irRegistry(t), RequireTypes: true}); err != nil {
			t.Fatal(err)
		}
		if g.Len() < 590 || g.Len() > 600 {
			t.Fatalf("want about 600 nodes, got %d", g.Len())
		}
		c, _ := g.Clone()
		restore := c.InsertingBefore(c.Last())
		if _, err := c.GraphCopy(g, map[*Node]*Node{}); err != nil {
			t.Fatal(err)
		}
		restore()
		if err := Verify(c, VerifyOptions{Registry: irRegistry(t), RequireTypes: true}); err != nil {
			t.Fatal(fmt.Sprint(err))
		}
	}
}
