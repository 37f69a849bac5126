package kernels_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// structVectorsPath holds PyTorch 2.14.1's results for the structural,
// reduction, normalisation and attention kernels; gen_vectors.py beside it
// made it (see its header and ops/kernels/testdata/struct/README.md).
const structVectorsPath = "testdata/struct/vectors.json"

type structInput struct {
	Seed   uint32  `json:"seed"`
	Shape  []int   `json:"shape"`
	Lo     float64 `json:"lo"`
	Span   float64 `json:"span"`
	Layout string  `json:"layout"`
}

type structCase struct {
	Op     string         `json:"op"`
	Params map[string]any `json:"params"`
	Inputs []structInput  `json:"inputs"`
	Out    struct {
		Shape   []int  `json:"shape"`
		Strides []int  `json:"strides"`
		Hex     string `json:"hex"`
	} `json:"out"`
}

// hashFill is gen_vectors.py's hashfill: an integer hash of (seed, i)
// mapped to lo + span·k/2^24, rounded to float32.
func hashFill(seed uint32, n int, lo, span float64) []float32 {
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

// build makes the input tensor a spec describes; layout "tBHLE" stores a
// [B,H,L,E] tensor as [B,L,H,E] transposed, as a Llama block's q/k/v are.
func (in structInput) build(t *testing.T) *tensor.Tensor {
	t.Helper()
	shape := in.Shape
	if in.Layout == "tBHLE" {
		shape = []int{in.Shape[0], in.Shape[2], in.Shape[1], in.Shape[3]}
	}
	x := tensor.F32(shape, hashFill(in.Seed, tensor.Numel(shape), in.Lo, in.Span)...)
	if in.Layout == "tBHLE" {
		var err error
		x, err = x.Transpose(1, 2)
		require.NoError(t, err)
	}
	return x
}

func (c *structCase) want(t *testing.T) []float32 {
	t.Helper()
	b, err := hex.DecodeString(c.Out.Hex)
	require.NoError(t, err)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i])<<24 | uint32(b[4*i+1])<<16 | uint32(b[4*i+2])<<8 | uint32(b[4*i+3]))
	}
	return out
}

func (c *structCase) ints(key string) []int {
	var out []int
	if l, ok := c.Params[key].([]any); ok {
		for _, v := range l {
			out = append(out, int(v.(float64)))
		}
	}
	return out
}

func loadStructVectors(t *testing.T) []structCase {
	t.Helper()
	var f struct {
		Cases []structCase `json:"cases"`
	}
	loadVectorFile(t, structVectorsPath, "fxquant-struct-vectors/1", &f)
	require.NotEmpty(t, f.Cases)
	return f.Cases
}

// runStructCase runs the kernel a vector case names on its inputs.
func runStructCase(t *testing.T, c *structCase) (*tensor.Tensor, error) {
	t.Helper()
	var in []*tensor.Tensor
	for _, s := range c.Inputs {
		in = append(in, s.build(t))
	}
	p := c.Params
	switch c.Op {
	case "sdpa":
		var mask *tensor.Tensor
		if len(in) > 3 {
			mask = in[3]
			switch p["mask"] {
			case "bool_gt_-1", "bool_gt_-1_row1_false":
				md := f32s(t, mask)
				b := make([]bool, len(md))
				for i, v := range md {
					b[i] = v > -1
				}
				if p["mask"] == "bool_gt_-1_row1_false" {
					n := mask.Size(-1)
					clear(b[n : 2*n])
				}
				var err error
				mask, err = tensor.FromData(tensor.Bool, mask.Shape(), b)
				require.NoError(t, err)
			}
		}
		scale, _ := p["scale"].(float64)
		return kernels.ScaledDotProductAttention(in[0], in[1], in[2], mask, 0, p["is_causal"].(bool), scale, false)
	case "sum", "mean":
		f := kernels.Sum
		if c.Op == "mean" {
			f = kernels.Mean
		}
		return f(in[0], c.ints("dims"), p["keepdim"].(bool), tensor.Unknown)
	case "layer_norm":
		x := in[0]
		if p["rows_scaled"] == true {
			// gen_vectors.py: x[1] *= 100, x[2] += 50, in float32.
			xd := f32s(t, x)
			w := x.Size(-1)
			for i := 0; i < w; i++ {
				xd[w+i] *= 100
				xd[2*w+i] += 50
			}
			x = tensor.F32(x.Shape(), xd...)
		}
		var w, b *tensor.Tensor
		if len(in) == 3 {
			w, b = in[1], in[2]
		}
		out, _, _, err := kernels.LayerNorm(x, []int{x.Size(-1)}, w, b, p["eps"].(float64))
		return out, err
	case "adaptive_avg_pool2d":
		return kernels.AdaptiveAvgPool2d(in[0], c.ints("output_size"))
	case "max_pool2d", "avg_pool2d":
		k, s, pd := int(p["k"].(float64)), int(p["s"].(float64)), int(p["p"].(float64))
		ceil := p["ceil"].(bool)
		if c.Op == "max_pool2d" {
			out, _, err := kernels.MaxPool2d(in[0], []int{k, k}, []int{s, s}, []int{pd, pd}, []int{1, 1}, ceil)
			return out, err
		}
		return kernels.AvgPool2d(in[0], []int{k, k}, []int{s, s}, []int{pd, pd}, ceil, true, 0)
	}
	return nil, fmt.Errorf("unknown vector op %q", c.Op)
}

