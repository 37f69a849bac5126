package ops

import (
	"errors"
	"math"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typed-rewrites.md 3.3: four distinct types.
func TestQuantizedEquality(t *testing.T) {
	base := mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)
	others := []struct {
		name string
		e    Element
	}{
		{"scale differs", mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.08, -3)},
		{"zero point differs", mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.02, 0)},
		{"narrowed range", mustQ(t, tensor.Int8, -127, 127, tensor.Float32, 0.02, -3)},
		{"one ulp", mustQ(t, tensor.Int8, -128, 127, tensor.Float32, math.Nextafter(0.02, 1), -3)},
		{"expressed differs", mustQ(t, tensor.Int8, -128, 127, tensor.Float16, 0.02, -3)},
		{"storage differs", mustQ(t, tensor.Int16, -128, 127, tensor.Float32, 0.02, -3)},
		{"plain i8", Scalar{tensor.Int8}},
		{"per-axis", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 0, []float64{0.02}, []int64{-3})},
	}
	for _, tt := range others {
		t.Run(tt.name, func(t *testing.T) {
			assert.False(t, base.Equal(tt.e))
			assert.False(t, tt.e.Equal(base))
			a := TensorType{Shape: []int64{1}, Elem: base}
			b := TensorType{Shape: []int64{1}, Elem: tt.e}
			assert.False(t, a.Equal(b))
			assert.NotEmpty(t, TypeDiff(a, b))
		})
	}
	assert.True(t, base.Equal(mustQ(t, tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)))
	assert.Equal(t, "!quant.uniform<i8:f32, 0.02:-3>", base.String())
	assert.Equal(t, "!quant.uniform<i8<-127:127>:f32, 0.02:-3>", others[2].e.String())
	assert.Equal(t, tensor.Int8, TensorType{Shape: []int64{1}, Elem: mustQ(t, tensor.Int4, -8, 7, tensor.Float32, 1, 0)}.DType(), "int4 is stored in int8")
}

func TestPerAxisEquality(t *testing.T) {
	a := mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2}, []int64{0, 3})
	tests := []struct {
		name string
		b    UniformQuantizedPerAxis
		eq   bool
	}{
		{"same", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2}, []int64{0, 3}), true},
		{"axis", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 0, []float64{0.1, 0.2}, []int64{0, 3}), false},
		{"one scale", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.25}, []int64{0, 3}), false},
		{"one zero point", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1, 0.2}, []int64{0, 2}), false},
		{"count", mustQA(t, tensor.Int8, -128, 127, tensor.Float32, 1, []float64{0.1}, []int64{0}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.eq, a.Equal(tt.b))
		})
	}
}

func TestQuantizedConstructors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		mk   func() error
	}{
		{"zero scale", ErrBadScale, func() error {
			_, err := NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0, 0)
			return err
		}},
		{"negative scale", ErrBadScale, func() error {
			_, err := NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, -1, 0)
			return err
		}},
		{"inf scale", ErrBadScale, func() error {
			_, err := NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, math.Inf(1), 0)
			return err
		}},
		{"zero point above range", ErrBadZeroPoint, func() error {
			_, err := NewUniformQuantized(tensor.Int8, -127, 127, tensor.Float32, 1, 128)
			return err
		}},
		{"float storage", ErrBadStorage, func() error {
			_, err := NewUniformQuantized(tensor.Float32, 0, 1, tensor.Float32, 1, 0)
			return err
		}},
		{"range outside int4", ErrBadStorage, func() error {
			_, err := NewUniformQuantized(tensor.Int4, -8, 8, tensor.Float32, 1, 0)
			return err
		}},
		{"empty range", ErrBadStorage, func() error {
			_, err := NewUniformQuantized(tensor.Int8, 3, 3, tensor.Float32, 1, 3)
			return err
		}},
		{"int expressed", ErrBadExpressed, func() error {
			_, err := NewUniformQuantized(tensor.Int8, -128, 127, tensor.Int32, 1, 0)
			return err
		}},
		{"per-axis negative axis", ErrBadAxis, func() error {
			_, err := NewUniformQuantizedPerAxis(tensor.Int8, -128, 127, tensor.Float32, -1, []float64{1}, []int64{0})
			return err
		}},
		{"per-axis count mismatch", ErrBadAxis, func() error {
			_, err := NewUniformQuantizedPerAxis(tensor.Int8, -128, 127, tensor.Float32, 0, []float64{1, 2}, []int64{0})
			return err
		}},
		{"per-axis bad channel scale", ErrBadScale, func() error {
			_, err := NewUniformQuantizedPerAxis(tensor.Int8, -128, 127, tensor.Float32, 0, []float64{1, 0}, []int64{0, 0})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.mk()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.err), "got %v", err)
		})
	}
}

func TestPromoteTypes(t *testing.T) {
	// Expectations from torch.promote_types.
	tests := []struct{ a, b, want tensor.DType }{
		{tensor.Int8, tensor.UInt8, tensor.Int16},
		{tensor.Int32, tensor.Float16, tensor.Float16},
		{tensor.Float16, tensor.BFloat16, tensor.Float32},
		{tensor.Int64, tensor.Float32, tensor.Float32},
		{tensor.Float32, tensor.Float64, tensor.Float64},
		{tensor.Bool, tensor.Int8, tensor.Int8},
		{tensor.UInt8, tensor.Int16, tensor.Int16},
		{tensor.Int32, tensor.Int64, tensor.Int64},
		{tensor.Complex64, tensor.Float64, tensor.Complex128},
	}
	for _, tt := range tests {
		t.Run(tt.a.String()+"+"+tt.b.String(), func(t *testing.T) {
			got, err := tensor.PromoteTypes(tt.a, tt.b)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			got, err = tensor.PromoteTypes(tt.b, tt.a)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "symmetric")
		})
	}
	_, err := tensor.PromoteTypes(tensor.Float8E4M3FN, tensor.Float32)
	assert.Error(t, err)
}
