package interp

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// checkRecorded refuses a call node whose recorded result type holds a
// tensor over the bound, before its kernel allocates it.
func (r *runner) checkRecorded(n *fxgraph.Node) error {
	if n.Op() != fxgraph.CallFunction && n.Op() != fxgraph.CallModule {
		return nil
	}
	limit := r.opts.MaxTensorBytes
	switch {
	case limit == 0:
		limit = DefaultMaxTensorBytes
	case limit < 0:
		return nil
	}
	return checkType(n.Type(), limit, "")
}

// checkType refuses a static tensor type, or one in a tuple type, whose
// bytes are over limit or overflow; where names the tuple element.
func checkType(t ops.Type, limit int64, where string) error {
	switch t := t.(type) {
	case ops.TensorType:
		if !t.Static() || fitsUnder(t, limit) {
			return nil
		}
		shape := make([]int, len(t.Shape))
		for i, d := range t.Shape {
			if d < 0 || int64(int(d)) != d {
				return fmt.Errorf("%w: recorded result%s %s has size %d", ErrTooLarge, where, t, d)
			}
			shape[i] = int(d)
		}
		b, err := tensor.CheckedBytes(t.DType(), shape)
		if err != nil {
			return fmt.Errorf("%w: recorded result%s %s: %v", ErrTooLarge, where, t, err)
		}
		if b > limit {
			return fmt.Errorf("%w: recorded result%s %s needs %d bytes, more than %d (Options.MaxTensorBytes)", ErrTooLarge, where, t, b, limit)
		}
	case ops.TupleType:
		for i, e := range t.Elems {
			// The element's name is formatted only when it is refused.
			if checkType(e, limit, "") != nil {
				return checkType(e, limit, fmt.Sprintf("%s[%d]", where, i))
			}
		}
	}
	return nil
}

// fitsUnder reports, without allocating, that a tensor of t's static shape
// and dtype surely takes at most limit bytes. When it cannot tell (a
// product over the int range, a bad dimension) it says false and
// checkType's slower path gives the verdict and its message.
func fitsUnder(t ops.TensorType, limit int64) bool {
	n := uint64(t.DType().Size())
	if n == 0 {
		n = 1
	}
	for _, d := range t.Shape {
		if d < 0 || int64(int(d)) != d {
			return false
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return false
		}
		n = lo
	}
	return n <= uint64(limit)
}
