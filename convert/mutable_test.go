package convert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

func fixedSpec(scale float64, zp int64) *convert.FixedQParamsQuantizationSpec {
	return &convert.FixedQParamsQuantizationSpec{DType: observers.Int8, Scale: scale, ZeroPoint: zp,
		QuantMin: observers.Int(-128), QuantMax: observers.Int(127), QScheme: observers.PerTensorAffine}
}

// bufferGraph is the cache update of test_fold_quantize_into_mutable_buffer_storage
// in miniature: a = add(buf, x); copy_(buf, a); return a. Prepared with fixed
// qparams: the (buf, add) edge scale 0.5 zp 0, the (x, add) edge 0.125 zp 0,
// add's output 0.25 zp 1 (int8, -128..127), so no calibration is needed.
// bufType is the get_attr node's type (nil for none).
func bufferGraph(t *testing.T, value *tensor.Tensor, bufType ops.Type) *fxgraph.Graph {
	t.Helper()
	g := fxgraph.New()
	g.SetAttr("buf", value)
	x := g.Placeholder("x", f32(2))
	buf := g.GetAttr("buf", bufType)
	a := g.Call(addT, buf, x)
	a.SetType(f32(2))
	g.Call(copyT, buf, a)
	g.SetOutput(ops.Tuple{a})
	require.NoError(t, convert.Prepare(g, funcQuantizer(func(c *fxgraph.Graph) error {
		n := node(t, c, "add_tensor")
		convert.AnnotateInput(n, node(t, c, "buf"), fixedSpec(0.5, 0))
		convert.AnnotateInput(n, node(t, c, "x"), fixedSpec(0.125, 0))
		convert.AnnotateOutput(n, fixedSpec(0.25, 1))
		return nil
	})))
	return g
}

// TestFoldQuantizeIntoMutableBuffers (section 3.6): buf = [1, -0.5] is
// stored quantized with the output qparams: round(v * 4) + 1 = [5, -1] in
// int8; the input dequantize reads buf with (0.25, 1, -128, 127, int8),
// copy_ writes the output quantize, and buf's node is int8[2].
func TestFoldQuantizeIntoMutableBuffers(t *testing.T) {
	g := bufferGraph(t, tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -0.5}), f32(2))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{FoldQuantizeIntoMutableBuffers: true, Buffers: []string{"buf"}}))
	v, _ := g.Attr("buf")
	bt := v.(*tensor.Tensor)
	require.Equal(t, tensor.Int8, bt.DType())
	d, err := tensor.Data[int8](bt)
	require.NoError(t, err)
	assert.Equal(t, []int8{5, -1}, d)

	buf := node(t, g, "buf")
	assert.Equal(t, ops.Plain(tensor.Int8, 2), buf.Type())
	var inDQ, cp *fxgraph.Node
	for _, u := range buf.Users() {
		switch u.Target() {
		case dqPT:
			inDQ = u
		case copyT:
			cp = u
		}
	}
	require.NotNil(t, inDQ, "%s", fxgraph.Format(g))
	require.NotNil(t, cp)
	assert.Len(t, buf.Users(), 2)
	assert.Equal(t, []ops.Value{buf, 0.25, int64(1), int64(-128), int64(127), tensor.Int8}, inDQ.Args())
	src := cp.Arg(1).(*fxgraph.Node)
	assert.Equal(t, qPT, src.Target())
	assert.Equal(t, []ops.Value{0.25, int64(1), int64(-128), int64(127), tensor.Int8}, src.Args()[1:])
	assert.Equal(t, ops.Plain(tensor.Int8, 2), cp.Type())
	assert.Empty(t, g.FindNodes(fxgraph.GetAttr, nil)[1:], "only buf is a get_attr: %s", fxgraph.Format(g))
}

var (
	qPT  = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	dqPT = ops.MustOverload("quantized_decomposed.dequantize_per_tensor.default")
)

// TestFoldQuantizeIntoMutableBuffersErrors: the option check of section
// 3.5 step 1 and the preconditions of 3.6 that raise; each leaves the
// graph unchanged and names the buffer.
func TestFoldQuantizeIntoMutableBuffersErrors(t *testing.T) {
	base := func() *tensor.Tensor { return tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -0.5}) }
	tests := []struct {
		name    string
		graph   func(t *testing.T) *fxgraph.Graph
		opts    convert.ConvertOptions
		want    error
		mention string
	}{
		{
			name:  "needs fold_quantize",
			graph: func(t *testing.T) *fxgraph.Graph { return bufferGraph(t, base(), f32(2)) },
			opts:  convert.ConvertOptions{FoldQuantizeIntoMutableBuffers: true, NoFoldQuantize: true, Buffers: []string{"buf"}},
			want:  convert.ErrOptions, mention: "fold_quantize",
		},
		{
			name: "aliased buffer",
			graph: func(t *testing.T) *fxgraph.Graph {
				v := base()
				g := bufferGraph(t, v, f32(2))
				g.SetAttr("alias", v)
				return g
			},
			opts: convert.ConvertOptions{FoldQuantizeIntoMutableBuffers: true, Buffers: []string{"buf", "alias"}},
			want: convert.ErrMutableBuffer, mention: `"alias"`,
		},
		{
			name:  "no tensor type",
			graph: func(t *testing.T) *fxgraph.Graph { return bufferGraph(t, base(), nil) },
			opts:  convert.ConvertOptions{FoldQuantizeIntoMutableBuffers: true, Buffers: []string{"buf"}},
			want:  convert.ErrMutableBuffer, mention: `"buf"`,
		},
		{
			name: "strided storage",
			graph: func(t *testing.T) *fxgraph.Graph {
				whole := tensor.MustFromData(tensor.Float32, []int{4}, []float32{1, 9, -0.5, 9})
				v, err := whole.NewView([]int{2}, []int{2}, 0)
				require.NoError(t, err)
				return bufferGraph(t, v, f32(2))
			},
			opts: convert.ConvertOptions{FoldQuantizeIntoMutableBuffers: true, Buffers: []string{"buf"}},
			want: convert.ErrMutableBuffer, mention: "stride",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.graph(t)
			before := fxgraph.Format(g)
			err := convert.Convert(g, tt.opts)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.mention)
			assert.Equal(t, before, fxgraph.Format(g))
		})
	}
}

// TestFoldQuantizeIntoMutableBuffersSkips: on the observer-replaced graph,
// whose structure matches, buffers that are not listed, or not floating
// point, are left alone (for the ordinary constant fold).
func TestFoldQuantizeIntoMutableBuffersSkips(t *testing.T) {
	for _, tt := range []struct {
		name    string
		value   *tensor.Tensor
		buffers []string
	}{
		{"not a registered buffer", tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, -0.5}), nil},
		{"integer buffer", tensor.MustFromData(tensor.Int32, []int{2}, []int32{1, 2}), []string{"buf"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := bufferGraph(t, tt.value, ops.Plain(tt.value.DType(), 2))
			require.NoError(t, convert.ReplaceObservers(g, convert.ConvertOptions{}))
			require.Len(t, node(t, g, "buf").Users(), 2, "q_in and copy_: %s", fxgraph.Format(g))
			changed, err := convert.FoldQuantizeIntoMutableBuffers(g, nil, tt.buffers)
			require.NoError(t, err)
			assert.False(t, changed)
			v, _ := g.Attr("buf")
			assert.Same(t, tt.value, v)
		})
	}
}
