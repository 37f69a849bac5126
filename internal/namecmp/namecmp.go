package namecmp

import (
	"fmt"
	"math"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// stats accumulates one node's comparison over the batches.
type stats struct {
	sig, noise, maxAbs, min, max float64
	seen                         bool
}

// Compare runs both graphs on every batch and fills a numdebug.Comparison
// with one Result per float call_function node whose name the quantized
// graph also has and whose value is a floating-point tensor of the same
// shape in both. Handle is the float node's index in graph order. SQNR is
// 10 log10(sum f^2 / sum (f-q)^2) over all batches (+Inf when equal);
// Growth is the smallest SQNR of the node's compared inputs minus its own
// (0 when it has none).
func Compare(float, quant *fxgraph.Graph, batches [][]*tensor.Tensor) (*numdebug.Comparison, error) {
	floatNodes := float.Nodes()
	order := map[string]int{}
	for i, n := range floatNodes {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		if _, ok := quant.NodeByName(n.Name()); ok {
			order[n.Name()] = i
		}
	}
	acc := map[string]*stats{}
	for b, batch := range batches {
		vals := map[string][]float64{}
		shapes := map[string][]int{}
		_, err := interp.Run(float, batch, interp.Options{Hook: func(n *fxgraph.Node, v ops.Value) error {
			if _, ok := order[n.Name()]; !ok {
				return nil
			}
			t, ok := v.(*tensor.Tensor)
			if !ok || !t.DType().IsFloat() {
				return nil
			}
			f, err := t.Float64s()
			if err != nil {
				return err
			}
			vals[n.Name()], shapes[n.Name()] = f, t.Shape()
			return nil
		}})
		if err != nil {
			return nil, fmt.Errorf("namecmp: float graph, batch %d: %w", b, err)
		}
		_, err = interp.Run(quant, batch, interp.Options{Hook: func(n *fxgraph.Node, v ops.Value) error {
			f, ok := vals[n.Name()]
			if !ok {
				return nil
			}
			t, ok := v.(*tensor.Tensor)
			if !ok || !t.DType().IsFloat() || !slices.Equal(t.Shape(), shapes[n.Name()]) {
				return nil
			}
			q, err := t.Float64s()
			if err != nil {
				return err
			}
			s := acc[n.Name()]
			if s == nil {
				s = &stats{min: math.Inf(1), max: math.Inf(-1)}
				acc[n.Name()] = s
			}
			s.seen = true
			for k := range f {
				d := f[k] - q[k]
				s.sig += f[k] * f[k]
				s.noise += d * d
				s.maxAbs = math.Max(s.maxAbs, math.Abs(d))
				s.min = math.Min(s.min, f[k])
				s.max = math.Max(s.max, f[k])
			}
			return nil
		}})
		if err != nil {
			return nil, fmt.Errorf("namecmp: quantized graph, batch %d: %w", b, err)
		}
	}
	c := &numdebug.Comparison{WorstGrowth: -1}
	sqnrOf := map[string]float64{}
	for i, n := range floatNodes {
		s := acc[n.Name()]
		if s == nil || !s.seen {
			continue
		}
		db := math.Inf(1)
		if s.noise > 0 {
			db = 10 * math.Log10(s.sig/s.noise)
		}
		sqnrOf[n.Name()] = db
		growth := 0.0
		first := true
		for _, in := range n.InputNodes() {
			if v, ok := sqnrOf[in.Name()]; ok {
				if first || v-db > growth {
					growth = v - db
				}
				first = false
			}
		}
		if math.IsInf(growth, 0) || math.IsNaN(growth) {
			growth = 0
		}
		target := ""
		if n.Target() != nil {
			target = n.Target().String()
		}
		c.Results = append(c.Results, numdebug.Result{Handle: i, FloatNode: n.Name(), QuantNode: n.Name(), Target: target,
			SQNR: db, MaxAbsErr: s.maxAbs, Min: s.min, Max: s.max, Growth: growth})
		if c.WorstGrowth < 0 || growth > c.Results[c.WorstGrowth].Growth {
			c.WorstGrowth = len(c.Results) - 1
		}
	}
	return c, nil
}
