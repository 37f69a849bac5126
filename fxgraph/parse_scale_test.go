package fxgraph_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// The parser reads the rest of the text only when an error or the output
// line needs it, and works out line and column from byte offsets: the
// positions must still count blank lines, lines ending in "\r\n" and
// leading blanks. The expected positions are counted by hand.
func TestParseErrorPositions(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{
			"num_users after blank and CRLF lines",
			"\r\ngraph():\r\n\r\n    %x : [num_users=2] = placeholder[target=x]\r\n  \r\n    return (x,)\r\n",
			// %x is on line 4; "[num_users=" starts after "    %x : ".
			"line 4:10: node %x: [num_users=2] but the text gives it 1 user(s)",
		},
		{
			"num_users of a typed node",
			"graph():\n\n\t%x : f32[2, 8] [num_users=0] = placeholder[target=x]\n    return (x,)\n",
			// tab indent (1 byte) + "%x : f32[2, 8] " is 16 bytes.
			"line 3:17: node %x: [num_users=0] but the text gives it 1 user(s)",
		},
		{
			"duplicate after blank lines",
			"graph():\n\n    %x : [num_users=0] = placeholder[target=x]\n\n\n    %x : [num_users=0] = placeholder[target=x]\n",
			"line 6:5: duplicate node name %x (first defined on line 3)",
		},
		{
			"used before the first of two later definitions",
			"graph():\n" +
				"    %a : [num_users=0] = call_function[target=torch.ops.aten.relu.default](args = (%b,), kwargs = {})\n" +
				"\n" +
				"    %b : [num_users=1] = placeholder[target=b]\n" +
				"    %b : [num_users=1] = placeholder[target=b]\n",
			"line 2:84: node %b is used before its definition on line 4",
		},
		{
			"the output node's name is not a node of the text",
			"graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n" +
				"    %y : [num_users=0] = call_function[target=torch.ops.aten.relu.default](args = (%output,), kwargs = {})\n",
			"line 4:84: unknown node %output",
		},
		{
			"num_users of the first of many nodes",
			"graph():\n    %x : [num_users=3] = placeholder[target=x]\n" +
				"    %a : [num_users=0] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n" +
				"    %b : [num_users=0] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, %x), kwargs = {})\n" +
				"    return ()\n",
			"line 2:10: node %x: [num_users=3] but the text gives it 2 user(s)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fxgraph.ParseString(tt.src)
			var pe *fxgraph.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// The output node takes "output", or output_N, avoiding every name the
// text defines, on earlier lines and on later ones alike.
func TestParseOutputNameAvoidsLaterNames(t *testing.T) {
	tests := []struct {
		name, after, want string
	}{
		{"nothing after", "", "output"},
		{"output defined later", "    %output : [num_users=0] = placeholder[target=o]\n", "output_1"},
		{"output and output_1 defined later", "    %output_1 : [num_users=0] = placeholder[target=p]\n    %output : [num_users=0] = placeholder[target=o]\n", "output_2"},
		{"a longer name is no clash", "    %outputs : [num_users=0] = placeholder[target=o]\n", "output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    return (x,)\n" + tt.after
			g, err := fxgraph.ParseString(src)
			require.NoError(t, err)
			assert.Equal(t, []string{tt.want}, outputNames(g))
		})
	}
}

// A second return line is refused as such (issue 14), even where the
// counts it adds agree with the text: a graph has one output.
func TestParseSeveralOutputLines(t *testing.T) {
	src := "graph():\n" +
		"    %x : [num_users=3] = placeholder[target=x]\n" +
		"    return (x,)\n" +
		"    %output_1 : [num_users=0] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n" +
		"    return (x,)\n"
	_, err := fxgraph.ParseString(src)
	var pe *fxgraph.ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "line 5:5: duplicate return line: the graph already returns on line 3, and a graph has one output", err.Error())
}

