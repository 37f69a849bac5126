package fxgraph_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/golden"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Python's repr(float): the expectations are what CPython 3 prints.
func TestPyFloat(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"fixture scale", 0.0243646502494812, "0.0243646502494812"},
		{"integral keeps .0", 1.0, "1.0"},
		{"zero", 0.0, "0.0"},
		{"negative zero", math.Copysign(0, -1), "-0.0"},
		{"1e-4 is positional", 1e-4, "0.0001"},
		{"below 1e-4 is exponent", 1e-5, "1e-05"},
		{"float32 eps", 1.1920928955078125e-07, "1.1920928955078125e-07"},
		{"2^-12", 0.000244140625, "0.000244140625"},
		{"small with digits", 1.234e-05, "1.234e-05"},
		{"below 1e16 is positional", 1e15, "1000000000000000.0"},
		{"largest positional", 9999999999999998.0, "9999999999999998.0"},
		{"1e16 is exponent", 1e16, "1e+16"},
		{"big with digits", 1.2345678901234568e+17, "1.2345678901234568e+17"},
		{"three-digit exponent", 1e+300, "1e+300"},
		{"max float", math.MaxFloat64, "1.7976931348623157e+308"},
		{"denormal", 5e-324, "5e-324"},
		{"one tenth", 0.1, "0.1"},
		{"negative", -2.5, "-2.5"},
		{"hundred", 100.0, "100.0"},
		{"inf", math.Inf(1), "inf"},
		{"-inf", math.Inf(-1), "-inf"},
		{"nan", math.NaN(), "nan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fxgraph.PyFloat(tt.in))
		})
	}
}

