package tensor_test

import (
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// TestStride reads each stride of a transposed view: a 2x3 tensor viewed
// as 3x2 with strides (1, 3), by hand.
func TestStride(t *testing.T) {
	base, err := tensor.FromData(tensor.Float32, []int{2, 3}, []float32{0, 1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	v, err := base.NewView([]int{3, 2}, []int{1, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 3} {
		if got := v.Stride(i); got != want {
			t.Errorf("Stride(%d) = %d, want %d", i, got, want)
		}
	}
	if got := v.Stride(-1); got != 3 {
		t.Errorf("Stride(-1) = %d, want 3", got)
	}
	if got := base.Stride(0); got != 3 {
		t.Errorf("base Stride(0) = %d, want 3", got)
	}
}