// ulpDiff is the distance between two float32 values in units in the
// last place (0 for equal bits; NaN against non-NaN counts as huge).
func ulpDiff(a, b float32) int64 {
	if math.Float32bits(a) == math.Float32bits(b) {
		return 0
	}
	if a != a || b != b {
		return math.MaxInt32
	}
	ord := func(x float32) int64 {
		u := int64(math.Float32bits(x))
		if u&0x80000000 != 0 {
			return -(u & 0x7fffffff)
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// structBounds lists the kernels that are not bit-exact on the vectors,
// with the largest difference measured against PyTorch, in units of the
// ULP of the case's largest |value| (a rounding change in a row's mean or
// rstd moves every output of the row by about that much; plain ULPs would
// blow up near the zeros of x - mean). Every other op must match bit for
// bit. Each bound is also in the kernel's doc.
var structBounds = map[string]int64{
	"layer_norm": 1,
}

// scaledULP is |a - b| in ULPs of the largest |want|.
func scaledULP(want, got []float32) int64 {
	var top float32
	for _, w := range want {
		top = max(top, float32(math.Abs(float64(w))))
	}
	_, e := math.Frexp(float64(top))
	unit := math.Ldexp(1, e-24)
	var m float64
	for i := range want {
		d := math.Abs(float64(want[i]) - float64(got[i]))
		if d != d {
			return math.MaxInt32
		}
		m = max(m, d)
	}
	return int64(math.Ceil(m / unit))
}

// TestStructVectors runs every vector case and requires PyTorch's shape,
// strides and bits (or, for the ops in structBounds, its shape, strides
// and values within the bound).
func TestStructVectors(t *testing.T) {
	cases := loadStructVectors(t)
	worst := map[string]int64{}
	exact, total := map[string]int{}, map[string]int{}
	for i := range cases {
		c := &cases[i]
		name := fmt.Sprintf("%02d_%s_%v", i, c.Op, c.Params["name"])
		t.Run(name, func(t *testing.T) {
			got, err := runStructCase(t, c)
			require.NoError(t, err)
			require.Equal(t, slices.Clip(append([]int{}, c.Out.Shape...)), append([]int{}, got.Shape()...), "shape")
			if got.Numel() > 1 {
				require.Equal(t, normStrides(c.Out.Shape, c.Out.Strides), normStrides(got.Shape(), got.Strides()), "strides")
			}
			want := c.want(t)
			g := f32s(t, got)
			require.Len(t, g, len(want))
			var m int64
			for j := range want {
				m = max(m, ulpDiff(want[j], g[j]))
			}
			total[c.Op]++
			if m == 0 {
				exact[c.Op]++
			}
			worst[c.Op] = max(worst[c.Op], scaledULP(want, g))
			bound, ok := structBounds[c.Op]
			if !ok {
				for j := range want {
					if math.Float32bits(want[j]) != math.Float32bits(g[j]) {
						t.Fatalf("element %d: want %g (%08x), got %g (%08x); max %d ULP", j, want[j], math.Float32bits(want[j]), g[j], math.Float32bits(g[j]), m)
					}
				}
				return
			}
			require.LessOrEqual(t, scaledULP(want, g), bound, "max difference in ULPs of the largest value (%d plain ULP)", m)
		})
	}
	ops := make([]string, 0, len(total))
	for op := range total {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		t.Logf("%-20s %2d/%2d exact, max %d ULP of the largest value", op, exact[op], total[op], worst[op])
	}
}

// normStrides drops the strides of size-1 dimensions, which PyTorch
// leaves arbitrary.
func normStrides(shape, strides []int) []int {
	out := slices.Clone(strides)
	for i, s := range shape {
		if s == 1 {
			out[i] = 0
		}
	}
	return out
}

// TestSDPAMathFormBound runs scaled_dot_product_attention on inputs
// PyTorch's dispatcher keeps off the flash kernel (sdpa_math.json, made
// by gen_sdpa_math.py): their results are held to the math form's bound
// in ScaledDotProductAttention's doc, in ULPs of the case's largest
// |value|; the GQA case, which PyTorch sends to the flash kernel, must be
// bit-exact.
func TestSDPAMathFormBound(t *testing.T) {
	data, err := os.ReadFile("testdata/struct/sdpa_math.json")
	require.NoError(t, err)
	var cs []struct {
		Name   string         `json:"name"`
		Inputs []structInput  `json:"inputs"`
		Kw     map[string]any `json:"kw"`
		Flash  bool           `json:"flash"`
		Out    struct {
			Shape   []int  `json:"shape"`
			Strides []int  `json:"strides"`
			Hex     string `json:"hex"`
		} `json:"out"`
	}
	require.NoError(t, json.Unmarshal(data, &cs))
	require.NotEmpty(t, cs)
	for _, c := range cs {
		t.Run(c.Name, func(t *testing.T) {
			q, k, v := c.Inputs[0].build(t), c.Inputs[1].build(t), c.Inputs[2].build(t)
			causal, _ := c.Kw["is_causal"].(bool)
			gqa, _ := c.Kw["enable_gqa"].(bool)
			got, err := kernels.ScaledDotProductAttention(q, k, v, nil, 0, causal, 0, gqa)
			require.NoError(t, err)
			require.Equal(t, c.Out.Shape, got.Shape())
			require.Equal(t, normStrides(c.Out.Shape, c.Out.Strides), normStrides(got.Shape(), got.Strides()))
			sc := structCase{}
			sc.Out.Hex = c.Out.Hex
			want := sc.want(t)
			g := f32s(t, got)
			d := scaledULP(want, g)
			t.Logf("%s: flash %v, %d ULP of the largest value", c.Name, c.Flash, d)
			if c.Flash {
				require.Zero(t, d, "flash-path case must be bit-exact")
				return
			}
			require.LessOrEqual(t, d, int64(6), "math form bound (3 measured)")
		})
	}
}
