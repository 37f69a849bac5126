package fxgraph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// irModule is a call_module attribute for tests.
type irModule struct{}

func (irModule) Forward(args []ops.Value) (ops.Value, error) { return nil, nil }

// irValid builds a well-typed graph that uses every feature the verifier
// checks: placeholder, get_attr, call_module, call_function with schema
// arguments and kwargs, a quantized result type and a tuple output.
//
//	x : f32[2, 3]; w : f32[4, 3] (get_attr)
//	linear = linear(x, w)                 -> f32[2, 4]
//	relu   = relu(linear)                 -> f32[2, 4]
//	q      = quantize_per_tensor(relu, 0.5, 3, -128, 127, int8)
//	                                      -> !quant.uniform<i8:f32, 0.5:3>[2, 4]
//	add    = add(relu, relu, alpha=2)     -> f32[2, 4]
//	obs    = call_module obs(add)
//	return (add, q, obs)
func irValid(t *testing.T) (*Graph, map[string]*Node) {
	t.Helper()
	g := New()
	f24 := ops.Plain(tensor.Float32, 2, 4)
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 2, 3))
	g.SetAttr("w", "weights")
	g.SetAttr("obs", irModule{})
	w := g.GetAttr("w", ops.Plain(tensor.Float32, 4, 3))
	lin := g.Call(irLinear, x, w)
	lin.SetType(f24)
	relu := g.Call(irRelu, lin)
	relu.SetType(f24)
	qe, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.5, 3)
	require.NoError(t, err)
	q := g.Call(irQuant, relu, 0.5, int64(3), int64(-128), int64(127), tensor.Int8)
	q.SetType(ops.TensorType{Shape: []int64{2, 4}, Elem: qe})
	add := g.CallKw(irAdd, []ops.Value{relu, relu}, []Kwarg{{Name: "alpha", Value: int64(2)}})
	add.SetType(f24)
	obs := g.CallModule("obs", add)
	out := g.SetOutput(ops.Tuple{add, q, obs})
	nodes := map[string]*Node{"x": x, "w": w, "linear": lin, "relu": relu, "q": q, "add": add, "obs": obs, "output": out}
	require.NoError(t, Verify(g, VerifyOptions{Registry: irRegistry(t), RequireTypes: true}), "the base graph is valid")
	return g, nodes
}

func TestVerifyValidGraphs(t *testing.T) {
	g, _ := irValid(t)
	require.NoError(t, Verify(g, irOpts(t)))
	c, _ := irChain()
	require.NoError(t, Verify(c, irOpts(t)))
}

