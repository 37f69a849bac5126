package kernels_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func TestBinaryBroadcastAndAlpha(t *testing.T) {
	col := tensor.F32([]int{2, 1}, 10, 20)
	row := tensor.F32([]int{3}, 1, 2, 3)
	tests := []struct {
		name  string
		op    kernels.BinaryOp
		a, b  kernels.Operand
		alpha any
		shape []int
		want  []float32
	}{
		{"add broadcast", kernels.OpAdd, kernels.T(col), kernels.T(row), nil, []int{2, 3}, []float32{11, 12, 13, 21, 22, 23}},
		{"add alpha 2", kernels.OpAdd, kernels.T(col), kernels.T(row), int64(2), []int{2, 3}, []float32{12, 14, 16, 22, 24, 26}},
		{"sub alpha 0.5", kernels.OpSub, kernels.T(col), kernels.T(row), 0.5, []int{2, 3}, []float32{9.5, 9, 8.5, 19.5, 19, 18.5}},
		{"mul scalar", kernels.OpMul, kernels.T(row), kernels.S(0.5), nil, []int{3}, []float32{0.5, 1, 1.5}},
		{"div", kernels.OpDiv, kernels.T(row), kernels.T(col), nil, []int{2, 3}, []float32{0.1, 0.2, 0.3, 0.05, 0.1, 0.15}},
		{"maximum NaN", kernels.OpMaximum, kernels.T(tensor.F32([]int{3}, 1, float32(math.NaN()), -1)), kernels.T(tensor.F32([]int{3}, 2, 0, -2)), nil, []int{3}, []float32{2, float32(math.NaN()), -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kernels.Binary(tt.op, tt.a, tt.b, tt.alpha)
			require.NoError(t, err)
			assert.Equal(t, tt.shape, got.Shape())
			// Each expectation is float32(a op b) computed by hand; 0.1 etc.
			// are the float32 nearest to the decimal, which a/b rounds to.
			requireBits(t, tt.want, got)
		})
	}
}

func TestBinaryTypePromotion(t *testing.T) {
	i64 := tensor.MustFromData(tensor.Int64, []int{2}, []int64{3, -4})
	u8 := tensor.MustFromData(tensor.UInt8, []int{2}, []uint8{200, 1})
	i8 := tensor.MustFromData(tensor.Int8, []int{2}, []int8{100, -1})
	f64scalar := tensor.MustFromData(tensor.Float64, nil, []float64{0.1})
	f32 := tensor.F32([]int{2}, 1, 2)
	tests := []struct {
		name string
		a, b kernels.Operand
		op   kernels.BinaryOp
		want tensor.DType
		vals []float64
	}{
		{"int64 * float scalar is float32", kernels.T(i64), kernels.S(0.5), kernels.OpMul, tensor.Float32, []float64{1.5, -2}},
		{"int64 + int scalar stays int64", kernels.T(i64), kernels.S(int64(7)), kernels.OpAdd, tensor.Int64, []float64{10, 3}},
		{"uint8 + int8 is int16", kernels.T(u8), kernels.T(i8), kernels.OpAdd, tensor.Int16, []float64{300, 0}},
		{"int / int is float32", kernels.T(i64), kernels.S(int64(2)), kernels.OpDiv, tensor.Float32, []float64{1.5, -2}},
		{"float32 + 0-dim float64 stays float32", kernels.T(f32), kernels.T(f64scalar), kernels.OpAdd, tensor.Float32, []float64{float64(float32(1) + float32(0.1)), float64(float32(2) + float32(0.1))}},
		{"uint8 wraps", kernels.T(u8), kernels.S(int64(100)), kernels.OpAdd, tensor.UInt8, []float64{44, 101}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kernels.Binary(tt.op, tt.a, tt.b, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.DType())
			vals, err := got.Float64s()
			require.NoError(t, err)
			assert.Equal(t, tt.vals, vals)
		})
	}
}

