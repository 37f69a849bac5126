package tensor

import (
	"fmt"
	"math"
	"math/bits"
)

// ErrTooLarge reports a shape whose element count or byte size does not
// fit in an int (or exceeds a caller's budget).
var ErrTooLarge = fmt.Errorf("tensor: too large")

// CheckedNumel returns the element count of shape, or an error when a size
// is negative or the product overflows an int. A shape with a zero size has
// zero elements even when the other sizes' product would overflow, as in
// PyTorch.
func CheckedNumel(shape []int) (int, error) {
	n := uint64(1)
	zero := false
	overflow := false
	for i, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("tensor: negative size %d at dim %d of shape %v", s, i, shape)
		}
		if s == 0 {
			zero = true
			continue
		}
		hi, lo := bits.Mul64(n, uint64(s))
		if hi != 0 || lo > math.MaxInt {
			overflow = true
			n = 1
			continue
		}
		n = lo
	}
	if zero {
		return 0, nil
	}
	if overflow {
		return 0, fmt.Errorf("%w: shape %v has more than %d elements", ErrTooLarge, shape, math.MaxInt)
	}
	return int(n), nil
}

// CheckedBytes returns the storage bytes of a contiguous tensor of dtype d
// and the given shape, or an error when the count overflows an int64.
func CheckedBytes(d DType, shape []int) (int64, error) {
	n, err := CheckedNumel(shape)
	if err != nil {
		return 0, err
	}
	size := d.Size()
	if size == 0 {
		size = 1
	}
	hi, lo := bits.Mul64(uint64(n), uint64(size))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, fmt.Errorf("%w: shape %v of %s needs more than %d bytes", ErrTooLarge, shape, d, int64(math.MaxInt64))
	}
	return int64(lo), nil
}

// ShapeInts converts an int64 shape (as recorded in a program) to ints,
// checking that each size is non-negative and fits an int and that the
// element count does not overflow.
func ShapeInts(shape []int64) ([]int, error) {
	out := make([]int, len(shape))
	for i, s := range shape {
		if s < 0 || int64(int(s)) != s {
			return nil, fmt.Errorf("%w: size %d at dim %d of shape %v", ErrTooLarge, s, i, shape)
		}
		out[i] = int(s)
	}
	if _, err := CheckedNumel(out); err != nil {
		return nil, err
	}
	return out, nil
}

// viewBounds returns the lowest and highest storage index a view of shape
// and strides at offset reaches (shape has no zero size), or ok false when
// the arithmetic overflows.
func viewBounds(shape, strides []int, offset int) (lo, hi int, ok bool) {
	lo, hi = offset, offset
	for i, s := range shape {
		step, o := mulInt(s-1, strides[i])
		if !o {
			return 0, 0, false
		}
		if step >= 0 {
			if hi, o = addInt(hi, step); !o {
				return 0, 0, false
			}
		} else if lo, o = addInt(lo, step); !o {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

func mulInt(a, b int) (int, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt) || (b == -1 && a == math.MinInt) {
		return 0, false
	}
	return c, true
}

func addInt(a, b int) (int, bool) {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		return 0, false
	}
	return c, true
}