// Python's repr(str) and repr(complex), as CPython 3 prints them.
func TestPyQuoteAndComplex(t *testing.T) {
	quotes := []struct{ in, want string }{
		{"abc", `'abc'`},
		{"it's", `"it's"`},
		{`a'b"c`, `'a\'b"c'`},
		{"a\nb\tc\rd", `'a\nb\tc\rd'`},
		{"\x00\x7f", `'\x00\x7f'`},
		{"é", `'é'`},
		{"\u200b", `'\u200b'`},
		{"\U000e0001", `'\U000e0001'`},
		{`\`, `'\\'`},
		{"", `''`},
	}
	for _, tt := range quotes {
		t.Run("quote "+tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fxgraph.PyQuote(tt.in))
		})
	}
	complexes := []struct {
		in   complex128
		want string
	}{
		{complex(1, 2), "(1+2j)"},
		{complex(0, 2), "2j"},
		{complex(math.Copysign(0, -1), -1), "(-0-1j)"},
		{complex(1.5, -0.5), "(1.5-0.5j)"},
		{complex(0, 1e-05), "1e-05j"},
		{complex(math.Inf(1), math.NaN()), "(inf+nanj)"},
	}
	for _, tt := range complexes {
		t.Run("complex "+tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fxgraph.PyComplex(tt.in))
		})
	}
}

var (
	tQuant   = ops.MustOverload("torchao.quantize_affine.default")
	tDequant = ops.MustOverload("torchao.dequantize_affine.default")
	tAdd     = ops.MustOverload("aten.add.Tensor")
)

// STYLE.md 2.7's example, built through the Graph API: the printed text
// is the example copied from the guide.
func TestFormatStyleExample(t *testing.T) {
	g := fxgraph.New()
	f32 := func(shape ...int64) ops.Type { return ops.Plain(tensor.Float32, shape...) }
	x := g.Placeholder("x", f32(1, 16))
	scale := g.GetAttr("_scale0", f32(1))
	zp := g.GetAttr("_zero_point0", ops.Plain(tensor.Int32, 1))
	q := g.CreateNode(fxgraph.CallFunction, tQuant, "", []ops.Value{x, ops.List{int64(1), int64(16)}, scale, zp, tensor.Int8, int64(-128), int64(127)}, nil, "quantize_affine", ops.Plain(tensor.Int8, 1, 16))
	dq := g.CreateNode(fxgraph.CallFunction, tDequant, "", []ops.Value{q, ops.List{int64(1), int64(16)}, scale, zp, tensor.Int8, int64(-128), int64(127)},
		[]fxgraph.Kwarg{{Name: "output_dtype", Value: tensor.Float32}}, "dequantize_affine", f32(1, 16))
	add := g.CreateNode(fxgraph.CallFunction, tAdd, "", []ops.Value{dq, dq}, nil, "", f32(1, 16))
	g.SetOutput(ops.Tuple{add})

	want := `graph():
    %x : f32[1, 16] [num_users=1] = placeholder[target=x]
    %_scale0 : f32[1] [num_users=2] = get_attr[target=_scale0]
    %_zero_point0 : i32[1] [num_users=2] = get_attr[target=_zero_point0]
    %quantize_affine : i8[1, 16] [num_users=1] = call_function[target=torch.ops.torchao.quantize_affine.default](args = (%x, [1, 16], %_scale0, %_zero_point0, torch.int8, -128, 127), kwargs = {})
    %dequantize_affine : f32[1, 16] [num_users=1] = call_function[target=torch.ops.torchao.dequantize_affine.default](args = (%quantize_affine, [1, 16], %_scale0, %_zero_point0, torch.int8, -128, 127), kwargs = {output_dtype: torch.float32})
    %add_tensor : f32[1, 16] [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%dequantize_affine, %dequantize_affine), kwargs = {})
    return (add_tensor,)
`
	assert.Equal(t, want, fxgraph.Format(g))
	assert.Equal(t, "return (add_tensor,)", fxgraph.FormatNode(g.Last()))
}

// Spec 1.6's naming table as it shows in printed graphs: FX names from
// overloads (add_tensor, add_tensor_1, quantize_per_tensor_default_1),
// builtins get a suffix (sum_1), placeholders are snake-cased while their
// target keeps its case, call_module paths become layer1_0_conv, and an
// erased name is not reused.
func TestFormatNaming(t *testing.T) {
	g := fxgraph.New()
	in := g.CreateNode(fxgraph.Placeholder, nil, "inputTensor", nil, nil, "", nil)
	a := g.Call(tAdd, in, in)
	b := g.Call(tAdd, a, a)
	q := ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	q0 := g.Call(q, b, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	q1 := g.Call(q, q0, 0.5, int64(0), int64(-128), int64(127), tensor.Int8)
	s := g.Call(ops.MustPacket("aten.sum"), q1)
	m := g.CallModule("layer1.0.conv", s)
	dead := g.Call(ops.MustOverload("aten.sum.dim_IntList"), m, ops.List{int64(1)})
	require.NoError(t, g.Erase(dead))
	again := g.Call(ops.MustOverload("aten.sum.dim_IntList"), m, ops.List{int64(1)})
	g.SetOutput(again)

	want := `graph():
    %input_tensor : [num_users=1] = placeholder[target=inputTensor]
    %add_tensor : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%input_tensor, %input_tensor), kwargs = {})
    %add_tensor_1 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_tensor, %add_tensor), kwargs = {})
    %quantize_per_tensor_default : [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.default](args = (%add_tensor_1, 0.5, 0, -128, 127, torch.int8), kwargs = {})
    %quantize_per_tensor_default_1 : [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.default](args = (%quantize_per_tensor_default, 0.5, 0, -128, 127, torch.int8), kwargs = {})
    %sum_1 : [num_users=1] = call_function[target=torch.ops.aten.sum](args = (%quantize_per_tensor_default_1,), kwargs = {})
    %layer1_0_conv : [num_users=1] = call_module[target=layer1.0.conv](args = (%sum_1,), kwargs = {})
    %sum_dim_int_list_1 : [num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%layer1_0_conv, [1]), kwargs = {})
    return sum_dim_int_list_1
`
	assert.Equal(t, want, fxgraph.Format(g))
}

// Parse keeps names exactly, even ones FX would not give (sum, add_01),
// and reserves them: nodes created afterwards get fresh names.
func TestParseKeepsAndReservesNames(t *testing.T) {
	src := `graph():
    %sum : [num_users=1] = placeholder[target=sum]
    %add_01 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%sum, 1), kwargs = {})
    %add : [num_users=0] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_01, 1), kwargs = {})
