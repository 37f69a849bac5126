package ops_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// structCallsPath holds PyTorch 2.14.1's results of aten calls on the
// structural, pooling, norm, attention and transposed-convolution ops,
// with every result's strides (ops/kernels/testdata/struct/README.md says
// how gen_vectors.py made it).
const structCallsPath = "kernels/testdata/struct/vectors.json"

type callInput struct {
	Seed      uint32  `json:"seed"`
	Shape     []int   `json:"shape"`
	Lo        float64 `json:"lo"`
	Span      float64 `json:"span"`
	Layout    string  `json:"layout"`
	Transpose []int   `json:"transpose"`
	Permute   []int   `json:"permute"`
	Ints      []int64 `json:"ints"`
}

type callRecord struct {
	Shape   []int  `json:"shape"`
	Strides []int  `json:"strides"`
	Hex     string `json:"hex"`
}

type structCall struct {
	Target string            `json:"target"`
	Inputs []callInput       `json:"inputs"`
	Args   []json.RawMessage `json:"args"`
	Outs   []callRecord      `json:"outs"`
}

// fillHash is gen_vectors.py's hashfill (see the kernels package test).
func fillHash(seed uint32, n int, lo, span float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		h := seed*0x9E3779B1 + uint32(i)*0x85EBCA77 + 0x165667B1
		h ^= h >> 15
		h *= 0x2C1B3C6D
		h ^= h >> 12
		h *= 0x297A2D39
		h ^= h >> 15
		out[i] = float32(float64(h>>8)/float64(1<<24)*span + lo)
	}
	return out
}

func (in callInput) build(t *testing.T) *tensor.Tensor {
	t.Helper()
	if in.Ints != nil {
		x, err := tensor.FromData(tensor.Int64, in.Shape, in.Ints)
		require.NoError(t, err)
		return x
	}
	shape := in.Shape
	if in.Layout == "tBHLE" {
		shape = []int{in.Shape[0], in.Shape[2], in.Shape[1], in.Shape[3]}
	}
	x := tensor.F32(shape, fillHash(in.Seed, tensor.Numel(shape), in.Lo, in.Span)...)
	var err error
	if in.Layout == "tBHLE" {
		x, err = x.Transpose(1, 2)
		require.NoError(t, err)
	}
	if in.Transpose != nil {
		x, err = x.Transpose(in.Transpose[0], in.Transpose[1])
		require.NoError(t, err)
	}
	if in.Permute != nil {
		x, err = x.Permute(in.Permute...)
		require.NoError(t, err)
	}
	return x
}

// decodeArg turns a JSON argument into an op value: {"t": k} is input k,
// lists become ops.List, numbers int64 or float64 as written.
func decodeArg(t *testing.T, raw json.RawMessage, in []*tensor.Tensor) ops.Value {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	require.NoError(t, d.Decode(&v))
	return convertArg(t, v, in)
}

func convertArg(t *testing.T, v any, in []*tensor.Tensor) ops.Value {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		require.NoError(t, err)
		return f
	case []any:
		out := make(ops.List, len(x))
		for i, e := range x {
			out[i] = convertArg(t, e, in)
		}
		return out
	case map[string]any:
		k, err := x["t"].(json.Number).Int64()
		require.NoError(t, err)
		return in[k]
	}
	t.Fatalf("unexpected argument %T", v)
	return nil
}

