package tensor

import (
	"encoding/binary"
	"reflect"
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
	st := storageTypes[d]
	p := unsafe.Pointer(unsafe.SliceData(raw))
	if st == nil || uintptr(p)%uintptr(storageAlign(d)) != 0 {
		return nil, false
	}
	if d == Bool {
		for _, b := range raw {
			if b > 1 {
				return nil, false
			}
		}
	}
	data := reflect.SliceAt(st.Elem(), p, n).Interface()
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
	v := reflect.ValueOf(t.data)
	if v.Kind() != reflect.Slice {
		return nil, false
	}
	n, size := v.Len(), int(v.Type().Elem().Size())
	if n == 0 || size != t.dtype.Size() {
		return nil, false
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n*size), true
}