// TestVerifyRules corrupts the valid graph in exactly one way per case and
// checks that the verifier names the problem's class and node, and reports
// nothing of another class (except the listed companions).
func TestVerifyRules(t *testing.T) {
	type nodes = map[string]*Node
	tests := []struct {
		name    string
		corrupt func(g *Graph, n nodes)
		opts    func(o *VerifyOptions)
		check   error
		node    string // "" for graph-level problems
		also    []error
		msg     string // substring of the problem's message
	}{
		// structure
		{name: "length disagrees with list", check: ErrNodeList,
			corrupt: func(g *Graph, n nodes) { g.length++ }, msg: "length"},
		{name: "broken prev link", check: ErrNodeList, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].prev = n["x"] }, msg: "prev: want %linear_default, got %x"},
		{name: "erased node still linked", check: ErrNodeList, node: "obs", also: []error{ErrDangling},
			corrupt: func(g *Graph, n nodes) { n["obs"].erased = true }},
		{name: "duplicate id", check: ErrNodeList, node: "relu_default", also: []error{ErrDangling, ErrUseList},
			corrupt: func(g *Graph, n nodes) { n["relu"].id = n["linear"].id }},
		{name: "unknown opcode", check: ErrOpKind, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].op = 42 }, msg: "got opkind(42)"},
		{name: "call_function without target", check: ErrBadTarget, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].target = nil }},
		{name: "get_attr without target", check: ErrBadTarget, node: "w",
			corrupt: func(g *Graph, n nodes) { n["w"].targetName = "" }},
		{name: "duplicate name", check: ErrDuplicateName, node: "linear_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].name = "linear_default" }, msg: "also the name of node 2"},
		{name: "duplicate name owned by the later node", check: ErrDuplicateName, node: "linear_default",
			corrupt: func(g *Graph, n nodes) {
				n["relu"].name = "linear_default"
				g.names.used.set("linear_default", n["relu"].id+1)
			}, msg: "(aten.relu.default): name: want a unique name, got \"linear_default\", also the name of node 2"},
		{name: "name not an identifier", check: ErrBadName, node: "1relu",
			corrupt: func(g *Graph, n nodes) { n["relu"].name = "1relu"; g.names.markUsed("1relu", n["relu"].id, nil) }},
		{name: "name not reserved", check: ErrBadName, node: "fresh",
			corrupt: func(g *Graph, n nodes) { n["relu"].name = "fresh" }, msg: "not reserved"},
		{name: "reference to erased node", check: ErrDangling, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) {
				d := g.Call(irRelu, n["x"])
				_ = g.Erase(d)
				g.SetArgs(n["add"], n["relu"], d)
			}, msg: "arg 1: want a live node, got erased node %relu_default_1"},
		{name: "nil node reference", check: ErrDangling, node: "output",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["output"], ops.Tuple{n["add"], n["q"], n["obs"], (*Node)(nil)}) }, msg: "arg 0[3]: want a node, got a nil node reference"},
		{name: "reference to another graph", check: ErrForeignNode, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) {
				o := New().Placeholder("y", nil)
				g.SetKwarg(n["add"], "alpha", o)
			}, msg: "kwarg alpha: want a node of this graph, got %y of another graph"},
		{name: "use before definition", check: ErrOrder, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { _ = g.MoveBefore(n["relu"], n["x"]) }, msg: "arg 0: want a node defined before %relu_default (position 0), got %linear_default at position 3"},
		{name: "cycle", check: ErrCycle, node: "", also: []error{ErrOrder},
			opts:    func(o *VerifyOptions) { o.SkipTypes = true },
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["linear"], n["x"], n["relu"]) }, msg: "a cycle through linear_default, relu_default"},
		{name: "self reference", check: ErrCycle, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["relu"], n["relu"]) }},
		{name: "extra use record", check: ErrUseList, node: "x",
			corrupt: func(g *Graph, n nodes) { n["x"].uses = append(n["x"].uses, Use{User: n["relu"], Slot: 0}) }},
		{name: "missing use record", check: ErrUseList, node: "relu_default",
			corrupt: func(g *Graph, n nodes) {
				r := n["relu"]
				r.uses = r.uses[:len(r.uses)-1]
			}},
		{name: "use by erased node", check: ErrUseList, node: "x",
			corrupt: func(g *Graph, n nodes) {
				d := g.Call(irRelu, n["x"])
				d.erased = true
				g.unlink(d)
			}, msg: "erased node %relu_default_1"},
		{name: "dead-use count", check: ErrUseList, node: "x",
			corrupt: func(g *Graph, n nodes) { n["x"].deadUses = 1 }},
		{name: "unused node not tracked for DCE", check: ErrUseList, node: "output",
			corrupt: func(g *Graph, n nodes) { g.unused = nil }, msg: "list of unused nodes"},
		{name: "stale back pointer", check: ErrUseList, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) { n["add"].refs[1].idx = 7 }},
		{name: "no output", check: ErrOutput,
			corrupt: func(g *Graph, n nodes) { _ = g.Erase(n["output"]) }, msg: "want exactly one output node, got none"},
		{name: "two outputs", check: ErrOutput, node: "output_1",
			corrupt: func(g *Graph, n nodes) { g.SetOutput(n["add"]) }},
		{name: "output not last", check: ErrOutput, node: "output",
			corrupt: func(g *Graph, n nodes) { g.Call(irRelu, n["x"]) }, msg: "got %relu_default_1 after it"},
		{name: "missing attribute", check: ErrMissingAttr, node: "w",
			corrupt: func(g *Graph, n nodes) { g.DeleteAttr("w") }},
		{name: "call_module attribute is no Module", check: ErrMissingAttr, node: "obs",
			corrupt: func(g *Graph, n nodes) { g.SetAttr("obs", 3) }, msg: "of Go type int"},
		{name: "get_attr with args", check: ErrArity, node: "w",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["w"], int64(1)) }},
		{name: "output with two args", check: ErrArity, node: "output",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["output"], n["add"], n["q"]) }},
		{name: "non-Value Go type", check: ErrArgKind, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) { g.SetKwarg(n["add"], "alpha", 2) }, msg: "want a literal or a node reference, got a value of Go type int"},
		// schema
		{name: "unknown target", check: ErrUnknownTarget, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].target = irUnknown }, msg: "want an op in the registry, got aten.nosuch.default"},
		{name: "too many positional args", check: ErrArity, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["relu"], n["linear"], n["linear"]) }},
		{name: "unknown kwarg", check: ErrArity, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) { g.SetKwarg(n["add"], "beta", int64(1)) }, msg: `unknown keyword argument "beta"`},
		{name: "missing argument", check: ErrArity, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["q"], n["q"].Args()[:5]...) }, msg: `missing required argument "dtype"`},
		{name: "int for float", check: ErrArgKind, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { _ = g.SetArg(n["q"], 1, int64(1)) }, msg: "arg 1 (scale): want float, got int 1"},
		{name: "float for int", check: ErrArgKind, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { _ = g.SetArg(n["q"], 2, 3.0) }, msg: "arg 2 (zero_point): want int, got float 3"},
		{name: "int for ScalarType", check: ErrArgKind, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { _ = g.SetArg(n["q"], 5, int64(1)) }, msg: "arg 5 (dtype): want ScalarType, got int 1"},
		{name: "literal for Tensor", check: ErrArgKind, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["relu"], 1.5) }, msg: "arg 0 (self): want Tensor, got float 1.5"},
		{name: "None for Tensor", check: ErrArgKind, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { g.SetArgs(n["relu"], nil) }, msg: "want Tensor, got None"},
		{name: "str for Scalar kwarg", check: ErrArgKind, node: "add_tensor",
			corrupt: func(g *Graph, n nodes) { g.SetKwarg(n["add"], "alpha", "two") }, msg: `kwarg alpha: want Scalar, got str "two"`},
		// types
		{name: "result type differs", check: ErrTypeMismatch, node: "relu_default",
			corrupt: func(g *Graph, n nodes) { n["relu"].SetType(ops.Plain(tensor.Float32, 4, 2)) },
			msg:     "type: want f32[2, 4], got f32[4, 2] (shape: want [2 4], got [4 2])"},
		{name: "rule rejects input types", check: ErrTypeMismatch, node: "linear_default",
			corrupt: func(g *Graph, n nodes) { n["w"].SetType(ops.Plain(tensor.Float32, 3, 4)) },
			msg:     `node "linear_default" (aten.linear.default): arg 1: want f32[3, 3], got f32[3, 4]`},
		{name: "quantized contract: scale", check: ErrTypeMismatch, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { _ = g.SetArg(n["q"], 1, 0.25) }, msg: "(scale: want 0.25, got 0.5)"},
		{name: "quantized contract: zero point", check: ErrTypeMismatch, node: "quantize_per_tensor_default",
			corrupt: func(g *Graph, n nodes) { _ = g.SetArg(n["q"], 2, int64(4)) }, msg: "(zero point: want 4, got 3)"},
		{name: "missing type", check: ErrMissingType, node: "relu_default",
			opts:    func(o *VerifyOptions) { o.RequireTypes = true },
			corrupt: func(g *Graph, n nodes) { n["relu"].SetType(nil) }, msg: "type: want f32[2, 4], got none"},
		{name: "missing placeholder type", check: ErrMissingType, node: "x",
			opts:    func(o *VerifyOptions) { o.RequireTypes = true },
			corrupt: func(g *Graph, n nodes) { n["x"].SetType(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, n := irValid(t)
			tt.corrupt(g, n)
			opts := irOpts(t)
			if tt.opts != nil {
				tt.opts(&opts)
			}
			// The one-sweep check must catch the corruption itself: were it
			// to accept, Verify would skip the passes that report it.
			assert.False(t, sweepAccepts(g, opts), "the one-sweep check accepts the corrupted graph")
			err := Verify(g, opts)
			e := irFind(t, err, tt.check, tt.node)
			if tt.msg != "" {
				assert.Contains(t, e.Error(), tt.msg)
			}
			if tt.node != "" {
				assert.True(t, strings.HasPrefix(e.Error(), fmt.Sprintf("node %q", tt.node)), "message names the node: %s", e)
			}
			for _, other := range VerifyErrors(err) {
				ok := other.Check == tt.check
				for _, a := range tt.also {
					ok = ok || other.Check == a
				}
				assert.True(t, ok, "unexpected extra problem: %v", other)
			}
		})
	}
}