// Every reference resolves to the node of that name, whatever the order
// of the references: recent nodes, nodes named in definition order (as an
// output tuple lists them), in reverse, and far apart; and each node's
// users are counted once per user line.
func TestParseResolvesEveryReference(t *testing.T) {
	const n = 300
	var b strings.Builder
	b.WriteString("graph():\n")
	name := func(i int) string { return fmt.Sprintf("p%d", i) }
	// Node p<i> is used by: the in-order tuple (all), the reverse tuple
	// (all), and the pair line i/7 when i%7 is 0 or 3 (twice on that line).
	users := func(i int) int {
		if i%7 == 0 || i%7 == 3 {
			return 3
		}
		return 2
	}
	for i := range n {
		fmt.Fprintf(&b, "    %%%s : [num_users=%d] = placeholder[target=%s]\n", name(i), users(i), name(i))
	}
	var inOrder, reverse []string
	for i := range n {
		inOrder = append(inOrder, "%"+name(i))
		reverse = append(reverse, "%"+name(n-1-i))
	}
	fmt.Fprintf(&b, "    %%fwd : [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%s],), kwargs = {})\n", strings.Join(inOrder, ", "))
	fmt.Fprintf(&b, "    %%rev : [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%s],), kwargs = {})\n", strings.Join(reverse, ", "))
	var pairs []string
	for i := 0; i+3 < n; i += 7 {
		// far apart, each named twice: counts one user per line
		fmt.Fprintf(&b, "    %%pair%d : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%%%s, %%%s), kwargs = {alpha: %%%s})\n", i, name(i+3), name(i), name(i+3))
		pairs = append(pairs, fmt.Sprintf("pair%d", i))
	}
	fmt.Fprintf(&b, "    return (fwd, rev, %s)\n", strings.Join(pairs, ", "))
	g, err := fxgraph.ParseString(b.String())
	require.NoError(t, err)

	byName := map[string]*fxgraph.Node{}
	for nd := range g.All() {
		byName[nd.Name()] = nd
	}
	argNames := func(v ops.Value) []string {
		var out []string
		for _, e := range v.(ops.List) {
			out = append(out, e.(*fxgraph.Node).Name())
		}
		return out
	}
	for i, got := range argNames(byName["fwd"].Arg(0)) {
		require.Equal(t, name(i), got, "fwd arg %d", i)
	}
	for i, got := range argNames(byName["rev"].Arg(0)) {
		require.Equal(t, name(n-1-i), got, "rev arg %d", i)
	}
	for i := 0; i+3 < n; i += 7 {
		p := byName[fmt.Sprintf("pair%d", i)]
		require.Equal(t, name(i+3), p.Arg(0).(*fxgraph.Node).Name())
		require.Equal(t, name(i), p.Arg(1).(*fxgraph.Node).Name())
		alpha, _ := p.Kwarg("alpha")
		require.Equal(t, name(i+3), alpha.(*fxgraph.Node).Name())
	}
}

