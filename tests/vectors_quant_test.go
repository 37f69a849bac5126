package tests

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Runners for the quantize_roundtrip, choose_qparams_dynamic and
// dyn_linear_int4 vector categories (README.md in testdata/torch-vectors).
// Integer tensors and float32 values given with bits compare bit for bit;
// the float matrix products of dyn_linear_int4 use the README's tolerance.

func init() {
	registerVectorRunner("quantize_roundtrip", runQuantizeRoundtripCase)
	registerVectorRunner("choose_qparams_dynamic", runChooseQParamsDynamicCase)
	registerVectorRunner("dyn_linear_int4", runDynLinearInt4Case)
}

// qvTensor is a tensor or scalar of the vector encoding: float32 values
// come from their bits (authoritative), integers from values.
type qvTensor struct {
	DType  string            `json:"dtype"`
	Shape  []int             `json:"shape"`
	Values []json.RawMessage `json:"values"`
	Bits   json.RawMessage   `json:"bits"`
	Value  json.RawMessage   `json:"value"`
}

func (j *qvTensor) present() bool { return j != nil && (j.Values != nil || j.Bits != nil) }

// f32s returns the float32 values from bits (a list, or one scalar).
func (j *qvTensor) f32s(t *testing.T) []float32 {
	t.Helper()
	require.NotNil(t, j, "missing float32 tensor")
	var list []string
	if err := json.Unmarshal(j.Bits, &list); err != nil {
		var one string
		require.NoError(t, json.Unmarshal(j.Bits, &one), "float32 bits unreadable")
		list = []string{one}
	}
	out, err := hexFloat32s(list)
	require.NoError(t, err, "bits %q", list)
	return out
}

func (j *qvTensor) scalarF32(t *testing.T) float32 {
	t.Helper()
	v := j.f32s(t)
	require.Len(t, v, 1, "want a float32 scalar")
	return v[0]
}

func (j *qvTensor) ints(t *testing.T) []int64 {
	t.Helper()
	require.NotNil(t, j, "missing integer tensor")
	out := make([]int64, len(j.Values))
	for i, raw := range j.Values {
		v, err := strconv.ParseInt(string(raw), 10, 64)
		require.NoError(t, err, "values[%d] = %s", i, raw)
		out[i] = v
	}
	return out
}

func (j *qvTensor) shape() []int {
	if j.Shape == nil {
		return []int{}
	}
	return j.Shape
}

// tensor builds a float32 or integer tensor of the stored dtype.
func (j *qvTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	if j.DType == "float32" || j.DType == "" {
		return tensor.MustFromData(tensor.Float32, j.shape(), j.f32s(t))
	}
	d, err := tensor.ParseDType(j.DType)
	require.NoError(t, err)
	iv := j.ints(t)
	x, err := kernels.ToDType(tensor.MustFromData(tensor.Int64, j.shape(), iv), d)
	require.NoError(t, err)
	return x
}