// Unknown targets pass with AllowOpaque, and their schema checks are
// skipped; SkipSchema leaves only the structural checks.
func TestVerifyOpaqueAndSkip(t *testing.T) {
	g, n := irValid(t)
	n["relu"].target = irUnknown
	irFind(t, Verify(g, irOpts(t)), ErrUnknownTarget, "relu_default")
	assert.NoError(t, Verify(g, VerifyOptions{Registry: irRegistry(t), AllowOpaque: true}))
	assert.NoError(t, Verify(g, VerifyOptions{SkipSchema: true}))
	n["relu"].SetType(ops.Plain(tensor.Float32, 9))
	n["relu"].target = irRelu
	assert.NoError(t, Verify(g, VerifyOptions{Registry: irRegistry(t), SkipTypes: true}))
}

// A packet target resolves to the first overload whose schema accepts the
// arguments; the type rule of that overload applies.
func TestVerifyPacketTarget(t *testing.T) {
	build := func(other ops.Value, typ ops.Type) *Graph {
		g := New()
		x := g.Placeholder("x", irF32)
		a := g.Call(irAddPkt, x, other)
		a.SetType(typ)
		g.SetOutput(a)
		return g
	}
	t.Run("tensor overload", func(t *testing.T) {
		g := New()
		x := g.Placeholder("x", irF32)
		a := g.Call(irAddPkt, x, x)
		a.SetType(irF32)
		g.SetOutput(a)
		assert.NoError(t, Verify(g, irOpts(t)))
	})
	t.Run("scalar overload", func(t *testing.T) {
		assert.NoError(t, Verify(build(2.0, irF32), irOpts(t)))
	})
	t.Run("scalar overload, wrong type", func(t *testing.T) {
		irFind(t, Verify(build(2.0, ops.Plain(tensor.Int8, 2, 3)), irOpts(t)), ErrTypeMismatch, "add")
	})
	t.Run("no overload fits", func(t *testing.T) {
		e := irFind(t, Verify(build("two", irF32), irOpts(t)), ErrArgKind, "add")
		assert.Contains(t, e.Error(), "none fits (tried Tensor, Scalar)")
	})
	t.Run("unknown packet", func(t *testing.T) {
		g := New()
		x := g.Placeholder("x", irF32)
		g.SetOutput(g.Call(ops.MustPacket("aten.nosuch"), x))
		irFind(t, Verify(g, irOpts(t)), ErrUnknownTarget, "nosuch")
	})
}

