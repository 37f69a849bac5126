package tensor

import (
	"fmt"
	"reflect"
	"strings"
)

// Elem is the set of Go types that store tensor elements. Float16 and
// BFloat16 are stored as their bit patterns in uint16; float8 types as
// their bit patterns in uint8; Int4 in int8 and UInt4 in uint8.
type Elem interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 |
		~int64 | ~uint64 | ~bool | ~complex64 | ~complex128
}

// Tensor is a dense, strided tensor. Its storage is a typed Go slice chosen
// by [DType.Storage] (see [Elem]); views share storage with the tensor they
// were made from.
//
// A Tensor is immutable by convention once handed to a graph or a kernel:
// kernels return new tensors and never write into their inputs. Tensors are
// not safe for concurrent mutation.
type Tensor struct {
	dtype   DType
	shape   []int
	strides []int
	offset  int
	data    any
}

// storageKind returns the Go element type used for d as a zero-length slice.
func newStorage(d DType, n int) (any, error) {
	switch d {
	case Float32:
		return make([]float32, n), nil
	case Float64:
		return make([]float64, n), nil
	case Float16, BFloat16, UInt16:
		return make([]uint16, n), nil
	case Float8E4M3FN, Float8E5M2, Float8E4M3FNUZ, Float8E5M2FNUZ, Float8E8M0FNU, UInt8, UInt4:
		return make([]uint8, n), nil
	case Int8, Int4:
		return make([]int8, n), nil
	case Int16:
		return make([]int16, n), nil
	case Int32:
		return make([]int32, n), nil
	case UInt32:
		return make([]uint32, n), nil
	case Int64:
		return make([]int64, n), nil
	case UInt64:
		return make([]uint64, n), nil
	case Bool:
		return make([]bool, n), nil
	case Complex64:
		return make([]complex64, n), nil
	case Complex128:
		return make([]complex128, n), nil
	case Complex32:
		return make([]uint32, n), nil // two float16 bit patterns
	}
	return nil, fmt.Errorf("tensor: no storage for dtype %s", d)
}

// storageTypes is the slice type newStorage makes for each dtype (nil
// for none), so that FromData checks its data's type without formatting
// or allocating.
var storageTypes = func() (t [numDTypes]reflect.Type) {
	for d := range DType(numDTypes) {
		if s, err := newStorage(d, 0); err == nil {
			t[d] = reflect.TypeOf(s)
		}
	}
	return t
}()

// Numel returns the number of elements of a shape (1 for a 0-dim shape).
func Numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Unravel turns row-major flat element index k into an index per
// dimension of shape (dimensions of size 0 get index 0).
func Unravel(k int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = k % shape[d]
			k /= shape[d]
		}
	}
	return idx
}

// ContiguousStrides returns the row-major strides of shape.
func ContiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

func checkShape(shape []int) error {
	_, err := CheckedNumel(shape)
	return err
}

// Zeros returns a contiguous tensor of the given dtype and shape filled
// with zeros. It fails for an unknown dtype, a negative size, or a shape
// whose element count or byte size overflows.
func Zeros(d DType, shape ...int) (*Tensor, error) {
	if _, err := CheckedBytes(d, shape); err != nil {
		return nil, err
	}
	data, err := newStorage(d, Numel(shape))
	if err != nil {
		return nil, err
	}
	return &Tensor{dtype: d, shape: append([]int(nil), shape...), strides: ContiguousStrides(shape), data: data}, nil
}