// Numbers keep their exact values when many distinct ones appear (the
// parser shares the boxes of repeated numbers): ints beyond the small
// range Go boxes for free, negative ints, floats told apart by their bits
// (-0.0 and 0.0), and values that recur.
func TestParseManyNumbers(t *testing.T) {
	const k = 500
	ints := make([]int64, k)
	floats := make([]float64, k)
	var ia, fa []string
	for i := range k {
		ints[i] = int64(i)*1_000_003 - 250_000_000 // distinct, mostly >= 256 in size
		floats[i] = float64(i%50)/4 - 3            // 50 distinct values, each 10 times
		ia = append(ia, fmt.Sprint(ints[i]))
		fa = append(fa, fxgraph.PyFloat(floats[i]))
	}
	ia = append(ia, "-128", "-128", "9223372036854775807")
	fa = append(fa, "0.0", "-0.0", "0.0")
	src := "graph():\n" +
		"    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = ([" + strings.Join(ia, ", ") + "], [" + strings.Join(fa, ", ") + "]), kwargs = {})\n"
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	f := g.First()
	gotI := f.Arg(0).(ops.List)
	gotF := f.Arg(1).(ops.List)
	require.Len(t, gotI, k+3)
	require.Len(t, gotF, k+3)
	for i := range k {
		require.Equal(t, ints[i], gotI[i], "int %d", i)
		require.Equal(t, math.Float64bits(floats[i]), math.Float64bits(gotF[i].(float64)), "float %d", i)
	}
	assert.Equal(t, int64(-128), gotI[k])
	assert.Equal(t, int64(-128), gotI[k+1])
	assert.Equal(t, int64(math.MaxInt64), gotI[k+2])
	assert.Equal(t, uint64(0), math.Float64bits(gotF[k].(float64)))
	assert.Equal(t, uint64(1)<<63, math.Float64bits(gotF[k+1].(float64)), "-0.0 keeps its sign")
	assert.Equal(t, uint64(0), math.Float64bits(gotF[k+2].(float64)))
}

// Nodes with the same type text get equal types, and one node's type
// cannot reach another's memory: appending to a shape copies it.
func TestParseSharedTypesStayApart(t *testing.T) {
	src := "graph():\n" +
		"    %a : f32[2, 8, 4] [num_users=0] = placeholder[target=a]\n" +
		"    %b : f32[2, 8, 4] [num_users=0] = placeholder[target=b]\n"
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	a, _ := g.First().TensorType()
	b, _ := g.First().Next().TensorType()
	require.True(t, a.Equal(b))
	grown := append(a.Shape, 5)
	grown[0] = 7
	assert.Equal(t, []int64{2, 8, 4}, b.Shape)
	assert.Equal(t, []int64{2, 8, 4}, a.Shape)
}

// A dict's keys must be distinct, however many there are (a long dict
// checks them with a set).
func TestParseLongDict(t *testing.T) {
	var kv []string
	for i := range 20 {
		kv = append(kv, fmt.Sprintf("k%02d: %d", i, i))
	}
	call := func(dict string) string {
		return "graph():\n    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = (" + dict + ",), kwargs = {})\n"
	}
	g, err := fxgraph.ParseString(call("{" + strings.Join(kv, ", ") + "}"))
	require.NoError(t, err)
	d := g.First().Arg(0).(ops.Dict)
	require.Len(t, d.Keys, 20)
	for i := range 20 {
		assert.Equal(t, fmt.Sprintf("k%02d", i), d.Keys[i])
		assert.Equal(t, int64(i), d.Values[i])
	}

	// a repeat of k03 as the 19th key: "{" is column 81 and each
	// "kNN: N, " entry before it is 8 (k00..k09) or 9 (k10..k17) bytes.
	dup := append(append([]string{}, kv[:18]...), "k03: 1")
	_, err = fxgraph.ParseString(call("{" + strings.Join(dup, ", ") + "}"))
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("line 2:%d: duplicate dict key \"k03\"", 81+1+10*8+8*9), err.Error())
}

// Empty args and kwargs read as no arguments, as before the parser built
// them in the graph's arenas.
func TestParseEmptyArgs(t *testing.T) {
	g, err := fxgraph.ParseString("graph():\n    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = (), kwargs = {})\n")
	require.NoError(t, err)
	assert.Empty(t, g.First().Args())
	assert.Empty(t, g.First().Kwargs())
}

