package tests

// Vector runners for the observer categories: minmax_observer,
// per_channel_observer, moving_average_observer, groupwise_int4 and
// per_token_int8. Configs are parsed field by field (dtype and qscheme
// names, reduce_range, quant_min/max, eps, ch_axis, averaging_constant),
// so held-back files with other configs run through the same code.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func init() {
	registerVectorRunner("minmax_observer", runObsMinMaxCase)
	registerVectorRunner("per_channel_observer", runObsPerChannelCase)
	registerVectorRunner("moving_average_observer", runObsMovingAverageCase)
	registerVectorRunner("groupwise_int4", runObsGroupwiseInt4Case)
	registerVectorRunner("per_token_int8", runObsPerTokenInt8Case)
}

// obsJTensor is a tensor or scalar of the vector files: float32 values
// carry authoritative "bits"; integer values are plain numbers.
type obsJTensor struct {
	DType  string        `json:"dtype"`
	Shape  []int         `json:"shape"`
	Values []json.Number `json:"values"`
	Bits   []string      `json:"bits"`
	Value  *json.Number  `json:"value"`
	Bit    string        `json:"-"`
}

func (j *obsJTensor) UnmarshalJSON(b []byte) error {
	var raw struct {
		DType  string          `json:"dtype"`
		Shape  []int           `json:"shape"`
		Values []any           `json:"values"`
		Bits   json.RawMessage `json:"bits"`
		Value  any             `json:"value"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return err
	}
	j.DType, j.Shape = raw.DType, raw.Shape
	for _, v := range raw.Values {
		n, _ := v.(json.Number) // null (non-finite) stays ""
		j.Values = append(j.Values, n)
	}
	if len(raw.Bits) > 0 {
		if raw.Bits[0] == '[' {
			if err := json.Unmarshal(raw.Bits, &j.Bits); err != nil {
				return err
			}
		} else if err := json.Unmarshal(raw.Bits, &j.Bit); err != nil {
			return err
		}
	}
	if n, ok := raw.Value.(json.Number); ok {
		j.Value = &n
	}
	return nil
}

// f32s returns the float32 values from the bits.
func (j *obsJTensor) f32s(t *testing.T) []float32 {
	t.Helper()
	bits := j.Bits
	if j.Bit != "" {
		bits = []string{j.Bit}
	}
	require.NotEmpty(t, bits, "float32 tensor without bits")
	out, err := hexFloat32s(bits)
	require.NoError(t, err, "bits %q", bits)
	return out
}

func (j *obsJTensor) ints(t *testing.T) []int64 {
	t.Helper()
	out := make([]int64, len(j.Values))
	for i, v := range j.Values {
		n, err := strconv.ParseInt(string(v), 10, 64)
		require.NoError(t, err, "integer value %d: %q", i, v)
		out[i] = n
	}
	return out
}

// tensor builds a float32 tensor of j's shape from its bits.
func (j *obsJTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	require.Contains(t, []string{"float32", ""}, j.DType, "want a float32 input tensor")
	x, err := tensor.FromData(tensor.Float32, j.Shape, j.f32s(t))
	require.NoError(t, err)
	return x
}

// obsCheckF32 compares got with want's float32 bits, element by element.
func obsCheckF32(t *testing.T, what string, want *obsJTensor, got []float32) {
	t.Helper()
	if !assert.NotNil(t, want, "%s: missing from the case", what) {
		return
	}
	w := want.f32s(t)
	if !assert.Len(t, got, len(w), "%s: element count", what) {
		return
	}
	for i := range w {
		if math.Float32bits(w[i]) != math.Float32bits(got[i]) {
			assert.Failf(t, "float32 mismatch", "%s[%d]: want %g (%08x), got %g (%08x)", what, i,
				w[i], math.Float32bits(w[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

func obsCheckInts(t *testing.T, what string, want *obsJTensor, got []int64) {
	t.Helper()
	if !assert.NotNil(t, want, "%s: missing from the case", what) {
		return
	}
	assert.Equal(t, want.ints(t), got, "%s", what)
}

// obsTensorF32 returns t's float32 elements.
func obsTensorF32(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	require.Equal(t, tensor.Float32, x.DType(), "tensor dtype")
	v, err := tensor.Data[float32](x)
	require.NoError(t, err)
	return v
}

// obsTensorInts returns an integer tensor's elements as int64.
func obsTensorInts(t *testing.T, x *tensor.Tensor) []int64 {
	t.Helper()
	f, err := x.Float64s()
	require.NoError(t, err)
	out := make([]int64, len(f))
	for i, v := range f {
		out[i] = int64(v)
	}
	return out
}

// obsCheckQParams compares a QParams result with the expected scale (float32
// bits, shape) and zero point (values, dtype, shape).
func obsCheckQParams(t *testing.T, prefix string, qp observers.QParams, scale, zp *obsJTensor) {
	t.Helper()
	obsCheckF32(t, prefix+"scale", scale, obsTensorF32(t, qp.Scale))
	if scale != nil && scale.Shape != nil {
		assert.Equal(t, scale.Shape, qp.Scale.Shape(), "%sscale shape", prefix)
	}
	if zp == nil {
		assert.Fail(t, prefix+"zero_point missing from the case")
		return
	}
	if zp.DType != "" {
		assert.Equal(t, zp.DType, qp.ZeroPoint.DType().String(), "%szero_point dtype", prefix)
	}
	if zp.Shape != nil {
		assert.Equal(t, zp.Shape, qp.ZeroPoint.Shape(), "%szero_point shape", prefix)
	}
	obsCheckInts(t, prefix+"zero_point", zp, obsTensorInts(t, qp.ZeroPoint))
}

// obsConfig is the observer config object of the vector files.
type obsConfig map[string]json.RawMessage

func (c obsConfig) has(key string) bool {
	v, ok := c[key]
	return ok && string(v) != "null"
}

// configValue decodes config entry key as a T.
func configValue[T any](t *testing.T, c obsConfig, key string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(c[key], &v), "config %q", key)
	return v
}

func (c obsConfig) str(t *testing.T, key string) string {
	t.Helper()
	return configValue[string](t, c, key)
}

func (c obsConfig) int(t *testing.T, key string) int64 {
	t.Helper()
	return configValue[int64](t, c, key)
}

func (c obsConfig) bool(t *testing.T, key string) bool {
	t.Helper()
	return configValue[bool](t, c, key)
}

// float reads a float that is either a plain number or {"value", "bits"}
// (the bits, a float32, win).
func (c obsConfig) float(t *testing.T, key string) float64 {
	t.Helper()
	raw := c[key]
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f
	}
	var j obsJTensor
	require.NoError(t, json.Unmarshal(raw, &j), "config %q", key)
	if j.Bit != "" || len(j.Bits) > 0 {
		return float64(j.f32s(t)[0])
	}
	require.NotNil(t, j.Value, "config %q has no value", key)
	f, err := j.Value.Float64()
	require.NoError(t, err)
	return f
}

// observerConfig turns a vector config into an observers.Config. The
// custom range comes from quant_min_arg/quant_max_arg when present, else
// from quant_min/quant_max when has_customized_qrange says so.
func (c obsConfig) observerConfig(t *testing.T) observers.Config {
	t.Helper()
	var oc observers.Config
	var err error
	oc.DType, err = observers.ParseDType(c.str(t, "dtype"))
	require.NoError(t, err)
	oc.QScheme, err = observers.ParseQScheme(c.str(t, "qscheme"))
	require.NoError(t, err)
	if c.has("reduce_range") {
		oc.ReduceRange = c.bool(t, "reduce_range")
	}
	_, hasArgs := c["quant_min_arg"]
	switch {
	case hasArgs:
		if c.has("quant_min_arg") {
			oc.QuantMin = observers.Int(c.int(t, "quant_min_arg"))
		}
		if c.has("quant_max_arg") {
			oc.QuantMax = observers.Int(c.int(t, "quant_max_arg"))
		}
	case c.has("has_customized_qrange") && c.bool(t, "has_customized_qrange"):
		oc.QuantMin = observers.Int(c.int(t, "quant_min"))
		oc.QuantMax = observers.Int(c.int(t, "quant_max"))
	}
	if c.has("eps") {
		oc.Eps = c.float(t, "eps")
	}
	if c.has("ch_axis") {
		oc.ChAxis = int(c.int(t, "ch_axis"))
	}
	if c.has("averaging_constant") {
		oc.AveragingConstant = c.float(t, "averaging_constant")
	}
	if c.has("is_dynamic") {
		oc.IsDynamic = c.bool(t, "is_dynamic")
	}
	return oc
}

// checkRange compares the observer's resolved range with the config's
// quant_min/quant_max (the values torch resolved).
func (c obsConfig) checkRange(t *testing.T, qr interface{ QuantRange() (int64, int64) }) {
	t.Helper()
	qmin, qmax := qr.QuantRange()
	if c.has("quant_min") && c.has("quant_max") {
		assert.Equal(t, [2]int64{c.int(t, "quant_min"), c.int(t, "quant_max")}, [2]int64{qmin, qmax}, "resolved quant range")
	}
}

type obsStats struct {
	MinVal    *obsJTensor `json:"min_val"`
	MaxVal    *obsJTensor `json:"max_val"`
	Scale     *obsJTensor `json:"scale"`
	ZeroPoint *obsJTensor `json:"zero_point"`
}

type obsCase struct {
	Config   obsConfig    `json:"config"`
	Inputs   []obsJTensor `json:"inputs"`
	Expected struct {
		obsStats
		Steps []obsStats `json:"steps"`
	} `json:"expected"`
}

func obsReadCase(t *testing.T, raw json.RawMessage) obsCase {
	t.Helper()
	var c obsCase
	require.NoError(t, json.Unmarshal(raw, &c))
	require.NotNil(t, c.Config, "case has no config")
	require.NotEmpty(t, c.Inputs, "case has no inputs")
	return c
}

func runObsMinMaxCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	c := obsReadCase(t, raw)
	o, err := observers.NewMinMaxObserver(c.Config.observerConfig(t))
	require.NoError(t, err)
	c.Config.checkRange(t, o)
	for i := range c.Inputs {
		require.NoError(t, o.Observe(c.Inputs[i].tensor(t)), "input %d", i)
	}
	lo, hi := o.MinMax()
	obsCheckF32(t, "min_val", c.Expected.MinVal, []float32{lo})
	obsCheckF32(t, "max_val", c.Expected.MaxVal, []float32{hi})
	qp, err := o.CalculateQParams()
	require.NoError(t, err)
	obsCheckQParams(t, "", qp, c.Expected.Scale, c.Expected.ZeroPoint)
}

func runObsPerChannelCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	c := obsReadCase(t, raw)
	o, err := observers.NewPerChannelMinMaxObserver(c.Config.observerConfig(t))
	require.NoError(t, err)
	c.Config.checkRange(t, o)
	for i := range c.Inputs {
		require.NoError(t, o.Observe(c.Inputs[i].tensor(t)), "input %d", i)
	}
	lo, hi := o.MinMax()
	obsCheckF32(t, "min_val", c.Expected.MinVal, lo)
	obsCheckF32(t, "max_val", c.Expected.MaxVal, hi)
	qp, err := o.CalculateQParams()
	require.NoError(t, err)
	obsCheckQParams(t, "", qp, c.Expected.Scale, c.Expected.ZeroPoint)
}

func runObsMovingAverageCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	c := obsReadCase(t, raw)
	cfg := c.Config.observerConfig(t)
	kind := "MovingAverageMinMaxObserver"
	if c.Config.has("observer") {
		kind = c.Config.str(t, "observer")
	}
	var o observers.Observer
	var err error
	var minmax func() ([]float32, []float32)
	switch kind {
	case "MovingAverageMinMaxObserver":
		m, e := observers.NewMovingAverageMinMaxObserver(cfg)
		o, err = m, e
		if e == nil {
			c.Config.checkRange(t, m)
			minmax = func() ([]float32, []float32) { lo, hi := m.MinMax(); return []float32{lo}, []float32{hi} }
		}
	case "MovingAveragePerChannelMinMaxObserver":
		m, e := observers.NewMovingAveragePerChannelMinMaxObserver(cfg)
		o, err = m, e
		if e == nil {
			c.Config.checkRange(t, m)
			minmax = m.MinMax
		}
	default:
		require.Failf(t, "unknown observer", "config observer %q", kind)
	}
	require.NoError(t, err)
	require.Len(t, c.Expected.Steps, len(c.Inputs), "one expected step per input")
	for i := range c.Inputs {
		require.NoError(t, o.Observe(c.Inputs[i].tensor(t)), "input %d", i)
		st := c.Expected.Steps[i]
		lo, hi := minmax()
		p := fmt.Sprintf("step %d: ", i)
		obsCheckF32(t, p+"min_val", st.MinVal, lo)
		obsCheckF32(t, p+"max_val", st.MaxVal, hi)
		qp, err := o.CalculateQParams()
		require.NoError(t, err, p)
		obsCheckQParams(t, p, qp, st.Scale, st.ZeroPoint)
	}
}

type obsGroupwiseCase struct {
	Params   obsConfig  `json:"params"`
	Weight   obsJTensor `json:"weight"`
	Expected struct {
		GroupMin   *obsJTensor `json:"group_min"`
		GroupMax   *obsJTensor `json:"group_max"`
		Scales     *obsJTensor `json:"scales"`
		ZeroPoints *obsJTensor `json:"zero_points"`
		Q          *obsJTensor `json:"q"`
		QDiv       *obsJTensor `json:"q_div"`
		DQ         *obsJTensor `json:"dq"`
	} `json:"expected"`
}

// runObsGroupwiseInt4Case: PerChannelMinMaxObserver(ch_axis=0) on
// W.reshape(-1, G), then quantize_per_channel / dequantize_per_channel
// (ops/kernels) on the same view.
func runObsGroupwiseInt4Case(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c obsGroupwiseCase
	require.NoError(t, json.Unmarshal(raw, &c))
	G := int(c.Params.int(t, "group_size"))
	w := c.Weight.tensor(t)
	require.Equal(t, 2, w.Dim(), "weight rank")
	require.Zero(t, w.Numel()%G, "weight numel %d not divisible by group size %d", w.Numel(), G)
	rows := w.Numel() / G
	wv := obsTensorF32(t, w)
	wg, err := tensor.FromData(tensor.Float32, []int{rows, G}, wv)
	require.NoError(t, err)

	dtypeName := "torch.qint8"
	if c.Params.has("observer_dtype") {
		dtypeName = c.Params.str(t, "observer_dtype")
	}
	dt, err := observers.ParseDType(dtypeName)
	require.NoError(t, err)
	qs, err := observers.ParseQScheme(c.Params.str(t, "qscheme"))
	require.NoError(t, err)
	qmin, qmax := c.Params.int(t, "quant_min"), c.Params.int(t, "quant_max")
	cfg := observers.Config{DType: dt, QScheme: qs, QuantMin: &qmin, QuantMax: &qmax, ChAxis: 0}
	if c.Params.has("eps") {
		cfg.Eps = c.Params.float(t, "eps")
	}
	o, err := observers.NewPerChannelMinMaxObserver(cfg)
	require.NoError(t, err)
	require.NoError(t, o.Observe(wg))
	lo, hi := o.MinMax()
	obsCheckF32(t, "group_min", c.Expected.GroupMin, lo)
	obsCheckF32(t, "group_max", c.Expected.GroupMax, hi)
	qp, err := o.CalculateQParams()
	require.NoError(t, err)
	obsCheckF32(t, "scales", c.Expected.Scales, obsTensorF32(t, qp.Scale))
	obsCheckInts(t, "zero_points", c.Expected.ZeroPoints, obsTensorInts(t, qp.ZeroPoint))

	q, err := kernels.QuantizePerChannel(wg, qp.Scale, qp.ZeroPoint, 0, qmin, qmax, tensor.Int8)
	require.NoError(t, err)
	obsCheckInts(t, "q", c.Expected.Q, obsTensorInts(t, q))
	dq, err := kernels.DequantizePerChannel(q, qp.Scale, qp.ZeroPoint, 0, qmin, qmax, tensor.Int8, tensor.Float32)
	require.NoError(t, err)
	obsCheckF32(t, "dq", c.Expected.DQ, obsTensorF32(t, dq))

	// q_div: clamp(round_half_even(x / scale) + zp, qmin, qmax), the
	// division in float32.
	if c.Expected.QDiv != nil {
		s := obsTensorF32(t, qp.Scale)
		zp := obsTensorInts(t, qp.ZeroPoint)
		qd := make([]int64, len(wv))
		for i, x := range wv {
			r := int64(math.RoundToEven(float64(x / s[i/G])))
			qd[i] = max(qmin, min(qmax, r+zp[i/G]))
		}
		obsCheckInts(t, "q_div", c.Expected.QDiv, qd)
	}
}

type obsPerTokenMethod struct {
	Scales     *obsJTensor `json:"scales"`
	ZeroPoints *obsJTensor `json:"zero_points"`
	Q          *obsJTensor `json:"q"`
	DQ         *obsJTensor `json:"dq"`
	Eps        *obsJTensor `json:"eps"`
	BlockSize  []int       `json:"block_size"`
}

type obsPerTokenCase struct {
	Params   obsConfig                    `json:"params"`
	Input    obsJTensor                   `json:"input"`
	Expected map[string]obsPerTokenMethod `json:"expected"`
}

func runObsPerTokenInt8Case(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c obsPerTokenCase
	require.NoError(t, json.Unmarshal(raw, &c))
	x := c.Input.tensor(t)
	require.GreaterOrEqual(t, x.Dim(), 1, "input rank")
	qmin, qmax := int64(-128), int64(127)
	if c.Params.has("quant_min") {
		qmin = c.Params.int(t, "quant_min")
	}
	if c.Params.has("quant_max") {
		qmax = c.Params.int(t, "quant_max")
	}
	qdt := tensor.Int8
	if c.Params.has("int_dtype") {
		var err error
		qdt, err = tensor.ParseDType(c.Params.str(t, "int_dtype"))
		require.NoError(t, err)
	}
	require.NotEmpty(t, c.Expected, "no methods under expected")
	for _, name := range []string{"minmax_observer", "xnnpack_formula", "torchao_affine"} {
		m, ok := c.Expected[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			switch name {
			case "minmax_observer":
				obsPerTokenMinMax(t, x, m, qmin, qmax, qdt)
			case "xnnpack_formula":
				obsPerTokenXNNPACK(t, x, m, qmin, qmax, qdt)
			case "torchao_affine":
				obsPerTokenAffine(t, x, m, qmin, qmax, qdt)
			}
		})
	}
	for name := range c.Expected {
		switch name {
		case "minmax_observer", "xnnpack_formula", "torchao_affine":
		default:
			t.Errorf("unknown per-token method %q", name)
		}
	}
}

// obsPerTokenMinMax: a MinMaxObserver per row of the last dim, then
// quantize_per_tensor / dequantize_per_tensor with its qparams.
func obsPerTokenMinMax(t *testing.T, x *tensor.Tensor, m obsPerTokenMethod, qmin, qmax int64, qdt tensor.DType) {
	dt, err := observers.FromTensorDType(qdt)
	require.NoError(t, err)
	if dt == observers.Int8 {
		dt = observers.QInt8
	} else if dt == observers.UInt8 {
		dt = observers.QUInt8
	}
	shape := x.Shape()
	K := shape[len(shape)-1]
	xv := obsTensorF32(t, x)
	rows := len(xv) / K
	var scales []float32
	var zps, qs []int64
	var dqs []float32
	var zpDType string
	for r := 0; r < rows; r++ {
		o, err := observers.NewMinMaxObserver(observers.Config{DType: dt, QScheme: observers.PerTensorAffine, QuantMin: &qmin, QuantMax: &qmax})
		require.NoError(t, err)
		row := tensor.MustFromData(tensor.Float32, []int{K}, xv[r*K:(r+1)*K])
		require.NoError(t, o.Observe(row))
		qp, err := o.CalculateQParams()
		require.NoError(t, err)
		s := obsTensorF32(t, qp.Scale)[0]
		zp := obsTensorInts(t, qp.ZeroPoint)[0]
		zpDType = qp.ZeroPoint.DType().String()
		scales = append(scales, s)
		zps = append(zps, zp)
		q, err := kernels.QuantizePerTensor(row, float64(s), zp, qmin, qmax, qdt)
		require.NoError(t, err)
		qs = append(qs, obsTensorInts(t, q)...)
		dq, err := kernels.DequantizePerTensor(q, float64(s), zp, qmin, qmax, qdt, tensor.Float32)
		require.NoError(t, err)
		dqs = append(dqs, obsTensorF32(t, dq)...)
	}
	obsCheckF32(t, "scales", m.Scales, scales)
	obsCheckInts(t, "zero_points", m.ZeroPoints, zps)
	if m.ZeroPoints != nil && m.ZeroPoints.DType != "" {
		assert.Equal(t, m.ZeroPoints.DType, zpDType, "zero_points dtype")
	}
	obsCheckInts(t, "q", m.Q, qs)
	obsCheckF32(t, "dq", m.DQ, dqs)
}

// obsPerTokenXNNPACK: quantized_decomposed.choose_qparams_per_token_asymmetric,
// quantize_per_token, dequantize_per_token (ops/kernels).
func obsPerTokenXNNPACK(t *testing.T, x *tensor.Tensor, m obsPerTokenMethod, qmin, qmax int64, qdt tensor.DType) {
	s, zp, err := kernels.ChooseQParamsPerTokenAsymmetric(x, qdt)
	require.NoError(t, err)
	sf, err := s.Float64s()
	require.NoError(t, err)
	s32 := make([]float32, len(sf))
	for i, v := range sf {
		s32[i] = float32(v)
		require.Equal(t, v, float64(s32[i]), "scale %d is not float32-exact", i)
	}
	obsCheckF32(t, "scales", m.Scales, s32)
	if m.Scales != nil {
		assert.Equal(t, m.Scales.Shape, s.Shape(), "scales shape")
	}
	obsCheckInts(t, "zero_points", m.ZeroPoints, obsTensorInts(t, zp))
	q, err := kernels.QuantizePerToken(x, s, zp, qmin, qmax, qdt)
	require.NoError(t, err)
	obsCheckInts(t, "q", m.Q, obsTensorInts(t, q))
	dq, err := kernels.DequantizePerToken(q, s, zp, qmin, qmax, qdt, tensor.Float32)
	require.NoError(t, err)
	obsCheckF32(t, "dq", m.DQ, obsTensorF32(t, dq))
}

// obsPerTokenAffine: torchao choose_qparams_affine (ASYMMETRIC, per-token
// block, float32 scale, int32 zero point), quantize_affine and
// dequantize_affine (ops/kernels).
func obsPerTokenAffine(t *testing.T, x *tensor.Tensor, m obsPerTokenMethod, qmin, qmax int64, qdt tensor.DType) {
	block := m.BlockSize
	if block == nil {
		var err error
		block, err = observers.BlockSize(x.Shape(), observers.PerToken{})
		require.NoError(t, err)
	}
	eps := observers.Float32Eps
	if m.Eps != nil {
		eps = float64(m.Eps.f32s(t)[0])
	}
	s, zp, err := kernels.ChooseQParamsAffine(x, kernels.Asymmetric, block, qdt, qmin, qmax,
		kernels.AffineQParamsOptions{Eps: &eps, ScaleDType: tensor.Float32, ZeroPointDType: tensor.Int32})
	require.NoError(t, err)
	obsCheckF32(t, "scales", m.Scales, obsTensorF32(t, s))
	if m.Scales != nil {
		assert.Equal(t, m.Scales.Shape, s.Shape(), "scales shape")
	}
	obsCheckInts(t, "zero_points", m.ZeroPoints, obsTensorInts(t, zp))
	q, err := kernels.QuantizeAffine(x, block, s, zp, qdt, qmin, qmax)
	require.NoError(t, err)
	obsCheckInts(t, "q", m.Q, obsTensorInts(t, q))
	dq, err := kernels.DequantizeAffine(q, block, s, zp, qdt, qmin, qmax, tensor.Float32)
	require.NoError(t, err)
	obsCheckF32(t, "dq", m.DQ, obsTensorF32(t, dq))
}