// MustZeros is [Zeros] for dtypes and shapes known to be valid; it panics
// otherwise. Use it in tests and with constants only.
func MustZeros(d DType, shape ...int) *Tensor {
	t, err := Zeros(d, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// FromData wraps data (not copied) as a contiguous tensor of dtype d and the
// given shape. The Go element type must be d's storage type and len(data)
// must equal the shape's element count.
func FromData[T Elem](d DType, shape []int, data []T) (*Tensor, error) {
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if int(d) >= len(storageTypes) || storageTypes[d] != reflect.TypeFor[[]T]() {
		want, err := newStorage(d, 0)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("tensor: dtype %s is stored as %T, got %T", d, want, data)
	}
	if n := Numel(shape); n != len(data) {
		return nil, fmt.Errorf("tensor: shape %v holds %d elements, got %d values", shape, n, len(data))
	}
	return &Tensor{dtype: d, shape: append([]int(nil), shape...), strides: ContiguousStrides(shape), data: data}, nil
}

// MustFromData is [FromData] that panics on error; for tests and constants.
func MustFromData[T Elem](d DType, shape []int, data []T) *Tensor {
	t, err := FromData(d, shape, data)
	if err != nil {
		panic(err)
	}
	return t
}

// F32 returns a contiguous float32 tensor holding vals with the given shape;
// it panics if the counts differ. For tests and literals.
func F32(shape []int, vals ...float32) *Tensor { return MustFromData(Float32, shape, vals) }

// NewView returns a tensor over t's storage with the given shape, strides and
// offset. It checks that every reachable element lies inside the storage.
func (t *Tensor) NewView(shape, strides []int, offset int) (*Tensor, error) {
	if len(shape) != len(strides) {
		return nil, fmt.Errorf("tensor: view has %d sizes but %d strides", len(shape), len(strides))
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	n := storageLen(t.data)
	if Numel(shape) > 0 {
		lo, hi, ok := viewBounds(shape, strides, offset)
		if !ok || lo < 0 || hi >= n {
			return nil, fmt.Errorf("tensor: view shape %v strides %v offset %d reaches outside storage of %d elements", shape, strides, offset, n)
		}
	}
	return &Tensor{dtype: t.dtype, shape: append([]int(nil), shape...), strides: append([]int(nil), strides...), offset: offset, data: t.data}, nil
}

func storageLen(data any) int {
	switch s := data.(type) {
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []int8:
		return len(s)
	case []uint8:
		return len(s)
	case []int16:
		return len(s)
	case []uint16:
		return len(s)
	case []int32:
		return len(s)
	case []uint32:
		return len(s)
	case []int64:
		return len(s)
	case []uint64:
		return len(s)
	case []bool:
		return len(s)
	case []complex64:
		return len(s)
	case []complex128:
		return len(s)
	}
	return 0
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns a copy of the sizes.
func (t *Tensor) Shape() []int { return append([]int(nil), t.shape...) }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int { return append([]int(nil), t.strides...) }

// Offset returns the storage offset of the first element, in elements.
func (t *Tensor) Offset() int { return t.offset }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return len(t.shape) }

// Size returns the size of dimension i; negative i counts from the end.
func (t *Tensor) Size(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	return t.shape[i]
}

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return Numel(t.shape) }

// Storage returns the underlying typed slice (shared, not copied).
func (t *Tensor) Storage() any { return t.data }

// IsContiguous reports whether t is row-major with no gaps and offset 0 over
// storage of exactly its element count.
func (t *Tensor) IsContiguous() bool {
	if t.offset != 0 || storageLen(t.data) != t.Numel() {
		return false
	}
	acc := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != acc {
			return false
		}
		acc *= t.shape[i]
	}
	return true
}

// Contiguous returns t itself if it is contiguous and otherwise a
// contiguous copy of its elements in row-major order.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	out, _ := Zeros(t.dtype, t.shape...)
	copyStrided(out.data, t)
	return out
}

// Clone returns a contiguous copy that shares no storage with t.
func (t *Tensor) Clone() *Tensor {
	out, _ := Zeros(t.dtype, t.shape...)
	copyStrided(out.data, t)
	return out
}

// Indices calls fn with the storage index of every element in row-major
// order.
func (t *Tensor) Indices(fn func(storageIndex int)) {
	n := t.Numel()
	if n == 0 {
		return
	}
	nd := len(t.shape)
	idx := make([]int, nd)
	pos := t.offset
	for k := 0; k < n; k++ {
		fn(pos)
		for d := nd - 1; d >= 0; d-- {
			idx[d]++
			pos += t.strides[d]
			if idx[d] < t.shape[d] {
				break
			}
			pos -= t.strides[d] * t.shape[d]
			idx[d] = 0
		}
	}
}

