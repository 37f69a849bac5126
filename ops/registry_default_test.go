package ops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultBuilds(t *testing.T) {
	r, err := buildDefault()
	require.NoError(t, err)
	table, err := theTable()
	require.NoError(t, err)
	for _, row := range allRows() {
		name := row.op
		if name == "" {
			name = row.schema[:strings.IndexByte(row.schema, '(')]
		}
		t.Run(name, func(t *testing.T) {
			var o Overload
			if row.schema != "" {
				ns, s, err := ParseQualifiedSchema(row.schema)
				require.NoError(t, err)
				o = Overload{Packet: Packet{NS: ns, Name: s.Name}, Name: s.Overload}
				if row.op != "" {
					assert.Equal(t, row.op, o.String(), "a row's op and schema name one overload")
				}
			} else {
				o = MustOverload(row.op)
			}
			def, ok := r.Op(o)
			require.True(t, ok, "row %s not registered", o)
			assert.NotNil(t, def.Result, "every row has a result-type rule")
			assert.NotEmpty(t, def.Doc)
			if k, inTable := table.find(o); inTable {
				// The registered schema is the table's, verbatim.
				assert.Equal(t, table.entry(k).schema, def.Schema)
				var raw struct{ Schema string }
				require.NoError(t, json.Unmarshal([]byte(table.lines[k]), &raw))
				assert.Equal(t, raw.Schema, def.Schema.Text, "schema text is the table's")
				if row.schema != "" {
					_, own, err := ParseQualifiedSchema(row.schema)
					require.NoError(t, err)
					assert.Equal(t, def.Schema.String(), own.String(), "a row's own schema text prints as the table's")
				}
			} else {
				assert.Equal(t, row.schema, def.Schema.Text)
			}
		})
	}
	assert.NotPanics(t, func() { Default() })
}

// TestDefaultKnowsFixtureTargets reads the target column of every fixture
// listing and requires each op target to be known to the default registry.
func TestDefaultKnowsFixtureTargets(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "tests", "testdata", "pt2e", "*.graph.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	r := Default()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				cols := strings.Split(line, " | ")
				require.GreaterOrEqual(t, len(cols), 3, "line %d", i+1)
				if cols[1] != "call_function" {
					continue
				}
				tg, err := ParseTarget(cols[2])
				require.NoError(t, err, "line %d", i+1)
				assert.True(t, r.Known(tg), "line %d: target %s is not registered", i+1, cols[2])
			}
		})
	}
}

func TestKernelKeysMustNameOverloads(t *testing.T) {
	saved := quantKernels
	defer func() { quantKernels = saved }()
	quantKernels = map[string]KernelFunc{"quantized_decomposed.quantize_per_tensr.default": func([]Value) (Value, error) { return nil, nil }}
	_, err := buildDefault()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "quantize_per_tensr")
}

func TestDefaultFlags(t *testing.T) {
	r := Default()
	tests := []struct {
		target string
		impure bool
	}{
		{"aten.copy_.default", true},
		{"aten._assert_tensor_metadata.default", true},
		{"aten.relu_.default", true},
		{"aten.relu.default", false},
		{"aten.linear.default", false},
		{"operator.setitem", true},
		{"operator.getitem", false},
		{"torchao.quantize_affine", false},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			assert.Equal(t, tt.impure, r.IsImpure(MustParseTarget(tt.target)))
		})
	}
	def, ok := r.Op(MustOverload("aten.view.default"))
	require.True(t, ok)
	assert.True(t, def.View)
	assert.True(t, r.Known(MustPacket("aten.clamp")))
	assert.Equal(t, []Overload{MustOverload("aten.clamp.default"), MustOverload("aten.clamp.Tensor"), MustOverload("aten.clamp.Tensor_out"), MustOverload("aten.clamp.out")},
		r.Overloads(MustPacket("aten.clamp")), "rows first, then the table's others in table order")
}

// TestKernelAttachesToTableOp: a kernel-table entry for a table op without
// a hand row attaches to the row built on first look-up; that row has no
// result rule, and a key naming no overload of the table is still an
// error.
func TestKernelAttachesToTableOp(t *testing.T) {
	saved := atenKernels
	defer func() { atenKernels = saved }()
	k := func([]Value) (Value, error) { return int64(7), nil }
	atenKernels = map[string]KernelFunc{"aten.sinh.default": k}
	r, err := buildDefault()
	require.NoError(t, err)
	def, ok := r.Op(MustOverload("aten.sinh.default"))
	require.True(t, ok)
	require.NotNil(t, def.Kernel)
	got, err := def.Kernel(nil)
	require.NoError(t, err)
	assert.Equal(t, int64(7), got)
	assert.Nil(t, def.Result)
	assert.Equal(t, "aten::sinh(Tensor self) -> Tensor", def.Schema.Text)
	assert.True(t, def.HasTag("pointwise"))
	again, _ := r.Op(MustOverload("aten.sinh.default"))
	assert.Same(t, def, again, "a table op's row is built once")

	atenKernels = map[string]KernelFunc{"aten.sinh.nosuch": k}
	_, err = buildDefault()
	require.ErrorContains(t, err, "aten.sinh.nosuch")
}

// TestTableLookupsConcurrent looks table ops up from many goroutines at
// once (run with -race): every caller gets the same row.
func TestTableLookupsConcurrent(t *testing.T) {
	r, err := buildDefault()
	require.NoError(t, err)
	names := []string{"aten.hardswish_.default", "aten.chunk.default", "aten.unflatten.int", "aten.split.Tensor", "prims.var.default"}
	const workers = 8
	got := make([][]*OpDef, workers)
	done := make(chan int)
	for w := range workers {
		go func() {
			for _, n := range names {
				d, _ := r.Op(MustOverload(n))
				got[w] = append(got[w], d)
				r.Overloads(MustOverload(n).Packet)
			}
			done <- w
		}()
	}
	for range workers {
		<-done
	}
	for w := 1; w < workers; w++ {
		for i := range names {
			assert.Same(t, got[0][i], got[w][i], names[i])
		}
	}
}