func TestBinaryNonContiguousAndErrors(t *testing.T) {
	x := tensor.F32([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	xt, err := x.Transpose(0, 1) // [[1,4],[2,5],[3,6]]
	require.NoError(t, err)
	got, err := kernels.Binary(kernels.OpAdd, kernels.T(xt), kernels.T(tensor.F32([]int{2}, 10, 100)), nil)
	require.NoError(t, err)
	requireBits(t, []float32{11, 104, 12, 105, 13, 106}, got)

	_, err = kernels.Binary(kernels.OpAdd, kernels.T(x), kernels.T(tensor.F32([]int{2}, 1, 2)), nil)
	require.ErrorIs(t, err, tensor.ErrShape)
	assert.Contains(t, err.Error(), "[2 3] and [2]")

	empty := tensor.F32([]int{0, 3})
	got, err = kernels.Binary(kernels.OpMul, kernels.T(empty), kernels.T(tensor.F32([]int{3}, 1, 2, 3)), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 3}, got.Shape())
}

func TestActivations(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	in := tensor.F32([]int{6}, -2, negZero, 0, 1, nan, float32(math.Inf(1)))
	tests := []struct {
		name string
		f    func(*tensor.Tensor) (*tensor.Tensor, error)
		want []float32
	}{
		// relu keeps -0 and NaN, as PyTorch's clamp_min kernel does.
		{"relu", kernels.Relu, []float32{0, negZero, 0, 1, nan, float32(math.Inf(1))}},
		{"hardtanh", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Hardtanh(x, -1, 0.5) }, []float32{-1, negZero, 0, 0.5, nan, 0.5}},
		// sigmoid(1) = 0.7310585786300049; sigmoid(-2) = 0.11920292202211755.
		{"sigmoid", kernels.Sigmoid, []float32{0.11920292202211755, 0.5, 0.5, 0.7310585786300049, nan, 1}},
		// silu(x) = x*sigmoid(x): -2*0.1192... = -0.2384058440442351.
		{"silu", kernels.Silu, []float32{-0.2384058440442351, negZero, 0, 0.7310585786300049, nan, float32(math.Inf(1))}},
		// tanh(1) = 0.7615941559557649, tanh(-2) = -0.9640275800758169.
		{"tanh", kernels.Tanh, []float32{-0.9640275800758169, negZero, 0, 0.7615941559557649, nan, 1}},
		// gelu(1) = Φ(1) = 0.8413447460685429, gelu(-2) = -2Φ(-2) = -0.04550026389635842
		// (PyTorch's vectorised erf is off by 4e-6 relative there: bit-exactness is
		// checked against PyTorch's own vectors in tests/vectors_elem_test.go).
		// PyTorch 2.14 gives gelu(-0) = +0 for a contiguous input on an AVX2 machine (checked with the oracle).
		{"gelu none avx2", func(x *tensor.Tensor) (*tensor.Tensor, error) {
			return kernels.GeluWith(x, "none", kernels.ConvISAAVX2)
		}, []float32{-0.04550026389635842, 0, 0, 0.8413447460685429, nan, float32(math.Inf(1))}},
		// oneDNN's avx512_core kernel: x·(1+p(|x|) with x's sign)·0.5 gives -0·1·0.5 = -0 for -0,
		// and at +Inf the first multiply-add 0·Inf (saturated piece: p = 1 + 0·x + ...) is NaN.
		{"gelu none avx512_core", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(x, "none") }, []float32{-0.04550026389635842, negZero, 0, 0.8413447460685429, nan, nan}},
		// tanh approximation: gelu(1) = 0.8411919906082768, gelu(-2) = -0.04540230591222833.
		{"gelu tanh", func(x *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(x, "tanh") }, []float32{-0.04540230591222833, negZero, 0, 0.8411919906082768, nan, float32(math.Inf(1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f(in)
			require.NoError(t, err)
			if !strings.HasPrefix(tt.name, "gelu") {
				requireBits(t, tt.want, got)
				return
			}
			vals, err := tensor.Data[float32](got)
			require.NoError(t, err)
			for i, w := range tt.want {
				if w != w {
					assert.True(t, vals[i] != vals[i], "element %d: got %v, want NaN", i, vals[i])
					continue
				}
				if math.IsInf(float64(w), 0) || w == 0 {
					assert.Equal(t, math.Float32bits(w), math.Float32bits(vals[i]), "element %d", i)
					continue
				}
				assert.InEpsilon(t, w, vals[i], 5e-6, "element %d", i)
			}
		})
	}
	t.Run("int input is a dtype error", func(t *testing.T) {
		_, err := kernels.Relu(tensor.MustFromData(tensor.Int32, []int{1}, []int32{1}))
		require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
		assert.Contains(t, err.Error(), `"self"`)
	})
	t.Run("NaN and -0 pass through", func(t *testing.T) {
		negZero := float32(math.Copysign(0, -1))
		got, err := kernels.Relu(tensor.MustFromData(tensor.Float32, []int{4}, []float32{float32(math.NaN()), negZero, -1, 2}))
		require.NoError(t, err)
		v, err := tensor.Data[float32](got)
		require.NoError(t, err)
		var bits []uint32
		for _, f := range v {
			bits = append(bits, math.Float32bits(f))
		}
		// NaN stays NaN, -0 < 0 is false so -0 stays, -1 -> +0, 2 -> 2.
		assert.True(t, v[0] != v[0])
		assert.Equal(t, []uint32{0x80000000, 0, 0x40000000}, bits[1:])
	})
	t.Run("bfloat16 rounds back", func(t *testing.T) {
		x := tensor.MustFromData(tensor.BFloat16, []int{1}, []uint16{tensor.Float32ToBFloat16(-3)})
		got, err := kernels.Relu(x)
		require.NoError(t, err)
		assert.Equal(t, tensor.BFloat16, got.DType())
		v, _ := got.Float64s()
		assert.Equal(t, []float64{0}, v)
	})
}