// Format prints each node's own type, however the types repeat or differ
// in one part only (the printer caches type texts across lines).
func TestFormatTypesThatDifferInOnePart(t *testing.T) {
	q := func(scale float64, zp int64) ops.Type {
		e, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, scale, zp)
		require.NoError(t, err)
		return ops.TensorType{Shape: []int64{2, 8}, Elem: e}
	}
	pa := func(scales ...float64) ops.Type {
		e, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -127, 127, tensor.Float32, 0, scales, make([]int64, len(scales)))
		require.NoError(t, err)
		return ops.TensorType{Shape: []int64{int64(len(scales)), 4}, Elem: e}
	}
	sym := func(s string) ops.Type {
		return ops.TensorType{Shape: []int64{ops.DynamicDim, 8}, Elem: ops.Scalar{DType: tensor.Float32}, Syms: []string{s, ""}}
	}
	tests := []struct {
		typ  ops.Type
		want string
	}{
		{ops.Plain(tensor.Float32, 2, 8), "f32[2, 8]"},
		{ops.Plain(tensor.Float32, 2, 8), "f32[2, 8]"},
		{ops.Plain(tensor.Float32, 8, 2), "f32[8, 2]"},
		{ops.Plain(tensor.Float16, 2, 8), "f16[2, 8]"},
		{ops.Plain(tensor.Float32, 2, 8, 1), "f32[2, 8, 1]"},
		{q(0.5, 3), "!quant.uniform<i8:f32, 0.5:3>[2, 8]"},
		{q(0.5, 4), "!quant.uniform<i8:f32, 0.5:4>[2, 8]"},
		{q(math.Nextafter(0.5, 1), 3), "!quant.uniform<i8:f32, 0.5000000000000001:3>[2, 8]"},
		{q(0.5, 3), "!quant.uniform<i8:f32, 0.5:3>[2, 8]"},
		{pa(0.1, 0.2), "!quant.uniform<i8<-127:127>:f32:0, {0.1,0.2}>[2, 4]"},
		{pa(0.1, 0.25), "!quant.uniform<i8<-127:127>:f32:0, {0.1,0.25}>[2, 4]"},
		{sym("s0"), "f32[s0, 8]"},
		{sym("s1"), "f32[s1, 8]"},
		{ops.TupleType{Elems: []ops.Type{ops.Plain(tensor.Float32, 1), ops.Plain(tensor.Int32, 1)}}, "(f32[1], i32[1])"},
		{ops.PyType{Name: "SymInt"}, "SymInt"},
		{ops.Plain(tensor.Float32, 2, 8), "f32[2, 8]"},
	}
	g := fxgraph.New()
	var want strings.Builder
	want.WriteString("graph():\n")
	for i, tt := range tests {
		g.Placeholder(fmt.Sprintf("x%d", i), tt.typ)
		fmt.Fprintf(&want, "    %%x%d : %s [num_users=0] = placeholder[target=x%d]\n", i, tt.want, i)
	}
	assert.Equal(t, want.String(), fxgraph.Format(g))
}

// Format's text is the header and one FormatNode line per node even when
// later lines are much longer than the first ones (the printer sizes its
// buffer from the first lines and must go on past that estimate), and it
// parses back to the same text.
func TestFormatLongLinesLate(t *testing.T) {
	g := fxgraph.New()
	var xs []ops.Value
	for i := range 600 {
		xs = append(xs, g.Placeholder(fmt.Sprintf("x%d", i), nil))
	}
	cat := ops.MustOverload("aten.cat.default")
	for range 400 {
		g.Call(cat, ops.List(xs))
	}
	out := fxgraph.Format(g)
	var want strings.Builder
	want.WriteString("graph():\n")
	for n := range g.All() {
		want.WriteString("    " + fxgraph.FormatNode(n) + "\n")
	}
	require.Equal(t, want.String(), out)
	require.True(t, strings.HasPrefix(out, "graph():\n    %x0 : [num_users=400] = placeholder[target=x0]\n"))
	g2, err := fxgraph.ParseString(out)
	require.NoError(t, err)
	assert.Equal(t, out, fxgraph.Format(g2))
}

// outputNames lists the names of g's output nodes in program order.
func outputNames(g *fxgraph.Graph) []string {
	var names []string
	for n := range g.All() {
		if n.Op() == fxgraph.Output {
			names = append(names, n.Name())
		}
	}
	return names
}