func copyStrided(dst any, t *Tensor) {
	switch d := dst.(type) {
	case []float32:
		gather(d, t.data.([]float32), t)
	case []float64:
		gather(d, t.data.([]float64), t)
	case []int8:
		gather(d, t.data.([]int8), t)
	case []uint8:
		gather(d, t.data.([]uint8), t)
	case []int16:
		gather(d, t.data.([]int16), t)
	case []uint16:
		gather(d, t.data.([]uint16), t)
	case []int32:
		gather(d, t.data.([]int32), t)
	case []uint32:
		gather(d, t.data.([]uint32), t)
	case []int64:
		gather(d, t.data.([]int64), t)
	case []uint64:
		gather(d, t.data.([]uint64), t)
	case []bool:
		gather(d, t.data.([]bool), t)
	case []complex64:
		gather(d, t.data.([]complex64), t)
	case []complex128:
		gather(d, t.data.([]complex128), t)
	}
}

func gather[T Elem](dst, src []T, t *Tensor) {
	i := 0
	t.Indices(func(p int) { dst[i] = src[p]; i++ })
}

// Data returns the elements of t in row-major order as a slice of the
// storage type T: the storage itself when t is contiguous (do not modify it
// unless you own t), otherwise a fresh copy. It fails when T is not t's
// storage type.
func Data[T Elem](t *Tensor) ([]T, error) {
	c := t.Contiguous()
	s, ok := c.data.([]T)
	if !ok {
		var zero []T
		return nil, fmt.Errorf("tensor: dtype %s is stored as %T, not %T", t.dtype, c.data, zero)
	}
	return s, nil
}

// Float64s returns every element converted to float64 in row-major order.
// Float16, BFloat16 and float8 bit patterns are decoded; bool is 0 or 1;
// complex types are an error.
func (t *Tensor) Float64s() ([]float64, error) {
	if v, ok := t.fastFloat64s(); ok {
		return v, nil
	}
	out := make([]float64, 0, t.Numel())
	var err error
	t.Indices(func(p int) {
		if err != nil {
			return
		}
		var v float64
		v, err = t.loadFloat64(p)
		out = append(out, v)
	})
	return out, err
}

func (t *Tensor) loadFloat64(p int) (float64, error) {
	switch s := t.data.(type) {
	case []float32:
		return float64(s[p]), nil
	case []float64:
		return s[p], nil
	case []int8:
		return float64(s[p]), nil
	case []uint8:
		switch t.dtype {
		case UInt8, UInt4:
			return float64(s[p]), nil
		}
		return 0, fmt.Errorf("tensor: reading %s values is not supported", t.dtype)
	case []int16:
		return float64(s[p]), nil
	case []uint16:
		switch t.dtype {
		case Float16:
			return float64(Float16ToFloat32(s[p])), nil
		case BFloat16:
			return float64(BFloat16ToFloat32(s[p])), nil
		}
		return float64(s[p]), nil
	case []int32:
		return float64(s[p]), nil
	case []uint32:
		if t.dtype == Complex32 {
			return 0, fmt.Errorf("tensor: reading %s values as real numbers is not supported", t.dtype)
		}
		return float64(s[p]), nil
	case []int64:
		return float64(s[p]), nil
	case []uint64:
		return float64(s[p]), nil
	case []bool:
		if s[p] {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("tensor: reading %s values as real numbers is not supported", t.dtype)
}

// String returns a short description such as "f32[2, 3]".
func (t *Tensor) String() string {
	var b strings.Builder
	b.WriteString(t.dtype.Abbrev())
	b.WriteByte('[')
	for i, s := range t.shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, s)
	}
	b.WriteByte(']')
	return b.String()
}
