package fxgraph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestVerifyTableOps verifies nodes of ops that have no result-type rule
// (PyTorch's table only): their recorded type stands, and the verifier
// checks arity, argument kinds, keyword-only arguments and that an
// in-place op returns the type of the argument it writes.
func TestVerifyTableOps(t *testing.T) {
	f := ops.Plain(tensor.Float32, 1, 8, 4, 4)
	build := func(target string, args []ops.Value, kwargs []Kwarg, typ func(x *Node) ops.Type) *Graph {
		g := New()
		x := g.Placeholder("x", f)
		n := g.CallKw(ops.MustParseTarget(target), append([]ops.Value{}, replaceX(args, x)...), kwargs)
		n.SetType(typ(x))
		g.SetOutput(n)
		return g
	}
	same := func(x *Node) ops.Type { return x.Type() }
	tests := []struct {
		name   string
		target string
		args   []ops.Value
		kwargs []Kwarg
		typ    func(x *Node) ops.Type
		check  error // nil: verifies
	}{
		{"mean over two dims of int[1]", "aten.mean.dim", []ops.Value{xRef{}, ops.List{int64(2), int64(3)}, true}, nil,
			func(*Node) ops.Type { return ops.Plain(tensor.Float32, 1, 8, 1, 1) }, nil},
		{"in-place add keeps its type", "aten.add_.Tensor", []ops.Value{xRef{}, xRef{}}, nil, same, nil},
		{"in-place hardswish", "aten.hardswish_.default", []ops.Value{xRef{}}, nil, same, nil},
		{"in-place op with another result type", "aten.mul_.Tensor", []ops.Value{xRef{}, xRef{}}, nil,
			func(*Node) ops.Type { return ops.Plain(tensor.Float32, 8, 4, 4) }, ErrTypeMismatch},
		{"no rule: recorded type stands", "aten.sinh.default", []ops.Value{xRef{}}, nil,
			func(*Node) ops.Type { return ops.Plain(tensor.Float64, 3) }, nil},
		{"too many arguments", "aten.neg.default", []ops.Value{xRef{}, xRef{}}, nil, same, ErrArity},
		{"missing argument", "aten.unflatten.int", []ops.Value{xRef{}, int64(1)}, nil, same, ErrArity},
		{"wrong kind", "aten.unflatten.int", []ops.Value{xRef{}, 1.5, ops.List{int64(2), int64(4)}}, nil, same, ErrArgKind},
		{"keyword-only passed positionally", "aten.add_.Tensor", []ops.Value{xRef{}, xRef{}, int64(2)}, nil, same, ErrArity},
		{"keyword-only by keyword", "aten.add_.Tensor", []ops.Value{xRef{}, xRef{}}, []Kwarg{{Name: "alpha", Value: int64(2)}}, same, nil},
		{"unknown keyword", "aten.add_.Tensor", []ops.Value{xRef{}, xRef{}}, []Kwarg{{Name: "beta", Value: int64(2)}}, same, ErrArity},
		{"unknown op", "foo.bar.default", []ops.Value{xRef{}}, nil, same, ErrUnknownTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.target, tt.args, tt.kwargs, tt.typ)
			err := Verify(g, VerifyOptions{Registry: ops.Default(), RequireTypes: true})
			if tt.check == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.check), "want %v, got %v", tt.check, err)
		})
	}
}

// xRef stands for the placeholder x in a test's argument list.
type xRef struct{}

func replaceX(args []ops.Value, x *Node) []ops.Value {
	out := make([]ops.Value, len(args))
	for i, a := range args {
		if _, ok := a.(xRef); ok {
			out[i] = x
		} else {
			out[i] = a
		}
	}
	return out
}
