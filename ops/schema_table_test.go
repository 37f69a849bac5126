package ops

import (
	"bufio"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

// TestSchemaTableRoundTrips parses every schema of PyTorch 2.14.1's
// operator table (ops/schemas/torch-2.14.1-ops.json, str(FunctionSchema) of
// each overload) and prints each back to PyTorch's exact text.
func TestSchemaTableRoundTrips(t *testing.T) {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(schemaTableJSON))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(strings.TrimSpace(sc.Text()), ",")
		if !strings.HasPrefix(line, `{"op"`) {
			continue
		}
		var e struct {
			Op     string   `json:"op"`
			Schema string   `json:"schema"`
			Tags   []string `json:"tags"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		n++
		ns, s, err := ParseQualifiedSchema(e.Schema)
		if err != nil {
			t.Errorf("%s: %v", e.Op, err)
			continue
		}
		if got := ns + "::" + s.String(); got != e.Schema {
			t.Errorf("%s: round trip\n got %s\nwant %s", e.Op, got, e.Schema)
		}
	}
	if n != 3932 {
		t.Errorf("read %d schemas, want 3932", n)
	}
}

// TestListSizeSemantics checks the N of "int[N]" as PyTorch's argument
// parser reads it, on the table's own schemas: a bare int stands for the
// list, but N does not fix the list's length.
func TestListSizeSemantics(t *testing.T) {
	r := Default()
	x := Plain(tensor.Float32, 1, 8, 4, 4)
	tests := []struct {
		op   string
		args []Value
		ok   bool
	}{
		{"aten.mean.dim", []Value{x, List{int64(2), int64(3)}}, true}, // int[1]? dim takes two dims
		{"aten.mean.dim", []Value{x, int64(2)}, true},                 // a bare int for int[1]
		{"aten.mean.dim", []Value{x, nil}, true},                      // optional
		{"aten.mean.dim", []Value{x, 2.5}, false},                     // a float is no int
		{"aten.mean.dim", []Value{x, List{2.5}}, false},
		{"aten.sum.dim_IntList", []Value{x, List{int64(0), int64(2), int64(3)}}, true},
		{"aten.amax.default", []Value{x, List{int64(1), int64(2), int64(3)}}, true},
		{"aten.max_pool2d.default", []Value{x, int64(3)}, true},                           // int[2] kernel_size=3
		{"aten.max_pool2d.default", []Value{x, List{int64(3)}}, true},                     // one element
		{"aten.max_pool2d.default", []Value{x, List{int64(3), int64(3), int64(3)}}, true}, // the parser does not check the length
		{"aten.conv2d.default", []Value{x, x, nil, int64(2)}, true},                       // SymInt[2] stride=2
		{"aten.squeeze.dims", []Value{x, int64(1)}, false},                                // int[] has no size: no bare int
		{"aten.squeeze.dims", []Value{x, List{int64(1), int64(2)}}, true},
		{"aten.cat.default", []Value{x}, false},               // Tensor[] wants a list
		{"aten.index.Tensor", []Value{x, List{nil, x}}, true}, // Tensor?[] takes None elements
		{"aten.index.Tensor", []Value{x, List{nil, int64(1)}}, false},
	}
	for _, tt := range tests {
		def, ok := r.Op(MustOverload(tt.op))
		if !ok {
			t.Fatalf("%s not known", tt.op)
		}
		err := def.Schema.Accepts(tt.args, nil)
		if (err == nil) != tt.ok {
			t.Errorf("%s%v: got error %v, want ok=%v", tt.op, tt.args, err, tt.ok)
		}
	}
}

// TestAliasHelpers checks InPlace, Aliases, MutatedArgs and the tags on
// the table's schemas: in-place forms, out= forms, views, multi-output
// views, random and side-effectful ops.
func TestAliasHelpers(t *testing.T) {
	r := Default()
	tests := []struct {
		op              string
		inPlace, aliase bool
		mutated         []int
		impure          bool
		tag             string
	}{
		{"aten.add_.Tensor", true, false, []int{0}, true, "inplace"},
		{"aten.add.Tensor", false, false, nil, false, "pointwise"},
		{"aten.add.out", false, false, []int{3}, true, "out"},
		{"aten.relu_.default", true, false, []int{0}, true, "inplace"},
		{"aten.view.default", false, true, nil, false, "core"},
		{"aten.split.Tensor", false, true, nil, false, "pt2_compliant_tag"},
		{"aten.unbind.int", false, true, nil, false, ""},
		{"aten.transpose_.default", true, false, []int{0}, true, "inplace_view"},
		{"aten._foreach_add_.Scalar", false, false, []int{0}, true, "inplace"},
		{"aten.dropout.default", false, false, nil, true, "nondeterministic_seeded"},
		{"aten.rand_like.default", false, false, nil, true, "nondeterministic_seeded"},
		{"aten._assert_async.msg", false, false, nil, true, ""},
		{"aten.sym_constrain_range_for_size.default", false, false, nil, true, ""},
		{"aten._assert_tensor_metadata.default", false, false, nil, true, ""},
		{"aten.mean.dim", false, false, nil, false, "reduction"},
	}
	for _, tt := range tests {
		def, ok := r.Op(MustOverload(tt.op))
		if !ok {
			t.Fatalf("%s not known", tt.op)
		}
		s := def.Schema
		if s.InPlace() != tt.inPlace || s.Aliases() != tt.aliase || !slices.Equal(s.MutatedArgs(), tt.mutated) {
			t.Errorf("%s: InPlace %v Aliases %v MutatedArgs %v, want %v %v %v", tt.op, s.InPlace(), s.Aliases(), s.MutatedArgs(), tt.inPlace, tt.aliase, tt.mutated)
		}
		if def.Impure != tt.impure || r.IsImpure(def.Target) != tt.impure {
			t.Errorf("%s: impure %v, want %v", tt.op, def.Impure, tt.impure)
		}
		if tt.tag != "" && !def.HasTag(tt.tag) {
			t.Errorf("%s: tags %v lack %q", tt.op, def.Tags, tt.tag)
		}
	}
	// A packet is impure when its default overload is (torch's is_impure):
	// aten.add has the mutating add.out but a pure add.default.
	if r.IsImpure(MustPacket("aten.add")) || !r.IsImpure(MustPacket("aten.dropout")) {
		t.Errorf("packet impurity: aten.add %v (want false), aten.dropout %v (want true)", r.IsImpure(MustPacket("aten.add")), r.IsImpure(MustPacket("aten.dropout")))
	}
}

// TestSchemaTableSorted checks what the table's binary search relies on:
// the entries are sorted by target, byte by byte, without duplicates, and
// each look-up finds its entry and its packet's overloads.
func TestSchemaTableSorted(t *testing.T) {
	table, err := theTable()
	if err != nil {
		t.Fatal(err)
	}
	if table.len() != 3932 {
		t.Fatalf("%d entries, want 3932", table.len())
	}
	count := map[Packet]int{}
	for k := range table.len() {
		o := table.op(k)
		count[o.Packet]++
		if k > 0 && table.op(k-1).String() >= o.String() {
			t.Fatalf("entry %d: %s does not sort after %s", k, o, table.op(k-1))
		}
		if got, ok := table.find(o); !ok || got != k {
			t.Fatalf("find(%s) = %d, %v; want %d", o, got, ok, k)
		}
	}
	for p, n := range count {
		start, end := table.overloads(p)
		if end-start != n {
			t.Errorf("overloads(%s): %d entries, want %d", p, end-start, n)
		}
	}
	for _, o := range []string{"foo.bar.default", "aten.add.nosuch", "aten.ad.Tensor", "aten.add_.nosuch", "zzz.a.b", "a.a.a"} {
		if _, ok := table.find(MustOverload(o)); ok {
			t.Errorf("find(%s) found an entry", o)
		}
	}
	if s, e := table.overloads(MustPacket("aten.ad")); s != e {
		t.Errorf("packet aten.ad has %d overloads, want none", e-s)
	}
}

// TestDecodeLine checks the table's fast line decoder against
// encoding/json on every entry.
func TestDecodeLine(t *testing.T) {
	table, err := theTable()
	if err != nil {
		t.Fatal(err)
	}
	for k := range table.len() {
		s, tags, err := decodeLine(table.lines[k])
		js, jtags, jerr := decodeLineJSON(table.lines[k])
		if err != nil || jerr != nil || s != js || !slices.Equal(tags, jtags) {
			t.Fatalf("entry %d: fast %q %q %v, json %q %q %v", k, s, tags, err, js, jtags, jerr)
		}
	}
}

// FuzzParseSchema: any text either fails to parse with a *SchemaError or
// parses to a schema whose printed form parses back to the same print.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
		"aten::items.str(Dict(str, t) self) -> ((str, t)[])",
		"aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
		"aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
		"aten::randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None) -> Tensor",
		"aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
		"aten::var_mean.correction_names(Tensor self, str[1] dim, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
		"aten::batch_norm(Tensor input, float momentum, float eps=1.0000000000000001e-05) -> Tensor",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ns, s, err := ParseQualifiedSchema(text)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SchemaError: %v", err, err)
			}
			return
		}
		printed := ns + "::" + s.String()
		ns2, s2, err := ParseQualifiedSchema(printed)
		if err != nil {
			t.Fatalf("printed %q does not parse: %v", printed, err)
		}
		if again := ns2 + "::" + s2.String(); again != printed {
			t.Fatalf("print is not stable:\n%s\n%s", printed, again)
		}
	})
}
