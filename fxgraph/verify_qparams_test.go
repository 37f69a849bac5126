package fxgraph

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qpGraph parses a text graph and stores the attributes given.
func qpGraph(t *testing.T, text string, attrs map[string]*tensor.Tensor) *Graph {
	t.Helper()
	g, err := Parse(strings.NewReader(text))
	require.NoError(t, err, text)
	for k, v := range attrs {
		g.SetAttr(k, v)
	}
	return g
}

func f32s(t *testing.T, shape []int, vals ...float32) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromData(tensor.Float32, shape, vals)
	require.NoError(t, err)
	return x
}

func i64s(t *testing.T, shape []int, vals ...int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromData(tensor.Int64, shape, vals)
	require.NoError(t, err)
	return x
}

// qpCall is a text graph of one call on a float input x: f32[4, 3].
func qpCall(decls, call string) string {
	return "graph():\n" +
		"    %x : f32[4, 3] [num_users=1] = placeholder[target=x]\n" +
		decls +
		"    %q : [num_users=1] = call_function[target=torch.ops." + call + ", kwargs = {})\n" +
		"    return (q,)\n"
}

// TestVerifyQParams gives each checked op one bad qparam: Verify reports
// exactly that problem, once, against the node and the argument.
func TestVerifyQParams(t *testing.T) {
	const qpt = "quantized_decomposed.quantize_per_tensor.default](args = (%x, "
	sAttr := "    %s : [num_users=1] = get_attr[target=s]\n"
	zAttr := "    %z : [num_users=1] = get_attr[target=z]\n"
	lohiAttr := "    %lo : [num_users=1] = get_attr[target=lo]\n    %hi : [num_users=1] = get_attr[target=hi]\n"
	tests := []struct {
		name  string
		text  string
		attrs map[string]*tensor.Tensor
		field string // the argument reported
		msg   string // a part of the message
	}{
		{"zero scale", qpCall("", qpt+"0.0, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "want a finite scale > 0, got 0"},
		{"negative scale", qpCall("", qpt+"-0.5, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "got -0.5"},
		{"inf scale", qpCall("", qpt+"inf, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "got +Inf"},
		{"-inf scale", qpCall("", qpt+"-inf, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "got -Inf"},
		{"nan scale", qpCall("", qpt+"nan, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "got NaN"},
		{"zero point 300 int8", qpCall("", qpt+"0.1, 300, -128, 127, torch.int8)"), nil, "arg 2 (zero_point)", "want a zero point in int8's range [-128, 127], got 300"},
		{"zero point 2^62", qpCall("", qpt+"0.1, 4611686018427387904, -128, 127, torch.int8)"), nil, "arg 2 (zero_point)", "got 4611686018427387904"},
		{"zero point -1 uint8", qpCall("", qpt+"0.1, -1, 0, 255, torch.uint8)"), nil, "arg 2 (zero_point)", "uint8's range [0, 255], got -1"},
		{"quant_min below int8", qpCall("", qpt+"0.1, 0, -200, 127, torch.int8)"), nil, "arg 3 (quant_min)", "want a quant_min in int8's range [-128, 127], got -200"},
		{"quant_max above uint8", qpCall("", qpt+"0.1, 0, 0, 256, torch.uint8)"), nil, "arg 4 (quant_max)", "got 256"},
		{"quant_min above quant_max", qpCall("", qpt+"0.1, 0, 10, 5, torch.int8)"), nil, "arg 3 (quant_min)", "want quant_min <= quant_max (5), got 10"},
		{"dequantize kwarg-free negative scale", qpCall("",
			"quantized_decomposed.dequantize_per_tensor.default](args = (%x, -1.0, 0, -128, 127, torch.int8)"), nil, "arg 1 (scale)", "got -1"},
		{".tensor scale from get_attr", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_tensor.tensor](args = (%x, %s, %z, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, nil, -0.25), "z": i64s(t, nil, 0)}, "arg 1 (scale)", `want finite scales > 0, got -0.25 (get_attr "s")`},
		{".tensor zero point from get_attr", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_tensor.tensor](args = (%x, %s, %z, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, nil, 0.25), "z": i64s(t, nil, 300)}, "arg 2 (zero_point)", `zero points in int8's range [-128, 127], got 300 (get_attr "z")`},
		{".tensor2 quant_min from get_attr", qpCall(sAttr+zAttr+lohiAttr,
			"quantized_decomposed.quantize_per_tensor.tensor2](args = (%x, %s, %z, %lo, %hi, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, nil, 0.25), "z": i64s(t, nil, 0), "lo": i64s(t, nil, -300), "hi": i64s(t, nil, 127)},
			"arg 3 (quant_min)", `got -300 (get_attr "lo")`},
		{".tensor2 quant_max two elements", qpCall(sAttr+zAttr+lohiAttr,
			"quantized_decomposed.dequantize_per_tensor.tensor2](args = (%x, %s, %z, %lo, %hi, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, nil, 0.25), "z": i64s(t, nil, 0), "lo": i64s(t, nil, -128), "hi": i64s(t, []int{2}, 127, 127)},
			"arg 4 (quant_max)", "want one number, got 2 elements"},
		{"per_channel axis beyond rank", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_channel.default](args = (%x, %s, %z, 2, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4}, 1, 1, 1, 1), "z": i64s(t, []int{4}, 0, 0, 0, 0)}, "arg 3 (axis)", "want an axis in [0, 2) (the input's rank), got 2"},
		{"per_channel negative axis", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_channel.default](args = (%x, %s, %z, -1, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{3}, 1, 1, 1), "z": i64s(t, []int{3}, 0, 0, 0)}, "arg 3 (axis)", "got -1"},
		{"per_channel scales length", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_channel.default](args = (%x, %s, %z, 0, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{3}, 1, 1, 1), "z": i64s(t, []int{4}, 0, 0, 0, 0)}, "arg 1 (scales)", "want [4] (the input's size along axis 0), got [3]"},
		{"per_channel NaN scale element", qpCall(sAttr+zAttr,
			"quantized_decomposed.dequantize_per_channel.default](args = (%x, %s, %z, 1, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{3}, 1, float32(math.NaN()), 0), "z": i64s(t, []int{3}, 0, 0, 0)},
			"arg 1 (scales)", `got element 1 = NaN (2 of 3 elements bad) (get_attr "s")`},
		{"per_channel zero point element", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_channel.default](args = (%x, %s, %z, 1, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{3}, 1, 1, 1), "z": i64s(t, []int{3}, 0, 0, 200)}, "arg 2 (zero_points)", "got element 2 = 200"},
		{"per_token zero scale", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_token.default](args = (%x, %s, %z, -128, 127, torch.int8)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4, 1}, 1, 0, 1, 1), "z": i64s(t, []int{4, 1}, 0, 0, 0, 0)}, "arg 1 (scales)", "got element 1 = 0"},
		{"per_channel_group group_size 0", qpCall(sAttr+zAttr,
			"quantized_decomposed.quantize_per_channel_group.default](args = (%x, %s, %z, -8, 7, torch.int8, 0)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4, 1}, 1, 1, 1, 1), "z": i64s(t, []int{4, 1}, 0, 0, 0, 0)}, "arg 6 (group_size)", "want a group_size > 0, got 0"},
		{"choose_qparams bounds", qpCall("",
			"quantized_decomposed.choose_qparams.tensor](args = (%x, 127, -128, 1e-5, torch.int8)"), nil, "arg 1 (quant_min)", "want quant_min <= quant_max (-128), got 127"},
		{"choose_qparams eps", qpCall("",
			"quantized_decomposed.choose_qparams_symmetric.tensor](args = (%x, -128, 127, -1.0, torch.int8)"), nil, "arg 3 (eps)", "want a finite eps >= 0, got -1"},
		{"quantize_affine inf scale", qpCall(sAttr+zAttr,
			"torchao.quantize_affine.default](args = (%x, [1, 3], %s, %z, torch.int8, -128, 127)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4, 1}, 1, 1, float32(math.Inf(-1)), 1), "z": i64s(t, []int{4, 1}, 0, 0, 0, 0)}, "arg 2 (scale)", "got element 2 = -Inf"},
		{"dequantize_affine quant_min", qpCall(sAttr+zAttr,
			"torchao.dequantize_affine.default](args = (%x, [1, 3], %s, %z, torch.int8, -129, 127)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4, 1}, 1, 1, 1, 1), "z": i64s(t, []int{4, 1}, 0, 0, 0, 0)}, "arg 5 (quant_min)", "int8's range [-128, 127], got -129"},
		{"dequantize_affine float zero point", qpCall(sAttr+zAttr,
			"torchao.dequantize_affine.default](args = (%x, [1, 3], %s, %z, torch.int8, -128, 127)"),
			map[string]*tensor.Tensor{"s": f32s(t, []int{4, 1}, 1, 1, 1, 1), "z": f32s(t, []int{4, 1}, 0, float32(math.Inf(1)), 0, 0)}, "arg 3 (zero_point)", "want finite zero points, got element 1 = +Inf"},
		{"choose_qparams_affine bounds", qpCall("",
			"torchao.choose_qparams_affine.default](args = (%x, 'ASYMMETRIC', [1, 3], torch.uint8, 0, 300)"), nil, "arg 5 (quant_max)", "uint8's range [0, 255], got 300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := qpGraph(t, tt.text, tt.attrs)
			problems := VerifyErrors(Verify(g, VerifyOptions{}))
			require.Len(t, problems, 1, "%v", problems)
			p := problems[0]
			assert.ErrorIs(t, p, ErrQParam)
			assert.Equal(t, "q", p.Node)
			assert.Equal(t, tt.field, p.Field)
			assert.Contains(t, p.Error(), tt.msg)
		})
	}
}

// TestVerifyQParamsGood: well-formed qparams of each kind pass, so the
// checks above fail for the reason they name.
func TestVerifyQParamsGood(t *testing.T) {
	const qpt = "quantized_decomposed.quantize_per_tensor.default](args = (%x, "
	for _, text := range []string{
		qpCall("", qpt+"0.1, 0, -128, 127, torch.int8)"),
		qpCall("", qpt+"0.1, 255, 0, 255, torch.uint8)"),
		qpCall("", qpt+"1e-30, -128, -128, 127, torch.int8)"),
		qpCall("", "quantized_decomposed.choose_qparams.tensor](args = (%x, -128, 127, 1.1920928955078125e-07, torch.int8)"),
	} {
		g := qpGraph(t, text, nil)
		assert.NoError(t, Verify(g, VerifyOptions{}), text)
	}
	g := qpGraph(t, qpCall("    %s : [num_users=1] = get_attr[target=s]\n    %z : [num_users=1] = get_attr[target=z]\n",
		"quantized_decomposed.quantize_per_channel.default](args = (%x, %s, %z, 1, -128, 127, torch.int8)"),
		map[string]*tensor.Tensor{"s": f32s(t, []int{3}, 0.5, 1e-8, 3), "z": i64s(t, []int{3}, -128, 0, 127)})
	assert.NoError(t, Verify(g, VerifyOptions{}))
}

// TestVerifyQParamsLifted: a scale read from a lifted placeholder is
// checked by value when VerifyOptions.Lifted gives it, and not otherwise
// (a placeholder is a runtime input).
func TestVerifyQParamsLifted(t *testing.T) {
	text := "graph():\n" +
		"    %b__scale_0 : [num_users=1] = placeholder[target=b__scale_0]\n" +
		"    %b__zero_point_0 : [num_users=1] = placeholder[target=b__zero_point_0]\n" +
		"    %x : f32[4, 3] [num_users=1] = placeholder[target=x]\n" +
		"    %q : [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_channel.default](args = (%x, %b__scale_0, %b__zero_point_0, 1, -128, 127, torch.int8), kwargs = {})\n" +
		"    return (q,)\n"
	g := qpGraph(t, text, nil)
	require.NoError(t, Verify(g, VerifyOptions{}))
	lifted := map[string]*tensor.Tensor{
		"b__scale_0":      f32s(t, []int{3}, 1, -2, 1),
		"b__zero_point_0": i64s(t, []int{3}, 0, 0, 0),
	}
	problems := VerifyErrors(Verify(g, VerifyOptions{Lifted: lifted}))
	require.Len(t, problems, 1)
	assert.Equal(t, `node "q" (quantized_decomposed.quantize_per_channel.default): arg 1 (scales): want finite scales > 0, got element 1 = -2 (lifted input "b__scale_0")`, problems[0].Error())
}

// TestVerifyQParamReportedOnce: with types recorded, the result-type rule
// would reject the same quant_min; the problem is reported once, as a
// qparam problem, and several bad qparams of one node each once.
func TestVerifyQParamReportedOnce(t *testing.T) {
	text := "graph():\n" +
		"    %x : f32[4, 3] [num_users=1] = placeholder[target=x]\n" +
		"    %q : i8[4, 3] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.default](args = (%x, -inf, 300, -200, 127, torch.int8), kwargs = {})\n" +
		"    return (q,)\n"
	g := qpGraph(t, text, nil)
	problems := VerifyErrors(Verify(g, VerifyOptions{RequireTypes: true}))
	var fields []string
	for _, p := range problems {
		assert.True(t, errors.Is(p, ErrQParam), "%v", p)
		fields = append(fields, p.Field)
	}
	assert.Equal(t, []string{"arg 1 (scale)", "arg 2 (zero_point)", "arg 3 (quant_min)"}, fields)
}

// TestVerifyQParamsManySchemas: one graph calls eleven q/dq ops (more than
// the verifier's layout cache holds), each with one bad qparam, and then
// the first ones again: every node's problem is found at its argument.
func TestVerifyQParamsManySchemas(t *testing.T) {
	calls := []struct{ call, field string }{
		{"quantized_decomposed.quantize_per_tensor.default](args = (%x, -1.0, 0, -128, 127, torch.int8)", "arg 1 (scale)"},
		{"quantized_decomposed.dequantize_per_tensor.default](args = (%x, 0.1, 300, -128, 127, torch.int8)", "arg 2 (zero_point)"},
		{"quantized_decomposed.choose_qparams.tensor](args = (%x, 5, 4, 1e-5, torch.int8)", "arg 1 (quant_min)"},
		{"quantized_decomposed.choose_qparams_symmetric.tensor](args = (%x, -128, 127, nan, torch.int8)", "arg 3 (eps)"},
		{"torchao.choose_qparams_affine.default](args = (%x, 'ASYMMETRIC', [1, 3], torch.int8, -129, 127)", "arg 4 (quant_min)"},
		{"quantized_decomposed.quantize_per_tensor.tensor](args = (%x, %s, %zbad, -128, 127, torch.int8)", "arg 2 (zero_point)"},
		{"quantized_decomposed.dequantize_per_tensor.tensor](args = (%x, %sbad, %z, -128, 127, torch.int8)", "arg 1 (scale)"},
		{"quantized_decomposed.quantize_per_channel.default](args = (%x, %sc, %zc, 5, -128, 127, torch.int8)", "arg 3 (axis)"},
		{"quantized_decomposed.dequantize_per_channel.default](args = (%x, %sc, %zc, 1, -128, 300, torch.int8)", "arg 5 (quant_max)"},
		{"torchao.quantize_affine.default](args = (%x, [1, 3], %sbad, %z, torch.int8)", "arg 2 (scale)"},
		{"torchao.dequantize_affine.default](args = (%x, [1, 3], %s, %zbad, torch.int8)", "arg 3 (zero_point)"},
	}
	calls = append(calls, calls[:3]...)
	var b strings.Builder
	b.WriteString("graph():\n")
	users := map[string]int{"x": len(calls)}
	for _, c := range calls {
		for _, ref := range []string{"%sbad,", "%s,", "%zbad,", "%z,", "%sc,", "%zc,"} {
			if strings.Contains(c.call, ref) {
				users[strings.TrimSuffix(ref[1:], ",")]++
			}
		}
	}
	fmt.Fprintf(&b, "    %%x : f32[4, 3] [num_users=%d] = placeholder[target=x]\n", users["x"])
	for _, a := range []string{"s", "sbad", "z", "zbad", "sc", "zc"} {
		fmt.Fprintf(&b, "    %%%s : [num_users=%d] = get_attr[target=%s]\n", a, users[a], a)
	}
	var names []string
	for i, c := range calls {
		name := fmt.Sprintf("q%d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "    %%%s : [num_users=1] = call_function[target=torch.ops.%s, kwargs = {})\n", name, c.call)
	}
	fmt.Fprintf(&b, "    return (%s,)\n", strings.Join(names, ", "))
	g := qpGraph(t, b.String(), map[string]*tensor.Tensor{
		"s": f32s(t, nil, 0.5), "sbad": f32s(t, nil, float32(math.Inf(1))),
		"z": i64s(t, nil, 0), "zbad": i64s(t, nil, -129),
		"sc": f32s(t, []int{3}, 1, 1, 1), "zc": i64s(t, []int{3}, 0, 0, 0),
	})
	problems := VerifyErrors(Verify(g, VerifyOptions{}))
	require.Len(t, problems, len(calls), "%v", problems)
	for i, p := range problems {
		assert.Equal(t, names[i], p.Node, "%v", p)
		assert.Equal(t, calls[i].field, p.Field, "%v", p)
		assert.ErrorIs(t, p, ErrQParam)
	}
}
