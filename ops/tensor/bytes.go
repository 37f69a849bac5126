package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// FromBytes builds a tensor over a copy of raw storage bytes, as a .pt2
// archive stores them: raw holds len(raw)/d.Size() elements in little-endian
// order (big-endian when bigEndian is set; one-byte types ignore it). strides
// nil means row-major strides; offset is in elements. Bool bytes are true
// when non-zero; Int4/UInt4 hold one value per byte. It fails when raw is not
// a whole number of elements or the view reaches outside the storage.
func FromBytes(d DType, shape, strides []int, offset int, raw []byte, bigEndian bool) (*Tensor, error) {
	size := d.Size()
	if !d.Valid() || size == 0 {
		return nil, fmt.Errorf("tensor: from bytes: unsupported dtype %s", d)
	}
	if len(raw)%size != 0 {
		return nil, fmt.Errorf("tensor: from bytes: %d bytes is not a whole number of %s elements (%d bytes each)", len(raw), d, size)
	}
	n := len(raw) / size
	data, err := newStorage(d, n)
	if err != nil {
		return nil, err
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		bo = binary.BigEndian
	}
	switch s := data.(type) {
	case []float32:
		for i := range s {
			s[i] = math.Float32frombits(bo.Uint32(raw[4*i:]))
		}
	case []float64:
		for i := range s {
			s[i] = math.Float64frombits(bo.Uint64(raw[8*i:]))
		}
	case []int8:
		for i := range s {
			s[i] = int8(raw[i])
		}
	case []uint8:
		copy(s, raw)
	case []int16:
		for i := range s {
			s[i] = int16(bo.Uint16(raw[2*i:]))
		}
	case []uint16:
		for i := range s {
			s[i] = bo.Uint16(raw[2*i:])
		}
	case []int32:
		for i := range s {
			s[i] = int32(bo.Uint32(raw[4*i:]))
		}
	case []uint32:
		if d == Complex32 {
			// two float16 halves, each in the given byte order, real first
			for i := range s {
				re, im := bo.Uint16(raw[4*i:]), bo.Uint16(raw[4*i+2:])
				s[i] = uint32(re) | uint32(im)<<16
			}
		} else {
			for i := range s {
				s[i] = bo.Uint32(raw[4*i:])
			}
		}
	case []int64:
		for i := range s {
			s[i] = int64(bo.Uint64(raw[8*i:]))
		}
	case []uint64:
		for i := range s {
			s[i] = bo.Uint64(raw[8*i:])
		}
	case []bool:
		for i := range s {
			s[i] = raw[i] != 0
		}
	case []complex64:
		for i := range s {
			re := math.Float32frombits(bo.Uint32(raw[8*i:]))
			im := math.Float32frombits(bo.Uint32(raw[8*i+4:]))
			s[i] = complex(re, im)
		}
	case []complex128:
		for i := range s {
			re := math.Float64frombits(bo.Uint64(raw[16*i:]))
			im := math.Float64frombits(bo.Uint64(raw[16*i+8:]))
			s[i] = complex(re, im)
		}
	default:
		return nil, fmt.Errorf("tensor: from bytes: unsupported dtype %s", d)
	}
	if err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("tensor: from bytes: %w", err)
	}
	if strides == nil {
		strides = ContiguousStrides(shape)
	}
	base := &Tensor{dtype: d, shape: []int{n}, strides: []int{1}, data: data}
	v, err := base.NewView(shape, strides, offset)
	if err != nil {
		return nil, fmt.Errorf("tensor: from bytes: %w", err)
	}
	return v, nil
}

// Bytes returns t's elements in row-major order as little-endian bytes
// (t.Numel() * t.DType().Size() bytes): the storage layout of a contiguous
// tensor in a .pt2 archive. Bool is one byte 0 or 1; Complex32 is two
// float16 halves, real first.
func (t *Tensor) Bytes() []byte {
	size := t.dtype.Size()
	out := make([]byte, t.Numel()*size)
	bo := binary.LittleEndian
	i := 0
	switch s := t.data.(type) {
	case []float32:
		t.Indices(func(p int) { bo.PutUint32(out[i:], math.Float32bits(s[p])); i += 4 })
	case []float64:
		t.Indices(func(p int) { bo.PutUint64(out[i:], math.Float64bits(s[p])); i += 8 })
	case []int8:
		t.Indices(func(p int) { out[i] = byte(s[p]); i++ })
	case []uint8:
		t.Indices(func(p int) { out[i] = s[p]; i++ })
	case []int16:
		t.Indices(func(p int) { bo.PutUint16(out[i:], uint16(s[p])); i += 2 })
	case []uint16:
		t.Indices(func(p int) { bo.PutUint16(out[i:], s[p]); i += 2 })
	case []int32:
		t.Indices(func(p int) { bo.PutUint32(out[i:], uint32(s[p])); i += 4 })
	case []uint32:
		if t.dtype == Complex32 {
			t.Indices(func(p int) {
				bo.PutUint16(out[i:], uint16(s[p]))
				bo.PutUint16(out[i+2:], uint16(s[p]>>16))
				i += 4
			})
		} else {
			t.Indices(func(p int) { bo.PutUint32(out[i:], s[p]); i += 4 })
		}
	case []int64:
		t.Indices(func(p int) { bo.PutUint64(out[i:], uint64(s[p])); i += 8 })
	case []uint64:
		t.Indices(func(p int) { bo.PutUint64(out[i:], s[p]); i += 8 })
	case []bool:
		t.Indices(func(p int) {
			if s[p] {
				out[i] = 1
			}
			i++
		})
	case []complex64:
		t.Indices(func(p int) {
			bo.PutUint32(out[i:], math.Float32bits(real(s[p])))
			bo.PutUint32(out[i+4:], math.Float32bits(imag(s[p])))
			i += 8
		})
	case []complex128:
		t.Indices(func(p int) {
			bo.PutUint64(out[i:], math.Float64bits(real(s[p])))
			bo.PutUint64(out[i+8:], math.Float64bits(imag(s[p])))
			i += 16
		})
	}
	return out
}

