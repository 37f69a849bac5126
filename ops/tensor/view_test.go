package tensor

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func iota32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}

func vals(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	d, err := Data[float32](x)
	require.NoError(t, err)
	return append([]float32(nil), d...)
}

func TestViews(t *testing.T) {
	base := F32([]int{2, 3, 4}, iota32(24)...)
	tests := []struct {
		name  string
		op    func() (*Tensor, error)
		shape []int
		want  []float32
	}{
		{"reshape -1", func() (*Tensor, error) { return base.Reshape(4, -1) }, []int{4, 6}, iota32(24)},
		{"view -1 first", func() (*Tensor, error) { return base.View(-1, 12) }, []int{2, 12}, iota32(24)},
		{"transpose", func() (*Tensor, error) { return F32([]int{2, 3}, 0, 1, 2, 3, 4, 5).Transpose(0, 1) }, []int{3, 2}, []float32{0, 3, 1, 4, 2, 5}},
		{"permute", func() (*Tensor, error) { return base.Permute(2, 0, 1) }, []int{4, 2, 3},
			[]float32{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}},
		{"select middle", func() (*Tensor, error) { return base.Select(1, -1) }, []int{2, 4}, []float32{8, 9, 10, 11, 20, 21, 22, 23}},
		{"slice step", func() (*Tensor, error) { return base.Slice(2, 1, 100, 2) }, []int{2, 3, 2}, []float32{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}},
		{"slice negative", func() (*Tensor, error) { return base.Slice(0, -1, 2, 1) }, []int{1, 3, 4}, iota32(24)[12:]},
		{"slice empty", func() (*Tensor, error) { return base.Slice(1, 2, 1, 1) }, []int{2, 0, 4}, nil},
		{"unsqueeze end", func() (*Tensor, error) { return base.Unsqueeze(-1) }, []int{2, 3, 4, 1}, iota32(24)},
		{"squeeze all", func() (*Tensor, error) { return F32([]int{1, 3, 1}, 1, 2, 3).Squeeze() }, []int{3}, []float32{1, 2, 3}},
		{"squeeze keeps non-1", func() (*Tensor, error) { return F32([]int{1, 3}, 1, 2, 3).Squeeze(1) }, []int{1, 3}, []float32{1, 2, 3}},
		{"expand", func() (*Tensor, error) { return F32([]int{3, 1}, 1, 2, 3).Expand(2, -1, 2) }, []int{2, 3, 2}, []float32{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}},
		{"flatten", func() (*Tensor, error) { return base.Flatten(1, -1) }, []int{2, 12}, iota32(24)},
		{"flatten scalar", func() (*Tensor, error) { return F32(nil, 7).Flatten(0, -1) }, []int{1}, []float32{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.op()
			require.NoError(t, err)
			assert.Equal(t, tt.shape, got.Shape())
			assert.Equal(t, tt.want, vals(t, got))
		})
	}
}

func TestViewSharesStorage(t *testing.T) {
	base := F32([]int{2, 3}, iota32(6)...)
	tr, err := base.Transpose(0, 1)
	require.NoError(t, err)
	require.NoError(t, Set[float32](tr, 42, 2, 1)) // tr[2][1] is base[1][2]
	v, err := Get[float32](base, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, float32(42), v)
	assert.False(t, tr.IsContiguous())
	e, err := F32([]int{1}, 5).Expand(3)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, e.Strides())
}

func TestViewNeedsReshapeAfterTranspose(t *testing.T) {
	tr, err := F32([]int{2, 3}, iota32(6)...).Transpose(0, 1)
	require.NoError(t, err)
	_, err = tr.View(6)
	require.ErrorIs(t, err, ErrShape)
	r, err := tr.Reshape(6)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, vals(t, r))
	// a transposed tensor can still be viewed when only size-1 dims move
	u, err := F32([]int{1, 3}, 1, 2, 3).Transpose(0, 1)
	require.NoError(t, err)
	v, err := u.View(3)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, vals(t, v))
}

