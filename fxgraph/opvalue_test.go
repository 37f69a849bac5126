package fxgraph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// outDTypeGraph is higher_order.out_dtype(aten.linear.default, int32, x, w,
// None) in the golden notation, typed as PyTorch types it: int16 operands
// promoted to int32, linear's [2, 4] x [3, 4]^T shape.
const outDTypeGraph = `graph():
    %x : i16[2, 4] [num_users=1] = placeholder[target=x]
    %w : i16[3, 4] [num_users=1] = placeholder[target=w]
    %out_dtype : i32[2, 3] [num_users=1] = call_function[target=torch.ops.higher_order.out_dtype.default](args = (torch.ops.aten.linear.default, torch.int32, %x, %w, None), kwargs = {})
    return (out_dtype,)
`

func findNode(t *testing.T, g *fxgraph.Graph, name string) *fxgraph.Node {
	t.Helper()
	for n := range g.All() {
		if n.Name() == name {
			return n
		}
	}
	require.FailNow(t, "no node "+name)
	return nil
}

// TestParseOperatorArgument: the printed operator reads back as the
// ops.Overload value itself, not a string, and prints the same again.
func TestParseOperatorArgument(t *testing.T) {
	g, err := fxgraph.ParseString(outDTypeGraph)
	require.NoError(t, err)
	n := findNode(t, g, "out_dtype")
	assert.Equal(t, ops.MustOverload("aten.linear.default"), n.Arg(0))
	assert.Equal(t, outDTypeGraph, fxgraph.Format(g))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true}))
}

// TestFormatOperatorValues builds each operator kind into a graph and
// checks the FX and repr spellings, then the round trip.
func TestFormatOperatorValues(t *testing.T) {
	tests := []struct {
		name     string
		v        ops.Value
		fx, repr string
	}{
		{"overload", ops.MustOverload("aten.add.Tensor"), "torch.ops.aten.add.Tensor", "<OpOverload(op='aten.add', overload='Tensor')>"},
		{"default overload", ops.MustOverload("aten.linear.default"), "torch.ops.aten.linear.default", "<OpOverload(op='aten.linear', overload='default')>"},
		{"packet", ops.MustPacket("torchao.quantize_affine"), "torch.ops.torchao.quantize_affine", "<OpOverloadPacket(op='torchao.quantize_affine')>"},
		{"getitem", ops.GetItem, "<built-in function getitem>", "<built-in function getitem>"},
		{"torch function", ops.Callable{Module: "torch", Name: "relu"}, "<function torch.relu>", "<function torch.relu>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fxgraph.New()
			p := g.Placeholder("p", nil)
			g.SetArgs(p, tt.v)
			m := g.CreateNode(fxgraph.CallMethod, nil, "f", []ops.Value{tt.v}, []fxgraph.Kwarg{{Name: "op", Value: tt.v}}, "f", nil)
			g.SetOutput(m)
			want := "graph():\n" +
				"    %p : [num_users=0] = placeholder[target=p](default=" + tt.repr + ")\n" +
				"    %f : [num_users=1] = call_method[target=f](args = (" + tt.fx + ",), kwargs = {op: " + tt.fx + "})\n" +
				"    return f\n"
			out := fxgraph.Format(g)
			require.Equal(t, want, out)
			g2, err := fxgraph.ParseString(out)
			require.NoError(t, err)
			assert.Equal(t, tt.v, findNode(t, g2, "f").Arg(0))
			assert.Equal(t, tt.v, findNode(t, g2, "p").Arg(0))
			assert.Equal(t, out, fxgraph.Format(g2))
		})
	}
}