`
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	require.Equal(t, src, fxgraph.Format(g))
	// Spec 1.6: add_01 sets base_count[add] = 1 and add is taken, so the
	// next add is add_2.
	n := g.CreateNode(fxgraph.CallFunction, tAdd, "", []ops.Value{g.First()}, nil, "add", nil)
	assert.Equal(t, "add_2", n.Name())
	n = g.CreateNode(fxgraph.CallFunction, tAdd, "", []ops.Value{g.First()}, nil, "sum", nil)
	assert.Equal(t, "sum_1", n.Name())
}

// describe renders a value with its Go kinds, so that tests can check
// that parsing keeps int vs float, string vs device, list vs tuple.
func describe(v ops.Value) string {
	switch x := v.(type) {
	case *fxgraph.Node:
		return "node(" + x.Name() + ")"
	case ops.List:
		return "list" + describeSeq(x)
	case ops.Tuple:
		return "tuple" + describeSeq(x)
	case ops.Dict:
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			parts[i] = fmt.Sprintf("%q: %s", k, describe(x.Values[i]))
		}
		return "dict{" + strings.Join(parts, ", ") + "}"
	case ops.Slice:
		return "slice(" + describe(x.Start) + ", " + describe(x.Stop) + ", " + describe(x.Step) + ")"
	case float64:
		return fmt.Sprintf("float64(%v)", x)
	case string:
		return fmt.Sprintf("string(%q)", x)
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func describeSeq(xs []ops.Value) string {
	parts := make([]string, len(xs))
	for i, e := range xs {
		parts[i] = describe(e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Parsing keeps each literal's kind, and printing gives back the text.
// The expected kinds follow fx-graph.md 1.2 and the rule in Parse's doc.
func TestParseLiteralKinds(t *testing.T) {
	tests := []struct {
		name string
		arg  string // one argument as printed
		want string // describe() of the parsed value
	}{
		{"int", "1", "int64(1)"},
		{"negative int", "-128", "int64(-128)"},
		{"float", "1.0", "float64(1)"},
		{"exponent float", "1e-05", "float64(1e-05)"},
		{"inf", "inf", "float64(+Inf)"},
		{"-inf", "-inf", "float64(-Inf)"},
		{"nan", "nan", "float64(NaN)"},
		{"complex", "(1+2j)", "complex128((1+2i))"},
		{"imaginary", "2j", "complex128((0+2i))"},
		{"None", "None", "nil"},
		{"True", "True", "bool(true)"},
		{"False", "False", "bool(false)"},
		{"bare string", "ASYMMETRIC", `string("ASYMMETRIC")`},
		{"dotted bare string", "a.b", `string("a.b")`},
		{"quoted string", "'two words'", `string("two words")`},
		{"quoted keyword", "'None'", `string("None")`},
		{"quoted device word", "'cpu'", `string("cpu")`},
		{"dtype", "torch.int8", "tensor.DType(int8)"},
		{"bfloat16", "torch.bfloat16", "tensor.DType(bfloat16)"},
		{"layout", "torch.strided", "ops.Layout(torch.strided)"},
		{"memory format", "torch.channels_last", "ops.MemoryFormat(torch.channels_last)"},
		{"device", "cpu", "ops.Device(cpu)"},
		{"device index", "cuda:0", "ops.Device(cuda:0)"},
		{"device repr", "device(type='xyz')", "ops.Device(xyz)"},
		{"node", "%x", "node(x)"},
		{"list", "[1, 2.0]", "list[int64(1), float64(2)]"},
		{"empty list", "[]", "list[]"},
		{"one-tuple", "(%x,)", "tuple[node(x)]"},
		{"empty tuple", "()", "tuple[]"},
		{"dict", "{a: 1, 'b c': %x}", `dict{"a": int64(1), "b c": node(x)}`},
		{"slice", "slice(None, 2, None)", "slice(nil, int64(2), nil)"},
		{"slice with node and string", "slice(x, 2, 'k')", `slice(node(x), int64(2), string("k"))`},
		{"nested", "[(1, [None]), {k: [torch.float32]}]", `list[tuple[int64(1), list[nil]], dict{"k": list[tensor.DType(float32)]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "graph():\n    %x : [num_users=1] = placeholder[target=x]\n" +
				"    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = (%x, " + tt.arg + "), kwargs = {})\n"
			g, err := fxgraph.ParseString(src)
			require.NoError(t, err)
			f, ok := g.NodeByName("f")
			require.True(t, ok)
			assert.Equal(t, tt.want, describe(f.Arg(1)))
			assert.Equal(t, src, fxgraph.Format(g))
		})
	}
}