// operator.getitem takes (node, int) and has the tuple element's type.
func TestVerifyGetItem(t *testing.T) {
	build := func(idx ops.Value, typ ops.Type) *Graph {
		g := New()
		x := g.Placeholder("x", ops.TupleType{Elems: []ops.Type{irF32, ops.Plain(tensor.Int32, 1)}})
		gi := g.Call(ops.GetItem, x, idx)
		gi.SetType(typ)
		g.SetOutput(gi)
		return g
	}
	assert.NoError(t, Verify(build(int64(1), ops.Plain(tensor.Int32, 1)), irOpts(t)))
	irFind(t, Verify(build(int64(0), ops.Plain(tensor.Int32, 1)), irOpts(t)), ErrTypeMismatch, "getitem")
	irFind(t, Verify(build(int64(2), irF32), irOpts(t)), ErrTypeMismatch, "getitem")
	irFind(t, Verify(build(1.0, irF32), irOpts(t)), ErrArgKind, "getitem")
}

// Every problem is reported at once, and the list is capped.
func TestVerifyReportsAllAndCaps(t *testing.T) {
	g, n := irValid(t)
	n["relu"].SetType(ops.Plain(tensor.Float32, 1))
	g.DeleteAttr("w")
	n["q"].name = "add_tensor"
	err := Verify(g, irOpts(t))
	irFind(t, err, ErrTypeMismatch, "relu_default")
	irFind(t, err, ErrMissingAttr, "w")
	irFind(t, err, ErrDuplicateName, "add_tensor")

	g2 := New()
	x := g2.Placeholder("x", nil)
	for range 20 {
		g2.Call(irUnknown, x)
	}
	g2.SetOutput(x)
	err = Verify(g2, VerifyOptions{Registry: irRegistry(t), MaxErrors: 5})
	errs := VerifyErrors(err)
	require.Len(t, errs, 6)
	assert.ErrorIs(t, errs[5], ErrTooManyProblems)
	assert.Equal(t, "graph: too many problems: 15 more problems not shown", errs[5].Error())
}