// TestListingOperatorArgument: the fixture listing writes repr(args), so
// an OpOverload argument is its repr; rows parse into operator values,
// print back byte for byte, and build the same graph.
func TestListingOperatorArgument(t *testing.T) {
	src := "x | placeholder | x | () | {}\n" +
		"w | placeholder | w | () | {}\n" +
		"out_dtype | call_function | higher_order.out_dtype.default | (<OpOverload(op='aten.linear', overload='default')>, torch.int32, %x, %w, None) | {}\n" +
		"f | call_function | aten.f.default | (<OpOverloadPacket(op='aten.mm')>, <built-in function getitem>, 'aten.mm') | {'op': <OpOverload(op='aten.mul', overload='Tensor')>}\n" +
		"output | output | output | ((%out_dtype,),) | {}\n"
	rows, err := fxgraph.ParseListingString(src)
	require.NoError(t, err)
	require.Len(t, rows, 5)
	assert.Equal(t, ops.MustOverload("aten.linear.default"), rows[2].Args[0])
	assert.Equal(t, ops.MustPacket("aten.mm"), rows[3].Args[0])
	assert.Equal(t, ops.GetItem, rows[3].Args[1])
	assert.Equal(t, "aten.mm", rows[3].Args[2])
	assert.Equal(t, ops.MustOverload("aten.mul.Tensor"), rows[3].Kwargs[0].Value)
	var lines []string
	for _, r := range rows {
		lines = append(lines, r.String())
	}
	assert.Equal(t, src, strings.Join(lines, "\n")+"\n")

	g, err := fxgraph.GraphFromListing(rows)
	require.NoError(t, err)
	assert.Equal(t, ops.MustOverload("aten.linear.default"), findNode(t, g, "out_dtype").Arg(0))
	assert.Equal(t, src, fxgraph.FormatListing(g))
}

func TestListingOperatorErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"packet without namespace", "a | call_function | f | (<OpOverloadPacket(op='mm')>,) | {}",
			`line 1:26: bad OpOverloadPacket op="mm": want op='ns.op'`},
		{"unquoted op", "a | call_function | f | (<OpOverload(op=aten.mm, overload='default')>,) | {}",
			`line 1:41: want a quoted string after op=, got 'a'`},
		{"unterminated builtin", "a | call_function | f | (<built-in function getitem,) | {}",
			`line 1:26: unterminated <built-in function ...>`},
		{"unknown repr", "a | call_function | f | (<object at 0x1>,) | {}",
			`line 1:26: want an operator (<OpOverload(op='aten.linear', overload='default')>, <OpOverloadPacket(op='aten.linear')>, <built-in function getitem>), got "<object at 0x1>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fxgraph.ParseListingString(tt.line)
			require.Error(t, err)
			var pe *fxgraph.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// TestDOTOperatorArgument: DOT prints the FX spelling of the operator.
func TestDOTOperatorArgument(t *testing.T) {
	g, err := fxgraph.ParseString(outDTypeGraph)
	require.NoError(t, err)
	assert.Contains(t, fxgraph.DOT(g), `args=(torch.ops.aten.linear.default, torch.int32, %x, %w, None)`)
}

// TestVerifyOperatorArguments: an operator fits out_dtype's "Any" op
// argument and no typed argument; the report names the operator.
func TestVerifyOperatorArguments(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"operator for a Tensor", `graph():
    %r : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (torch.ops.aten.linear.default,), kwargs = {})
    return r
`, "OpOverload aten.linear.default"},
		{"packet for an int", `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %s : [num_users=1] = call_function[target=torch.ops.aten.softmax.int](args = (%x, torch.ops.aten.mm), kwargs = {})
    return s
`, "OpOverloadPacket aten.mm"},
		{"builtin for a ScalarType", `graph():
    %x : f32[4] [num_users=1] = placeholder[target=x]
    %t : [num_users=1] = call_function[target=torch.ops.aten.to.dtype](args = (%x, <built-in function getitem>), kwargs = {})
    return t
`, "function operator.getitem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := fxgraph.ParseString(tt.src)
			require.NoError(t, err)
			err = fxgraph.Verify(g, fxgraph.VerifyOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