// Parse errors give line:column and what was expected.
func TestParseErrors(t *testing.T) {
	const hdr = "graph():\n"
	const x = "    %x : [num_users=1] = placeholder[target=x]\n"
	call := func(args string) string {
		return "    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = (" + args + "), kwargs = {})\n"
	}
	// In call(), the text after "(args = (" starts at column 81, so the
	// second argument starts at column 85.
	tests := []struct {
		name, src, want string
	}{
		{"empty text", "", `line 1:1: want the header "graph():", got empty text`},
		{"not a node line", hdr + "    x = 1\n", `line 2:5: want a node line (%name : ... or return ...), got "x = 1"`},
		{"missing num_users", hdr + "    %x : f32[1]\n", `line 2:10: want "[num_users=N]" after the node's type`},
		{"bad opcode", hdr + "    %x : [num_users=0] = output[target=output]\n", `line 2:26: want an opcode (placeholder, get_attr, call_function, call_method, call_module), got "output[target=output]"`},
		{"unterminated string", hdr + x + call("%x, 'abc"), `line 3:85: unterminated string literal`},
		{"bad escape", hdr + x + call(`%x, '\q'`), `line 3:86: unknown escape \q in string literal`},
		{"int overflow", hdr + x + call("%x, 9223372036854775808"), `line 3:85: integer 9223372036854775808 does not fit in int64`},
		{"reserved word", hdr + x + call("%x, slice"), `line 3:85: "slice" is reserved: quote it to write a string`},
		{"unknown call", hdr + x + call("%x, foo(1)"), `line 3:85: unknown call foo(...): want slice(...) or device(...)`},
		{"missing comma", hdr + x + call("%x 1"), `line 3:84: want ',' or ")", got '1'`},
		{"duplicate kwarg", hdr + x + "    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = (%x,), kwargs = {a: 1, a: 2})\n", `line 3:103: duplicate dict key "a"`},
		{"args not a tuple", hdr + x + "    %f : [num_users=0] = call_function[target=torch.ops.test.f.default](args = [%x], kwargs = {})\n", `line 3:80: want the args tuple, got [%x]`},
		{"trailing text", hdr + x + "    return (x,) extra\n", `line 3:17: want end of line, got "extra"`},
		{"deep nesting", hdr + x + call("%x, "+strings.Repeat("[", 300)+strings.Repeat("]", 300)), `line 3:284: arguments nested deeper than 200 levels`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fxgraph.ParseString(tt.src)
			require.Error(t, err)
			var pe *fxgraph.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// Every fxgraph/testdata/format/*.txtar case: parse "input", print it and
// compare with "want" (or compare the error with "want.err"); printing
// twice gives the same bytes, and "want" itself parses and prints back
// unchanged (go/printer's idempotence check).
func TestFormatCases(t *testing.T) {
	files, err := filepath.Glob("testdata/format/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := golden.ReadArchive(file)
			require.NoError(t, err)
			input, ok := a.Get("input")
			require.True(t, ok, "%s has no input section", file)
			g, err := fxgraph.ParseString(string(input))
			if err != nil {
				golden.CheckSection(t, file, a, "want.err", []byte(err.Error()+"\n"))
				return
			}
			_, wantsErr := a.Get("want.err")
			require.False(t, wantsErr && !golden.Update(), "want an error, got none")
			out := fxgraph.Format(g)
			require.Equal(t, out, fxgraph.Format(g), "second print differs")
			golden.CheckSection(t, file, a, "want", []byte(out))
			g2, err := fxgraph.ParseString(out)
			require.NoError(t, err, "re-parse of the printed graph")
			assert.Equal(t, out, fxgraph.Format(g2), "print is not idempotent")
		})
	}
}

// formatSeeds returns the input and want sections of the txtar cases.
func formatSeeds(tb testing.TB) []string {
	files, err := filepath.Glob("testdata/format/*.txtar")
	require.NoError(tb, err)
	var seeds []string
	for _, file := range files {
		a, err := golden.ReadArchive(file)
		require.NoError(tb, err)
		for _, f := range a.Files {
			if f.Name == "input" || f.Name == "want" {
				seeds = append(seeds, string(f.Data))
			}
		}
	}
	return seeds
}

// FuzzParse: bad input is an error, never a panic; a parsed graph prints,
// re-parses, and prints the same text again.
func FuzzParse(f *testing.F) {
	for _, s := range formatSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := fxgraph.ParseString(src)
		if err != nil {
			return
		}
		out := fxgraph.Format(g)
		g2, err := fxgraph.ParseString(out)
		require.NoError(t, err, "re-parse of printed graph:\n%s", out)
		require.Equal(t, out, fxgraph.Format(g2))
	})
}

