package tests

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Runner for the elementwise_ops vector category (elementwise_ops.json,
// made by gen/elementwise_ops.py): each case runs one aten overload from
// the default registry on the stored inputs and compares every float32
// result bit for bit (NaN matches any NaN: PyTorch's NaN payloads and signs
// are not part of the contract). Every op is bit-exact: there is no
// tolerance. elementwise_extra.json (gen/elementwise_extra.py) adds erf,
// pow's Sleef/glibc exponents and strided inputs; elementwise_half.json
// (gen/elementwise_half.py) bfloat16 and float16 inputs.

func init() {
	registerVectorRunner("elementwise_ops", runElementwiseCase)
}

type elemCase struct {
	ID        string            `json:"id"`
	Op        string            `json:"op"`
	Args      []json.RawMessage `json:"args"`
	Kwargs    map[string]any    `json:"kwargs"`
	Inputs    []elemTensor      `json:"inputs"`
	Expected  elemTensor        `json:"expected"`
	InputView string            `json:"input_view"`
}

type elemTensor struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	BitsHex string `json:"bits_hex"`
}

func (e elemTensor) dtype() (tensor.DType, error) {
	switch e.DType {
	case "float32":
		return tensor.Float32, nil
	case "bfloat16":
		return tensor.BFloat16, nil
	case "float16":
		return tensor.Float16, nil
	}
	return tensor.Unknown, fmt.Errorf("dtype %q: want float32, bfloat16 or float16", e.DType)
}

// tensor decodes bits_hex: 8 hex digits per float32 element, 4 per
// bfloat16 or float16 element.
func (e elemTensor) tensor() (*tensor.Tensor, error) {
	dt, err := e.dtype()
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(e.BitsHex)
	w := dt.Size()
	if err != nil || len(raw)%w != 0 {
		return nil, fmt.Errorf("bits_hex: not a whole number of %d-digit words (%v)", 2*w, err)
	}
	if dt == tensor.Float32 {
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.BigEndian.Uint32(raw[4*i:]))
		}
		return tensor.FromData(dt, e.Shape, out)
	}
	out := make([]uint16, len(raw)/2)
	for i := range out {
		out[i] = binary.BigEndian.Uint16(raw[2*i:])
	}
	return tensor.FromData(dt, e.Shape, out)
}

// widened returns x's elements as float32; widening bfloat16 and float16
// is exact and keeps every bit pattern apart (NaN payloads aside).
func widened(x *tensor.Tensor) ([]float32, error) {
	if x.DType() == tensor.Float32 {
		return tensor.Data[float32](x)
	}
	h, err := tensor.Data[uint16](x)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(h))
	for i, v := range h {
		if x.DType() == tensor.BFloat16 {
			out[i] = tensor.BFloat16ToFloat32(v)
		} else {
			out[i] = tensor.Float16ToFloat32(v)
		}
	}
	return out, nil
}

// elemArg decodes one JSON argument: ints stay int64 (a Python int), other
// numbers are float64, booleans and strings as they are.
func elemArg(raw json.RawMessage) (ops.Value, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return i, nil
		}
		return x.Float64()
	case bool, string, nil:
		return x, nil
	}
	return nil, fmt.Errorf("argument %s: unsupported JSON value", raw)
}

func ulpDiff(a, b float32) int64 {
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

func runElementwiseCase(t *testing.T, _ *vectorFile, raw json.RawMessage) {
	var c elemCase
	require.NoError(t, json.Unmarshal(raw, &c))
	target, err := ops.ParseTarget(c.Op)
	require.NoError(t, err)
	o, ok := target.(ops.Overload)
	require.True(t, ok, "%s: op %q is not an overload", c.ID, c.Op)
	def, ok := ops.Default().Op(o)
	require.True(t, ok, "%s: %s is not registered", c.ID, c.Op)
	require.NotNil(t, def.Kernel, "%s: %s has no kernel", c.ID, c.Op)
	var args []ops.Value
	for i, in := range c.Inputs {
		x, err := in.tensor()
		require.NoError(t, err, "%s: input %d", c.ID, i)
		if i == 0 {
			switch c.InputView {
			case "t":
				x, err = x.Transpose(0, 1)
			case "s2":
				x, err = x.Slice(0, 0, x.Size(0), 2)
			case "":
			default:
				t.Fatalf("%s: unknown input_view %q", c.ID, c.InputView)
			}
			require.NoError(t, err)
		}
		args = append(args, x)
	}
	for _, a := range c.Args {
		v, err := elemArg(a)
		require.NoError(t, err, c.ID)
		args = append(args, v)
	}
	var kwargs []ops.Kwarg
	for k, v := range c.Kwargs {
		kwargs = append(kwargs, ops.Kwarg{Name: k, Value: v})
	}
	full, err := def.Schema.Normalize(args, kwargs)
	require.NoError(t, err, c.ID)
	out, err := def.Kernel(full)
	if c.Op == "aten.gelu.default" || c.Op == "aten.gelu_.default" {
		// The oracle that made these vectors has no AVX-512, and oneDNN
		// picks gelu's kernel by the CPU (the registry's default is the
		// zoo fixtures' avx512_core): compare with the avx2 kernel.
		approx, _ := full[1].(string)
		out, err = kernels.GeluWith(args[0].(*tensor.Tensor), approx, kernels.ConvISAAVX2)
	}
	require.NoError(t, err, c.ID)
	got, ok := out.(*tensor.Tensor)
	require.True(t, ok, "%s: result is %T", c.ID, out)
	require.Equal(t, c.Expected.Shape, got.Shape(), c.ID)
	wantT, err := c.Expected.tensor()
	require.NoError(t, err, c.ID)
	require.Equal(t, wantT.DType(), got.DType(), c.ID)
	want, err := widened(wantT)
	require.NoError(t, err)
	gotv, err := widened(got)
	require.NoError(t, err)
	var bad []string
	worst := int64(0)
	for i, w := range want {
		g := gotv[i]
		if w != w && g != g {
			continue
		}
		if math.Float32bits(g) == math.Float32bits(w) {
			continue
		}
		d := ulpDiff(g, w)
		worst = max(worst, d)
		bad = append(bad, fmt.Sprintf("[%d] in=%v got %v (%08x) want %v (%08x), %d ULP", i, elemIn(args, i), g, math.Float32bits(g), w, math.Float32bits(w), d))
	}
	n := len(bad)
	if n > 5 {
		bad = append(bad[:5], fmt.Sprintf("... %d more", n-5))
	}
	require.Empty(t, bad, "%s: %d of %d elements differ (worst %d float32 ULP after widening)", c.ID, n, len(want), worst)
}

// elemIn returns element i of the first input as the op saw it, for
// failure messages.
func elemIn(args []ops.Value, i int) any {
	if x, ok := args[0].(*tensor.Tensor); ok {
		if v, err := x.Contiguous().Float64s(); err == nil && i < len(v) {
			return v[i]
		}
	}
	return "?"
}