// Verify of a graph with a huge cycle names at most maxListed nodes.
func TestVerifyCycleMessageCapped(t *testing.T) {
	g := New()
	x := g.Placeholder("x", nil)
	first := g.Call(irRelu, x)
	prev := first
	for range 30 {
		prev = g.Call(irRelu, prev)
	}
	g.SetArgs(first, prev)
	g.SetOutput(prev)
	e := irFind(t, Verify(g, VerifyOptions{SkipSchema: true}), ErrCycle, "")
	assert.Contains(t, e.Error(), "... (31 nodes)")
}

func TestVerifyNilGraph(t *testing.T) {
	assert.ErrorIs(t, Verify(nil, VerifyOptions{}), ErrNodeList)
}

// TestNamespaceOwners checks that every way of naming a node records the
// node as its name's owner, so that Verify settles names with one lookup
// per node: creation, renaming, parsing and cloning (a clone's nodes keep
// their ids, so they own the clone's names).
func TestNamespaceOwners(t *testing.T) {
	owned := func(t *testing.T, g *Graph) {
		t.Helper()
		for n := range g.All() {
			owner, _ := g.names.used.get(n.name)
			assert.Equal(t, n.id+1, owner, "owner of %q", n.name)
		}
	}
	t.Run("created and renamed", func(t *testing.T) {
		g, n := irValid(t)
		g.Rename(n["relu"], "renamed")
		owned(t, g)
		require.NoError(t, Verify(g, irOpts(t)))
	})
	t.Run("parsed", func(t *testing.T) {
		g, _ := irValid(t)
		p, err := ParseString(Format(g))
		require.NoError(t, err)
		owned(t, p)
	})
	t.Run("cloned", func(t *testing.T) {
		g, _ := irValid(t)
		c, _ := g.Clone()
		owned(t, c)
		owned(t, g)
	})
}
