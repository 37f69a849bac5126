package tensor

import (
	"strings"
	"testing"
)

// FromData checks its data's Go type against the dtype's storage (it
// compares reflect types from a table now; it once formatted both with
// %T): a match for every storage sharing dtype, the old message on a
// mismatch, newStorage's on an unknown dtype.
func TestFromDataStorageType(t *testing.T) {
	if _, err := FromData(Float32, []int{2}, []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := FromData(Int4, []int{2}, []int8{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := FromData(BFloat16, []int{1}, []uint16{0x3f80}); err != nil {
		t.Fatal(err)
	}
	_, err := FromData(Float32, []int{2}, []int8{1, 2})
	if err == nil || err.Error() != "tensor: dtype float32 is stored as []float32, got []int8" {
		t.Errorf("float32 from []int8: %v", err)
	}
	type myFloat float32
	if _, err := FromData(Float32, []int{1}, []myFloat{1}); err == nil {
		t.Errorf("float32 from a named element type: no error")
	}
	if _, err := FromData(DType(250), []int{1}, []float32{1}); err == nil || !strings.Contains(err.Error(), "no storage for dtype") {
		t.Errorf("unknown dtype: %v", err)
	}
}