func TestViewErrors(t *testing.T) {
	base := F32([]int{2, 3}, iota32(6)...)
	tests := []struct {
		name string
		op   func() (*Tensor, error)
	}{
		{"reshape count", func() (*Tensor, error) { return base.Reshape(4, 2) }},
		{"reshape two -1", func() (*Tensor, error) { return base.Reshape(-1, -1) }},
		{"reshape -2", func() (*Tensor, error) { return base.Reshape(-2, 3) }},
		{"permute repeat", func() (*Tensor, error) { return base.Permute(0, 0) }},
		{"permute short", func() (*Tensor, error) { return base.Permute(0) }},
		{"transpose range", func() (*Tensor, error) { return base.Transpose(0, 2) }},
		{"select range", func() (*Tensor, error) { return base.Select(0, 2) }},
		{"select scalar", func() (*Tensor, error) { return F32(nil, 1).Select(0, 0) }},
		{"slice step 0", func() (*Tensor, error) { return base.Slice(0, 0, 1, 0) }},
		{"expand non-1", func() (*Tensor, error) { return base.Expand(4, 3) }},
		{"expand fewer dims", func() (*Tensor, error) { return base.Expand(6) }},
		{"unsqueeze range", func() (*Tensor, error) { return base.Unsqueeze(4) }},
		{"flatten order", func() (*Tensor, error) { return base.Flatten(1, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.op()
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrShape), "error %v should wrap ErrShape", err)
		})
	}
}

func TestBytesRoundTrip(t *testing.T) {
	// float32 1.0 = 0x3f800000, -0.0 = 0x80000000
	raw := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x80}
	x, err := FromBytes(Float32, []int{2}, nil, 0, raw, false)
	require.NoError(t, err)
	d := vals(t, x)
	assert.Equal(t, uint32(0x3f800000), math.Float32bits(d[0]))
	assert.Equal(t, uint32(0x80000000), math.Float32bits(d[1]))
	assert.Equal(t, raw, x.Bytes())

	be, err := FromBytes(Int16, []int{2}, nil, 0, []byte{0x01, 0x02, 0xff, 0xfe}, true)
	require.NoError(t, err)
	iv, err := be.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{0x0102, -2}, iv)
	assert.Equal(t, []byte{0x02, 0x01, 0xfe, 0xff}, be.Bytes())

	// strided view over raw storage: column 1 of a [2, 2] int32 matrix
	st, err := FromBytes(Int32, []int{2}, []int{2}, 1, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, false)
	require.NoError(t, err)
	iv, err = st.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 4}, iv)

	_, err = FromBytes(Float32, []int{1}, nil, 0, []byte{1, 2, 3}, false)
	require.Error(t, err)
	_, err = FromBytes(Float32, []int{3}, nil, 0, raw, false)
	require.Error(t, err)
}

func TestEqualAndDiff(t *testing.T) {
	a := F32([]int{2}, 0, 1)
	negz := F32([]int{2}, float32(math.Copysign(0, -1)), 1)
	assert.True(t, Equal(a, F32([]int{2}, 0, 1)))
	assert.False(t, Equal(a, negz), "-0 and +0 differ bit for bit")
	nan := float32(math.NaN())
	assert.True(t, Equal(F32([]int{1}, nan), F32([]int{1}, nan)))
	err := Diff(a, negz)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "element [0]")
	assert.Contains(t, err.Error(), "80000000")
	assert.Error(t, Diff(a, F32([]int{1, 2}, 0, 1)))
	assert.Error(t, Diff(a, MustFromData(Float64, []int{2}, []float64{0, 1})))
}

func TestUnravel(t *testing.T) {
	// Shape [2,3,4]: element 23 is the last, 17 = 1*12 + 1*4 + 1.
	assert.Equal(t, []int{1, 2, 3}, Unravel(23, []int{2, 3, 4}))
	assert.Equal(t, []int{1, 1, 1}, Unravel(17, []int{2, 3, 4}))
	assert.Equal(t, []int{}, Unravel(0, []int{}))
	assert.Equal(t, []int{0, 0}, Unravel(0, []int{0, 5}))
}
