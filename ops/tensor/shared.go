package tensor

import (
	"encoding/binary"
	"unsafe"
)

// hostLittleEndian is true on little-endian machines, where a storage
// slice's memory is the little-endian bytes a .pt2 archive holds.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// FromBytesShared is FromBytes (little-endian, row-major 1-D over all of
// raw) without the copy: the tensor's storage is raw's memory, so it must
// not change while the tensor is used, and writing the tensor's storage
// writes raw. ok is false, and nothing is built, where that cannot be
// done: on a big-endian machine, when raw is not aligned to the storage's
// element size or not a whole number of elements, for Bool storage
// holding a byte other than 0 or 1, and for an unsupported dtype; the
// caller then uses FromBytes.
func FromBytesShared(d DType, raw []byte) (t *Tensor, ok bool) {
	size := d.Size()
	if !hostLittleEndian || !d.Valid() || size == 0 || len(raw)%size != 0 {
		return nil, false
	}
	n := len(raw) / size
	if n == 0 {
		return nil, false
	}
	p := unsafe.Pointer(unsafe.SliceData(raw))
	if uintptr(p)%uintptr(storageAlign(d)) != 0 {
		return nil, false
	}
	var data any
	switch d {
	case Float32:
		data = unsafe.Slice((*float32)(p), n)
	case Float64:
		data = unsafe.Slice((*float64)(p), n)
	case Float16, BFloat16, UInt16:
		data = unsafe.Slice((*uint16)(p), n)
	case Float8E4M3FN, Float8E5M2, Float8E4M3FNUZ, Float8E5M2FNUZ, Float8E8M0FNU, UInt8, UInt4:
		data = raw[:n:n]
	case Int8, Int4:
		data = unsafe.Slice((*int8)(p), n)
	case Int16:
		data = unsafe.Slice((*int16)(p), n)
	case Int32:
		data = unsafe.Slice((*int32)(p), n)
	case UInt32, Complex32:
		data = unsafe.Slice((*uint32)(p), n)
	case Int64:
		data = unsafe.Slice((*int64)(p), n)
	case UInt64:
		data = unsafe.Slice((*uint64)(p), n)
	case Bool:
		for _, b := range raw {
			if b > 1 {
				return nil, false
			}
		}
		data = unsafe.Slice((*bool)(p), n)
	case Complex64:
		data = unsafe.Slice((*complex64)(p), n)
	case Complex128:
		data = unsafe.Slice((*complex128)(p), n)
	default:
		return nil, false
	}
	return &Tensor{dtype: d, shape: []int{n}, strides: []int{1}, data: data}, true
}

// storageAlign is the alignment of d's storage element in memory.
func storageAlign(d DType) int {
	switch d {
	case Complex64:
		return 4
	case Complex128:
		return 8
	}
	return d.Size()
}

// StorageBytes returns the memory of t's whole storage (every element, not
// only t's view of it) as the little-endian bytes Bytes gives for a
// contiguous 1-D view of that storage, without copying; ok is false on a
// big-endian machine and for an empty or unsupported storage. The bytes
// are t's storage: they change when it does.
func StorageBytes(t *Tensor) (b []byte, ok bool) {
	if !hostLittleEndian {
		return nil, false
	}
	var p unsafe.Pointer
	var n, size int
	switch s := t.data.(type) {
	case []float32:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 4
	case []float64:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 8
	case []uint16:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 2
	case []uint8:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 1
	case []int8:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 1
	case []int16:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 2
	case []int32:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 4
	case []uint32:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 4
	case []int64:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 8
	case []uint64:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 8
	case []bool:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 1
	case []complex64:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 8
	case []complex128:
		p, n, size = unsafe.Pointer(unsafe.SliceData(s)), len(s), 16
	default:
		return nil, false
	}
	if n == 0 || size != t.dtype.Size() {
		return nil, false
	}
	return unsafe.Slice((*byte)(p), n*size), true
}