// Get returns the element of t at idx (one index per dimension, negative
// counted from the end) as its storage type T. It fails when T is not t's
// storage type or the index is out of range.
func Get[T Elem](t *Tensor, idx ...int) (T, error) {
	var zero T
	s, ok := t.data.([]T)
	if !ok {
		return zero, fmt.Errorf("tensor: dtype %s is stored as %T, not %T", t.dtype, t.data, []T(nil))
	}
	p, err := t.StorageIndex(idx...)
	if err != nil {
		return zero, err
	}
	return s[p], nil
}

// Set stores v at idx in t's storage (shared with every view of it). It
// fails when T is not t's storage type or the index is out of range.
func Set[T Elem](t *Tensor, v T, idx ...int) error {
	s, ok := t.data.([]T)
	if !ok {
		return fmt.Errorf("tensor: dtype %s is stored as %T, not %T", t.dtype, t.data, []T(nil))
	}
	p, err := t.StorageIndex(idx...)
	if err != nil {
		return err
	}
	s[p] = v
	return nil
}

// At returns the element at idx converted to float64 (bfloat16, float16
// decoded; bool 0 or 1). It fails for complex and float8 types and for an
// index out of range.
func (t *Tensor) At(idx ...int) (float64, error) {
	p, err := t.StorageIndex(idx...)
	if err != nil {
		return 0, err
	}
	return t.loadFloat64(p)
}

// Int64s returns every element of an integer or bool tensor as int64, in
// row-major order. It fails for other dtypes.
func (t *Tensor) Int64s() ([]int64, error) {
	if v, ok := t.fastInt64s(); ok {
		return v, nil
	}
	out := make([]int64, 0, t.Numel())
	switch s := t.data.(type) {
	case []int8:
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []uint8:
		if t.dtype != UInt8 && t.dtype != UInt4 {
			return nil, fmt.Errorf("tensor: %s is not an integer type", t.dtype)
		}
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []int16:
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []uint16:
		if t.dtype != UInt16 {
			return nil, fmt.Errorf("tensor: %s is not an integer type", t.dtype)
		}
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []int32:
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []uint32:
		if t.dtype != UInt32 {
			return nil, fmt.Errorf("tensor: %s is not an integer type", t.dtype)
		}
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []int64:
		t.Indices(func(p int) { out = append(out, s[p]) })
	case []uint64:
		t.Indices(func(p int) { out = append(out, int64(s[p])) })
	case []bool:
		t.Indices(func(p int) {
			v := int64(0)
			if s[p] {
				v = 1
			}
			out = append(out, v)
		})
	default:
		return nil, fmt.Errorf("tensor: %s is not an integer type", t.dtype)
	}
	return out, nil
}

// Equal reports whether a and b have the same dtype and shape and
// bit-identical elements: NaNs with the same bit pattern are equal, and
// -0.0 differs from +0.0. Strides and offsets do not matter.
func Equal(a, b *Tensor) bool { return Diff(a, b) == nil }

// Diff returns nil when [Equal] holds and otherwise an error describing the
// first difference: dtype, shape, or the first element (row-major) whose
// bits differ, with its index and both values in %g and hex. For tests.
func Diff(got, want *Tensor) error {
	if got.dtype != want.dtype {
		return fmt.Errorf("dtype: got %s, want %s", got.dtype, want.dtype)
	}
	if !slices.Equal(got.shape, want.shape) {
		return fmt.Errorf("shape: got %v, want %v", got.shape, want.shape)
	}
	gb, wb := got.Bytes(), want.Bytes()
	size := got.dtype.Size()
	for i := 0; i < len(gb); i += size {
		if string(gb[i:i+size]) == string(wb[i:i+size]) {
			continue
		}
		k := i / size
		idx := Unravel(k, got.shape)
		return fmt.Errorf("element %v (flat %d): got %s, want %s", idx, k, describeElem(got, gb[i:i+size]), describeElem(want, wb[i:i+size]))
	}
	return nil
}

func describeElem(t *Tensor, b []byte) string {
	var hex strings.Builder
	for i := len(b) - 1; i >= 0; i-- { // little-endian: print most significant first
		fmt.Fprintf(&hex, "%02x", b[i])
	}
	one, err := FromBytes(t.dtype, nil, nil, 0, b, false)
	if err != nil {
		return "0x" + hex.String()
	}
	if v, err := one.At(); err == nil {
		return fmt.Sprintf("%g (0x%s)", v, hex.String())
	}
	return "0x" + hex.String()
}