// qvCheckF32 compares a float32 result bit for bit with an expected tensor.
func qvCheckF32(t *testing.T, what string, want *qvTensor, got *tensor.Tensor) {
	t.Helper()
	require.NotNil(t, got, "%s: no result", what)
	g, err := got.Float64s()
	require.NoError(t, err, what)
	w := want.f32s(t)
	require.Len(t, g, len(w), "%s: element count", what)
	if want.Shape != nil {
		assert.Equal(t, want.Shape, got.Shape(), "%s: shape", what)
	}
	bad := 0
	for i := range w {
		gf := float32(g[i])
		if got.DType() == tensor.Float64 && float64(gf) != g[i] {
			t.Errorf("%s[%d]: float64 %v is not a float32 value", what, i, g[i])
			continue
		}
		if math.Float32bits(gf) != math.Float32bits(w[i]) {
			if bad < 5 {
				t.Errorf("%s[%d]: got %g (%08x), want %g (%08x)", what, i, gf, math.Float32bits(gf), w[i], math.Float32bits(w[i]))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ", what, bad)
	}
}

// qvCheckInts compares an integer result exactly.
func qvCheckInts(t *testing.T, what string, want *qvTensor, got *tensor.Tensor) {
	t.Helper()
	require.NotNil(t, got, "%s: no result", what)
	g, err := got.Int64s()
	require.NoError(t, err, what)
	if want.Shape != nil {
		assert.Equal(t, want.Shape, got.Shape(), "%s: shape", what)
	}
	assert.Equal(t, want.ints(t), g, "%s: values", what)
}

// qvCheckClose compares float32 results of a float matrix product with the
// README's tolerance.
func qvCheckClose(t *testing.T, what string, want *qvTensor, got *tensor.Tensor) {
	t.Helper()
	// BLAS summation order is not fixed; README: observed max |y - y_f64acc|
	// = 7.2e-7, and atol 1e-5 plus rtol 1e-5 is ample.
	const atol, rtol = 1e-5, 1e-5
	g, err := got.Float64s()
	require.NoError(t, err, what)
	w := want.f32s(t)
	require.Len(t, g, len(w), "%s: element count", what)
	for i := range w {
		if d := math.Abs(g[i] - float64(w[i])); d > atol+rtol*math.Abs(float64(w[i])) {
			t.Errorf("%s[%d]: got %g, want %g (diff %g)", what, i, g[i], w[i], d)
		}
	}
}

// qvDType maps the vector files' integer dtype names.
func qvDType(t *testing.T, name string) tensor.DType {
	t.Helper()
	name = strings.TrimPrefix(name, "torch.")
	switch name {
	case "quint8":
		return tensor.UInt8
	case "qint8":
		return tensor.Int8
	case "qint32":
		return tensor.Int32
	}
	d, err := tensor.ParseDType(name)
	require.NoError(t, err)
	return d
}

// qvCall runs a registered op's kernel on arguments in schema order.
func qvCall(t *testing.T, target string, args ...ops.Value) ops.Value {
	t.Helper()
	tg, err := ops.ParseTarget(target)
	require.NoError(t, err)
	o, ok := tg.(ops.Overload)
	require.True(t, ok, "%s is not an overload", target)
	def, ok := ops.Default().Op(o)
	require.True(t, ok, "%s is not registered", target)
	require.NotNil(t, def.Kernel, "%s has no kernel", target)
	norm, err := def.Schema.Normalize(args, nil)
	require.NoError(t, err, "normalising %s", target)
	v, err := def.Kernel(norm)
	require.NoError(t, err, target)
	return v
}

func qvCallTensor(t *testing.T, target string, args ...ops.Value) *tensor.Tensor {
	t.Helper()
	v, ok := qvCall(t, target, args...).(*tensor.Tensor)
	require.True(t, ok, "%s: want a tensor result", target)
	return v
}

func qvCallPair(t *testing.T, target string, args ...ops.Value) (*tensor.Tensor, *tensor.Tensor) {
	t.Helper()
	v, ok := qvCall(t, target, args...).(ops.Tuple)
	require.True(t, ok, "%s: want a tuple result", target)
	require.Len(t, v, 2)
	a, ok1 := v[0].(*tensor.Tensor)
	b, ok2 := v[1].(*tensor.Tensor)
	require.True(t, ok1 && ok2, "%s: want two tensors", target)
	return a, b
}

// qvDivFormula is the division variant q_div = clamp(round_half_even(x /
// scale) + zp, qmin, qmax) in float32, written out from the README (the
// reference representation's quantize, torchao-pt2e.md 6.2 entry 9).
func qvDivFormula(x []float32, scale func(i int) float32, zp func(i int) int64, qmin, qmax int64) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		r := float32(math.RoundToEven(float64(v/scale(i)))) + float32(zp(i))
		switch {
		case r <= float32(qmin):
			out[i] = qmin
		case r >= float32(qmax):
			out[i] = qmax // float32(qmax) may round up (2**31 for int32)
		default:
			out[i] = min(max(int64(r), qmin), qmax)
		}
	}
	return out
}

type qvRoundtripCase struct {
	ID     string                     `json:"id"`
	Op     string                     `json:"op"`
	Params map[string]json.RawMessage `json:"params"`
	Input  qvTensor                   `json:"input"`
	// Expected holds only well-defined values; informative keys live
	// outside it and are never read.
	Expected map[string]*qvTensor `json:"expected"`
}

func qvParamInt(t *testing.T, p map[string]json.RawMessage, key string) int64 {
	t.Helper()
	raw, ok := p[key]
	require.True(t, ok, "params.%s missing", key)
	v, err := strconv.ParseInt(string(raw), 10, 64)
	require.NoError(t, err, "params.%s", key)
	return v
}