// Running the printer over a fixture twice gives identical bytes.
func TestFormatDeterministic(t *testing.T) {
	src, err := os.ReadFile("testdata/format/literals.txtar")
	require.NoError(t, err)
	in, _ := golden.ParseArchive(src).Get("input")
	g1, err := fxgraph.ParseString(string(in))
	require.NoError(t, err)
	g2, err := fxgraph.ParseString(string(in))
	require.NoError(t, err)
	assert.Equal(t, fxgraph.Format(g1), fxgraph.Format(g2))
	assert.Equal(t, fxgraph.DOT(g1), fxgraph.DOT(g2))
	assert.Equal(t, fxgraph.FormatListing(g1), fxgraph.FormatListing(g2))
}

// Parse(Format(g)) reproduces g: names, opcodes, targets, types (compared
// with Equal) and every argument with its kind, for a graph built through
// the API with quantized types, a packet, getitem, nested containers and
// a node used twice.
func TestRoundTripStructure(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", ops.TensorType{Shape: []int64{ops.DynamicDim, 16}, Elem: ops.Scalar{DType: tensor.Float32}, Syms: []string{"s0", ""}})
	qe, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, 0.02, -3)
	require.NoError(t, err)
	pe, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -127, 127, tensor.Float32, 0, []float64{0.1, 0.25}, []int64{0, 0})
	require.NoError(t, err)
	w := g.GetAttr("fc.weight", ops.TensorType{Shape: []int64{2, 16}, Elem: pe})
	ch := g.Call(ops.MustPacket("torchao.choose_qparams_affine"), x, "ASYMMETRIC", ops.Tuple{int64(1), int64(16)}, tensor.Int8,
		int64(-128), int64(127), 1.1920928955078125e-07, tensor.Float32, tensor.Int32)
	ch.SetType(ops.TupleType{Elems: []ops.Type{ops.Plain(tensor.Float32, 1), ops.Plain(tensor.Int32, 1)}})
	s := g.Call(ops.GetItem, ch, int64(0))
	q := g.CreateNode(fxgraph.CallFunction, ops.MustOverload("test.f.default"), "",
		[]ops.Value{x, x, s, w, ops.List{ops.Dict{Keys: []string{"k", "two words"}, Values: []ops.Value{nil, ops.Slice{Start: int64(1)}}}}},
		[]fxgraph.Kwarg{{Name: "device", Value: ops.Device("cuda:1")}, {Name: "layout", Value: ops.LayoutStrided}, {Name: "eps", Value: 1e-05}},
		"", ops.TensorType{Shape: []int64{ops.DynamicDim, 16}, Elem: qe, Syms: []string{"s0", ""}})
	g.SetOutput(ops.Tuple{q})

	text := fxgraph.Format(g)
	p, err := fxgraph.ParseString(text)
	require.NoError(t, err, text)
	want, got := g.Nodes(), p.Nodes()
	require.Len(t, got, len(want))
	for i := range want {
		w, p := want[i], got[i]
		assert.Equal(t, w.Name(), p.Name())
		assert.Equal(t, w.Op(), p.Op())
		assert.Equal(t, w.Target(), p.Target(), "target of %s", w.Name())
		assert.Equal(t, w.TargetName(), p.TargetName())
		assert.True(t, ops.TypesEqual(w.Type(), p.Type()), "type of %s: want %v, got %v", w.Name(), w.Type(), p.Type())
		assert.Equal(t, describeSeq(w.Args()), describeSeq(p.Args()), "args of %s", w.Name())
		require.Len(t, p.Kwargs(), len(w.Kwargs()))
		for j, kw := range w.Kwargs() {
			assert.Equal(t, kw.Name, p.Kwargs()[j].Name)
			assert.Equal(t, describe(kw.Value), describe(p.Kwargs()[j].Value))
		}
		assert.Equal(t, w.NumUses(), p.NumUses(), "uses of %s", w.Name())
	}
	assert.Equal(t, text, fxgraph.Format(p))
}