// TestStructCallsMatchPyTorch runs every recorded aten call through the
// default registry and requires PyTorch's result shapes, strides (size-1
// dims aside) and bits; conv_transpose2d, which is not bit-exact, is held
// to the bound in its doc.
func TestStructCallsMatchPyTorch(t *testing.T) {
	data, err := os.ReadFile(structCallsPath)
	require.NoError(t, err)
	var f struct {
		Calls []structCall `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	require.NotEmpty(t, f.Calls)
	reg := ops.Default()
	worstConvT := 0.0
	for i, c := range f.Calls {
		t.Run(fmt.Sprintf("%02d_%s", i, c.Target), func(t *testing.T) {
			args := c.args(t)
			got := runCall(t, reg, c.Target, args)
			var outs []*tensor.Tensor
			switch g := got.(type) {
			case *tensor.Tensor:
				outs = []*tensor.Tensor{g}
			case ops.List:
				for _, e := range g {
					outs = append(outs, e.(*tensor.Tensor))
				}
			case ops.Tuple:
				// A multi-result op: the recorded results are its first ones.
				for _, e := range g[:len(c.Outs)] {
					outs = append(outs, e.(*tensor.Tensor))
				}
			default:
				t.Fatalf("result is %T", got)
			}
			require.Len(t, outs, len(c.Outs), "number of results")
			for k, want := range c.Outs {
				o := outs[k]
				require.Equal(t, append([]int{}, want.Shape...), append([]int{}, o.Shape()...), "result %d shape", k)
				if o.Numel() > 1 {
					require.Equal(t, dropUnit(want.Shape, want.Strides), dropUnit(o.Shape(), o.Strides()), "result %d strides", k)
				}
				w := hexFloats(t, want.Hex)
				g, err := tensor.Data[float32](o)
				require.NoError(t, err)
				require.Len(t, g, len(w))
				if c.Target == "aten.conv_transpose2d.input" {
					// Bound in ConvTranspose2d's doc: 5e-7 of the largest
					// |output| (1.6e-7 measured).
					var top, diff float64
					for j := range w {
						top = max(top, math.Abs(float64(w[j])))
						diff = max(diff, math.Abs(float64(w[j])-float64(g[j])))
					}
					worstConvT = max(worstConvT, diff/top)
					require.LessOrEqual(t, diff, 5e-7*top, "result %d", k)
					continue
				}
				for j := range w {
					if math.Float32bits(w[j]) != math.Float32bits(g[j]) {
						t.Fatalf("result %d element %d: want %g (%08x), got %g (%08x)", k, j, w[j], math.Float32bits(w[j]), g[j], math.Float32bits(g[j]))
					}
				}
			}
		})
	}
	t.Logf("conv_transpose2d: largest difference %.3g of the largest |output|", worstConvT)
}

func dropUnit(shape, strides []int) []int {
	out := slices.Clone(strides)
	for i, s := range shape {
		if s == 1 {
			out[i] = 0
		}
	}
	return out
}

func hexFloats(t *testing.T, s string) []float32 {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i])<<24 | uint32(b[4*i+1])<<16 | uint32(b[4*i+2])<<8 | uint32(b[4*i+3]))
	}
	return out
}

// runCall runs target's registered kernel on args.
func runCall(t *testing.T, reg *ops.Registry, target string, args []ops.Value) ops.Value {
	t.Helper()
	tg, err := ops.ParseTarget(target)
	require.NoError(t, err)
	def, ok := reg.Op(tg.(ops.Overload))
	require.True(t, ok, "%s registered", target)
	require.NotNil(t, def.Kernel, "%s kernel", target)
	full, err := def.Schema.Normalize(args, nil)
	require.NoError(t, err, target)
	got, err := def.Kernel(full)
	require.NoError(t, err, target)
	return got
}

// TestElementwiseLayoutMatchesPyTorch checks that elementwise results on
// non-contiguous inputs take the layout PyTorch's TensorIterator gives
// them (layout.json, made by gen_layout.py), and that a Llama attention
// block's chain, from the projections through rotary embeddings, causal
// attention, the transpose back and the view that needs the attention
// output's layout, gives PyTorch's strides at every step and its bits.
func TestElementwiseLayoutMatchesPyTorch(t *testing.T) {
	data, err := os.ReadFile("kernels/testdata/struct/layout.json")
	require.NoError(t, err)
	var f struct {
		Calls []structCall `json:"calls"`
		Chain struct {
			Inputs []callInput `json:"inputs"`
			Steps  []struct {
				Target string            `json:"target"`
				Args   []json.RawMessage `json:"args"`
			} `json:"steps"`
			Outs []callRecord `json:"outs"`
		} `json:"llama_chain"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	require.NotEmpty(t, f.Calls)
	reg := ops.Default()
	for i, c := range f.Calls {
		t.Run(fmt.Sprintf("%02d_%s", i, c.Target), func(t *testing.T) {
			args := c.args(t)
			res := runCall(t, reg, c.Target, args)
			if tup, isTuple := res.(ops.Tuple); isTuple {
				res = tup[0] // the recorded result is the op's first
			}
			got, ok := res.(*tensor.Tensor)
			require.True(t, ok)
			if c.Target == "aten.group_norm.default" {
				// Channels-last group_norm: PyTorch's layout, and values
				// within the bound in GroupNorm's doc (2 ULP of the largest
				// |output|; its summation order there is not reproduced).
				want := c.Out(0)
				require.Equal(t, dropUnit(want.Shape, want.Strides), dropUnit(got.Shape(), got.Strides()), "strides")
				w := hexFloats(t, want.Hex)
				g, err := tensor.Data[float32](got)
				require.NoError(t, err)
				var top, diff float64
				for j := range w {
					top = max(top, math.Abs(float64(w[j])))
					diff = max(diff, math.Abs(float64(w[j])-float64(g[j])))
				}
				_, e := math.Frexp(top)
				t.Logf("group_norm channels-last: largest difference %.3g = %.2f ULP of the largest |output|", diff, diff/math.Ldexp(1, e-24))
				require.LessOrEqual(t, diff, 2*math.Ldexp(1, e-24))
				return
			}
			if c.Target == "aten.conv2d.default" {
				// The layout is what is checked here; the values of a
				// channels-last convolution belong to the conv kernels.
				want := c.Out(0)
				require.Equal(t, want.Shape, got.Shape(), "shape")
				require.Equal(t, dropUnit(want.Shape, want.Strides), dropUnit(got.Shape(), got.Strides()), "strides")
				w := hexFloats(t, want.Hex)
				g, err := tensor.Data[float32](got)
				require.NoError(t, err)
				for j := range w {
					require.InDelta(t, w[j], g[j], 1e-5, "element %d", j)
				}
				return
			}
			checkRecord(t, c.Out(0), got)
		})
	}
	t.Run("llama_attention_chain", func(t *testing.T) {
		var vals []*tensor.Tensor
		for _, s := range f.Chain.Inputs {
			vals = append(vals, s.build(t))
		}
		nIn := len(vals)
		require.Len(t, f.Chain.Outs, len(f.Chain.Steps))
		for k, st := range f.Chain.Steps {
			args := make([]ops.Value, len(st.Args))
			for j, a := range st.Args {
				args[j] = decodeChainArg(t, a, vals)
			}
			got, ok := runCall(t, reg, st.Target, args).(*tensor.Tensor)
			require.True(t, ok, "step %d %s", k, st.Target)
			want := f.Chain.Outs[k]
			require.Equal(t, want.Shape, got.Shape(), "step %d %s shape", k, st.Target)
			require.Equal(t, dropUnit(want.Shape, want.Strides), dropUnit(got.Shape(), got.Strides()), "step %d %s strides", k, st.Target)
			vals = append(vals, got)
		}
		checkRecord(t, f.Chain.Outs[len(f.Chain.Outs)-1], vals[len(vals)-1])
		require.Equal(t, nIn+len(f.Chain.Steps), len(vals))
	})
}

// args builds the call's inputs and decodes its arguments.
func (c structCall) args(t *testing.T) []ops.Value {
	t.Helper()
	var in []*tensor.Tensor
	for _, s := range c.Inputs {
		in = append(in, s.build(t))
	}
	args := make([]ops.Value, len(c.Args))
	for j, a := range c.Args {
		args[j] = decodeArg(t, a, in)
	}
	return args
}

// Out returns recorded result k.
func (c structCall) Out(k int) callRecord { return c.Outs[k] }

// checkRecord requires a result with the recorded shape, strides (size-1
// dims aside) and bits.
func checkRecord(t *testing.T, want callRecord, got *tensor.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape, got.Shape(), "shape")
	require.Equal(t, dropUnit(want.Shape, want.Strides), dropUnit(got.Shape(), got.Strides()), "strides")
	w := hexFloats(t, want.Hex)
	g, err := tensor.Data[float32](got)
	require.NoError(t, err)
	require.Len(t, g, len(w))
	for j := range w {
		if math.Float32bits(w[j]) != math.Float32bits(g[j]) {
			t.Fatalf("element %d: want %g (%08x), got %g (%08x)", j, w[j], math.Float32bits(w[j]), g[j], math.Float32bits(g[j]))
		}
	}
}

// decodeChainArg is decodeArg for chain steps, where {"v": k} is value k
// (the chain's inputs, then each step's result).
func decodeChainArg(t *testing.T, raw json.RawMessage, vals []*tensor.Tensor) ops.Value {
	t.Helper()
	fixed := bytes.ReplaceAll(raw, []byte(`"v"`), []byte(`"t"`))
	return decodeArg(t, fixed, vals)
}