func qvParamTensor(t *testing.T, p map[string]json.RawMessage, key string) *qvTensor {
	t.Helper()
	raw, ok := p[key]
	require.True(t, ok, "params.%s missing", key)
	var j qvTensor
	require.NoError(t, json.Unmarshal(raw, &j), "params.%s", key)
	return &j
}

// qvQuantDType picks the storage dtype: params.int_dtype when given, else
// int8 for signed ranges and uint8 otherwise (4-bit ranges live in 8 bits).
func qvQuantDType(t *testing.T, p map[string]json.RawMessage, qmin int64) tensor.DType {
	t.Helper()
	if raw, ok := p["int_dtype"]; ok {
		var s string
		require.NoError(t, json.Unmarshal(raw, &s))
		return qvDType(t, s)
	}
	if qmin < 0 {
		return tensor.Int8
	}
	return tensor.UInt8
}

func runQuantizeRoundtripCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c qvRoundtripCase
	require.NoError(t, json.Unmarshal(raw, &c))
	x := c.Input.tensor(t)
	xs := c.Input.f32s(t)
	qmin, qmax := qvParamInt(t, c.Params, "quant_min"), qvParamInt(t, c.Params, "quant_max")
	qdt := qvQuantDType(t, c.Params, qmin)
	require.NotEmpty(t, c.Expected, "no expected values")

	var q *tensor.Tensor
	var dq func(q *tensor.Tensor) *tensor.Tensor
	var divScale func(i int) float32
	var divZP func(i int) int64
	switch c.Op {
	case "quantize_per_tensor", "fake_quantize_per_tensor_affine":
		scale := qvParamTensor(t, c.Params, "scale").scalarF32(t)
		zp := qvParamInt(t, c.Params, "zero_point")
		// the decomposed op; its 1/scale in double rounds to the same
		// float32 as torch 1.13's 1.0f / scale
		q = qvCallTensor(t, "quantized_decomposed.quantize_per_tensor.default", x, float64(scale), zp, qmin, qmax, qdt)
		dq = func(q *tensor.Tensor) *tensor.Tensor {
			return qvCallTensor(t, "quantized_decomposed.dequantize_per_tensor.default", q, float64(scale), zp, qmin, qmax, qdt)
		}
		divScale = func(int) float32 { return scale }
		divZP = func(int) int64 { return zp }
	case "quantize_per_channel", "fake_quantize_per_channel_affine":
		axis := qvParamInt(t, c.Params, "axis")
		st := qvParamTensor(t, c.Params, "scales")
		zt := qvParamTensor(t, c.Params, "zero_points")
		scales, zps := st.tensor(t), zt.tensor(t)
		q = qvCallTensor(t, "quantized_decomposed.quantize_per_channel.default", x, scales, zps, axis, qmin, qmax, qdt)
		if c.Op == "fake_quantize_per_channel_affine" {
			dq = func(*tensor.Tensor) *tensor.Tensor {
				return qvCallTensor(t, "quantized_decomposed.fake_quant_per_channel.default", x, scales, zps, axis, qmin, qmax)
			}
		} else {
			dq = func(q *tensor.Tensor) *tensor.Tensor {
				return qvCallTensor(t, "quantized_decomposed.dequantize_per_channel.default", q, scales, zps, axis, qmin, qmax, qdt)
			}
		}
		sv, zv := st.f32s(t), zt.ints(t)
		shape := x.Shape()
		ax := int(axis)
		if ax < 0 {
			ax += len(shape)
		}
		inner := tensor.Numel(shape[ax+1:])
		ch := func(i int) int { return (i / inner) % shape[ax] }
		divScale = func(i int) float32 { return sv[ch(i)] }
		divZP = func(i int) int64 { return zv[ch(i)] }
	default:
		t.Fatalf("unknown op %q", c.Op)
	}
	d := dq(q)
	for _, key := range sortedKeys(c.Expected) {
		want := c.Expected[key]
		switch key {
		case "q", "q_saturating":
			qvCheckInts(t, key, want, q)
		case "dq", "dq_saturating", "fq", "fq_saturating":
			qvCheckF32(t, key, want, d)
		case "q_div":
			got := qvDivFormula(xs, divScale, divZP, qmin, qmax)
			assert.Equal(t, want.ints(t), got, "q_div")
		default:
			t.Errorf("expected.%s: no check for this key", key)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

type qvQParamsResult struct {
	ScaleF64     string    `json:"scale_f64"`
	ScaleF64Bits string    `json:"scale_f64_bits"`
	ScaleF32     *qvTensor `json:"scale_f32"`
	ZeroPoint    *int64    `json:"zero_point"`
	Q            *qvTensor `json:"q"`
	DQ           *qvTensor `json:"dq"`
}

type qvChooseCase struct {
	Params   map[string]json.RawMessage  `json:"params"`
	Input    qvTensor                    `json:"input"`
	Expected map[string]*qvQParamsResult `json:"expected"`
}

func runChooseQParamsDynamicCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c qvChooseCase
	require.NoError(t, json.Unmarshal(raw, &c))
	x := c.Input.tensor(t)
	qmin, qmax := qvParamInt(t, c.Params, "quant_min"), qvParamInt(t, c.Params, "quant_max")
	var dtName string
	require.NoError(t, json.Unmarshal(c.Params["dtype"], &dtName))
	qdt := qvDType(t, dtName)
	eps := float64(qvParamTensor(t, c.Params, "eps").scalarF32(t))
	require.NotEmpty(t, c.Expected)
	for _, key := range sortedKeys(c.Expected) {
		want := c.Expected[key]
		t.Run(key, func(t *testing.T) {
			var op string
			switch key {
			case "affine":
				op = "quantized_decomposed.choose_qparams.tensor"
			case "symmetric":
				op = "quantized_decomposed.choose_qparams_symmetric.tensor"
			default:
				t.Fatalf("expected.%s: unknown variant", key)
			}
			s, zp := qvCallPair(t, op, x, qmin, qmax, eps, qdt)
			assert.Equal(t, tensor.Float64, s.DType(), "scale dtype")
			assert.Equal(t, []int{1}, s.Shape(), "scale shape")
			assert.Equal(t, tensor.Int64, zp.DType(), "zero point dtype")
			sv, err := s.Float64s()
			require.NoError(t, err)
			if want.ScaleF64Bits != "" {
				b, err := strconv.ParseUint(want.ScaleF64Bits, 16, 64)
				require.NoError(t, err)
				assert.Equal(t, b, math.Float64bits(sv[0]), "scale_f64 bits: got %v want %s", sv[0], want.ScaleF64)
			} else if want.ScaleF64 != "" {
				f, err := strconv.ParseFloat(want.ScaleF64, 64)
				require.NoError(t, err)
				assert.Equal(t, math.Float64bits(f), math.Float64bits(sv[0]), "scale_f64")
			}
			if want.ScaleF32.present() {
				assert.Equal(t, math.Float32bits(want.ScaleF32.scalarF32(t)), math.Float32bits(float32(sv[0])), "scale_f32")
			}
			zv, err := zp.Int64s()
			require.NoError(t, err)
			if want.ZeroPoint != nil {
				assert.Equal(t, []int64{*want.ZeroPoint}, zv, "zero_point")
			}
			q := qvCallTensor(t, "quantized_decomposed.quantize_per_tensor.tensor", x, s, zp, qmin, qmax, qdt)
			if want.Q.present() {
				qvCheckInts(t, "q", want.Q, q)
				assert.Equal(t, qvDType(t, want.Q.DType), q.DType(), "q dtype")
			}
			if want.DQ.present() {
				dq := qvCallTensor(t, "quantized_decomposed.dequantize_per_tensor.tensor", q, s, zp, qmin, qmax, qdt)
				qvCheckF32(t, "dq", want.DQ, dq)
			}
		})
	}
}

type qvQuantized struct {
	Scales     *qvTensor            `json:"scales"`
	ZeroPoints *qvTensor            `json:"zero_points"`
	Q          *qvTensor            `json:"q"`
	DQ         *qvTensor            `json:"dq"`
	BlockSize  []int                `json:"block_size"`
	Eps        *qvTensor            `json:"eps"`
	Outputs    map[string]qvOutputs `json:"outputs"`
}

type qvOutputs struct {
	Y       *qvTensor `json:"y"`
	YF64Acc *qvTensor `json:"y_f64acc"`
}

type qvRefOutput struct {
	XEps             *qvTensor `json:"x_eps"`
	WeightScaleShape []int     `json:"weight_scale_shape"`
	GroupSizeArg     []int64   `json:"group_size_arg"`
	Y                *qvTensor `json:"y"`
}

type qvDynLinearCase struct {
	Params         map[string]json.RawMessage `json:"params"`
	X              qvTensor                   `json:"x"`
	Weight         qvTensor                   `json:"weight"`
	Bias           *qvTensor                  `json:"bias"`
	WeightQ        map[string]*qvQuantized    `json:"weight_q"`
	ActivationQ    map[string]*qvQuantized    `json:"activation_q"`
	Outputs        map[string]*qvRefOutput    `json:"outputs"`
	FloatReference *qvOutputs                 `json:"float_reference"`
}

func runDynLinearInt4Case(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c qvDynLinearCase
	require.NoError(t, json.Unmarshal(raw, &c))
	x := c.X.tensor(t)
	w := c.Weight.tensor(t)
	var bias *tensor.Tensor
	if c.Bias.present() {
		bias = c.Bias.tensor(t)
	}
	g := int(qvParamInt(t, c.Params, "group_size"))
	wqmin, wqmax := qvParamInt(t, c.Params, "weight_quant_min"), qvParamInt(t, c.Params, "weight_quant_max")
	aqmin, aqmax := qvParamInt(t, c.Params, "act_quant_min"), qvParamInt(t, c.Params, "act_quant_max")
	n, k := w.Size(0), w.Size(1)
	require.Equal(t, 0, k%g, "group size %d must divide K = %d", g, k)
	wblock := []ops.Value{ops.List{int64(1), int64(g)}}[0]
	f32eps := float64(math.Nextafter32(1, 2) - 1)

	// Weights: symmetric groupwise (PerChannelMinMaxObserver on
	// W.reshape(-1, G): max(|min|, |max|) / ((qmax - qmin) / 2), eps =
	// float32 eps), quantized and dequantized with the torchao ops.
	wdq := map[string]*tensor.Tensor{}
	wScaleF32, wQF32 := (*tensor.Tensor)(nil), (*tensor.Tensor)(nil)
	require.NotEmpty(t, c.WeightQ, "weight_q missing")
	for _, name := range sortedKeys(c.WeightQ) {
		want := c.WeightQ[name]
		t.Run("weight_q/"+name, func(t *testing.T) {
			s, zp := qvCallPair(t, "torchao.choose_qparams_affine.default", w, "SYMMETRIC", wblock, tensor.Int8, wqmin, wqmax,
				f32eps, tensor.Float32, tensor.Int32, true)
			switch name {
			case "w_scale_f32":
			case "w_scale_bf16":
				var err error
				s, err = kernels.ToDType(s, tensor.BFloat16)
				require.NoError(t, err)
				s, err = kernels.ToDType(s, tensor.Float32)
				require.NoError(t, err)
			default:
				t.Fatalf("weight_q.%s: unknown variant", name)
			}
			qvCheckF32(t, "scales", want.Scales, s)
			q := qvCallTensor(t, "torchao.quantize_affine.default", w, wblock, s, zp, tensor.Int8, wqmin, wqmax)
			qvCheckInts(t, "q", want.Q, q)
			dq := qvCallTensor(t, "torchao.dequantize_affine.default", q, wblock, s, zp, tensor.Int8, wqmin, wqmax, tensor.Float32)
			qvCheckF32(t, "dq", want.DQ, dq)
			wdq[name] = dq
			if name == "w_scale_f32" {
				wScaleF32, wQF32 = s, q
			}
		})
	}

	// Activations, per token, three methods.
	require.NotEmpty(t, c.ActivationQ, "activation_q missing")
	for _, name := range sortedKeys(c.ActivationQ) {
		want := c.ActivationQ[name]
		t.Run("activation_q/"+name, func(t *testing.T) {
			var s, zp, q, dq *tensor.Tensor
			block := make(ops.List, x.Dim())
			for i := range block {
				block[i] = int64(1)
			}
			block[len(block)-1] = int64(x.Size(-1))
			switch name {
			case "minmax_observer":
				// MinMaxObserver per row: the ASYMMETRIC formula with
				// float32 eps, qparams kept as [..., 1].
				s, zp = qvCallPair(t, "torchao.choose_qparams_affine.default", x, "ASYMMETRIC", block, tensor.Int8, aqmin, aqmax,
					f32eps, tensor.Float32, tensor.Int32, true)
				q = qvCallTensor(t, "torchao.quantize_affine.default", x, block, s, zp, tensor.Int8, aqmin, aqmax)
				dq = qvCallTensor(t, "torchao.dequantize_affine.default", q, block, s, zp, tensor.Int8, aqmin, aqmax, tensor.Float32)
			case "xnnpack_formula":
				s, zp = qvCallPair(t, "quantized_decomposed.choose_qparams_per_token_asymmetric.default", x, tensor.Int8)
				q = qvCallTensor(t, "quantized_decomposed.quantize_per_token.default", x, s, zp, aqmin, aqmax, tensor.Int8)
				dq = qvCallTensor(t, "quantized_decomposed.dequantize_per_token.default", q, s, zp, aqmin, aqmax, tensor.Int8, tensor.Float32)
			case "torchao_affine":
				if want.BlockSize != nil {
					block = block[:0]
					for _, b := range want.BlockSize {
						block = append(block, int64(b))
					}
				}
				eps := f32eps
				if want.Eps.present() {
					eps = float64(want.Eps.scalarF32(t))
				}
				s, zp = qvCallPair(t, "torchao.choose_qparams_affine.default", x, "ASYMMETRIC", block, tensor.Int8, aqmin, aqmax,
					eps, tensor.Float32, tensor.Int32)
				q = qvCallTensor(t, "torchao.quantize_affine.default", x, block, s, zp, tensor.Int8, aqmin, aqmax)
				dq = qvCallTensor(t, "torchao.dequantize_affine.default", q, block, s, zp, tensor.Int8, aqmin, aqmax, tensor.Float32)
			default:
				t.Fatalf("activation_q.%s: unknown method", name)
			}
			qvCheckF32(t, "scales", want.Scales, s)
			qvCheckInts(t, "zero_points", want.ZeroPoints, zp)
			qvCheckInts(t, "q", want.Q, q)
			qvCheckF32(t, "dq", want.DQ, dq)
			for _, wname := range sortedKeys(want.Outputs) {
				out := want.Outputs[wname]
				wd, ok := wdq[wname]
				require.True(t, ok, "outputs.%s: no such weight variant", wname)
				y, err := kernels.Linear(dq, wd, bias)
				require.NoError(t, err)
				if out.Y.present() {
					qvCheckClose(t, "outputs."+wname+".y", out.Y, y)
				}
				if out.YF64Acc.present() {
					qvCheckClose(t, "outputs."+wname+".y_f64acc", out.YF64Acc, y)
				}
			}
		})
	}

	// The reference op, corrected and as the snapshot computes it.
	for _, name := range sortedKeys(c.Outputs) {
		want := c.Outputs[name]
		t.Run("outputs/"+name, func(t *testing.T) {
			require.NotNil(t, wScaleF32, "weight_q.w_scale_f32 is needed")
			shape := want.WeightScaleShape
			if shape == nil {
				shape = []int{n, k / g}
			}
			ws, err := wScaleF32.Reshape(shape...)
			require.NoError(t, err)
			gs := ops.List{int64(1), int64(g)}
			if want.GroupSizeArg != nil {
				gs = gs[:0]
				for _, v := range want.GroupSizeArg {
					gs = append(gs, v)
				}
			}
			eps := f32eps
			if want.XEps.present() {
				eps = float64(want.XEps.scalarF32(t))
			}
			zeros := tensor.MustZeros(tensor.Int32, shape...)
			var y *tensor.Tensor
			switch name {
			case "reference_dqlinear_int4":
				y = qvCallTensor(t, "torchao.reference_dqlinear_int4.default", x, eps, wQF32, ws, zeros, bias, gs)
			case "reference_dqlinear_int4_snapshot":
				var ints []int
				for _, v := range gs {
					ints = append(ints, int(v.(int64)))
				}
				y, err = kernels.ReferenceDQLinearInt4(x, eps, wQF32, ws, zeros, bias, ints, kernels.DQLinearInt4Options{LegacyScaleShape: true})
				require.NoError(t, err)
			default:
				t.Fatalf("outputs.%s: unknown output", name)
			}
			qvCheckF32(t, "y", want.Y, y)
		})
	}

	if c.FloatReference != nil && c.FloatReference.Y.present() {
		y, err := kernels.Linear(x, w, bias)
		require.NoError(t, err)
		qvCheckClose(t, "float_reference.y", c.FloatReference.Y, y)
	}
}
