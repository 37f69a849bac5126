package tensor

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

// shl is 1<<n computed at run time, so that the tests compile where an
// int has 32 bits (and skip there).
func shl(n uint) int { return 1 << n }

func skip32(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("sizes of 64-bit ints")
	}
}

func TestCheckedNumel(t *testing.T) {
	skip32(t)
	for _, c := range []struct {
		shape []int
		want  int
		err   bool
	}{
		{nil, 1, false},
		{[]int{2, 3}, 6, false},
		{[]int{shl(31), shl(31)}, shl(62), false},
		// 2^62 * 4 = 2^64 wraps to 0 in int arithmetic: refused
		{[]int{shl(62), 4}, 0, true},
		{[]int{shl(32), shl(32)}, 0, true},
		{[]int{math.MaxInt, 2}, 0, true},
		// a zero size makes the count zero whatever the others are
		{[]int{shl(62), 4, 0}, 0, false},
		{[]int{-1, 2}, 0, true},
	} {
		got, err := CheckedNumel(c.shape)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("CheckedNumel(%v) = %d, %v; want %d, error %v", c.shape, got, err, c.want, c.err)
		}
	}
}

func TestCheckedBytes(t *testing.T) {
	skip32(t)
	if n, err := CheckedBytes(Float32, []int{3, 5}); err != nil || n != 60 {
		t.Errorf("CheckedBytes(f32, [3 5]) = %d, %v; want 60", n, err)
	}
	// 2^62 elements fit an int, 2^64 bytes do not
	if _, err := CheckedBytes(Float32, []int{shl(62)}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckedBytes(f32, [2^62]) error = %v, want ErrTooLarge", err)
	}
}

func TestZerosOverflow(t *testing.T) {
	skip32(t)
	// [2^63-1, 32] used to reach make() and panic with "len out of range"
	for _, shape := range [][]int{{math.MaxInt, 32}, {shl(62), 4}, {shl(61)}} {
		if _, err := Zeros(Float32, shape...); err == nil {
			t.Errorf("Zeros(f32, %v) succeeded", shape)
		}
	}
}

func TestNewViewOverflow(t *testing.T) {
	skip32(t)
	base := MustZeros(Float32, 4)
	// 4 * 2^62 wraps to 0: without the check the view looked in bounds
	if _, err := base.NewView([]int{5}, []int{shl(62)}, 0); err == nil {
		t.Error("view with an overflowing stride was accepted")
	}
	if _, err := base.NewView([]int{2}, []int{1}, math.MaxInt); err == nil {
		t.Error("view at offset MaxInt was accepted")
	}
	if _, err := base.NewView([]int{2, 2}, []int{2, 1}, 0); err != nil {
		t.Errorf("valid view refused: %v", err)
	}
}

func TestShapeInts(t *testing.T) {
	if s, err := ShapeInts([]int64{2, 3}); err != nil || len(s) != 2 || s[0] != 2 || s[1] != 3 {
		t.Errorf("ShapeInts([2 3]) = %v, %v", s, err)
	}
	for _, bad := range [][]int64{{-1}, {1 << 62, 4}, {math.MaxInt64, 32}} {
		if _, err := ShapeInts(bad); err == nil {
			t.Errorf("ShapeInts(%v) succeeded", bad)
		}
	}
}
