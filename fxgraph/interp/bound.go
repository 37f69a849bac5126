package interp

import (
	"fmt"

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

func checkType(t ops.Type, limit int64, where string) error {
	switch t := t.(type) {
	case ops.TensorType:
		if !t.Static() {
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
			if err := checkType(e, limit, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
