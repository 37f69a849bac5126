package pt2

import (
	"fmt"
	"github.com/fxquant/fxquant/ops"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDynamicDerivedValues forgets, for each dynamic program, the tensor
// metadata of every contiguous symbolic tensor (the writer's rule for a
// tensor it has no metadata for, as for static shapes; views such as
// transpose and select keep theirs) and every sym_int_values entry read
// from the file, as for nodes a rewrite made, and writes the program: the
// writer derives sizes, strides, hints and the values of sym_size and
// operator nodes, and gets torch.export's text byte for byte. Strides
// torch wrote as other than products (Min(8, 8*s77), for a view of a
// transposed tensor) are kept too: the writer cannot know them from a type.
func TestDynamicDerivedValues(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/dynamic/*.pt2")
	require.NoError(t, err)
	files = append(files, "../tests/testdata/zoo/mlp_dynamic_batch.float.pt2")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := ReadFile(file, &Options{AllowOpaque: true})
			require.NoError(t, err)
			want, err := p.EncodeJSON(nil)
			require.NoError(t, err)
			require.NotEmpty(t, p.Graph.Symbols())
			forgot := 0
			hints := map[string]int64{}
			for _, s := range p.Graph.Symbols() {
				if s.Hint != nil {
					hints[s.Name] = *s.Hint
				}
			}
			for name, m := range p.metas {
				if m.Sym != nil && m.Sym.Offset == nil && m.StorageOffset == 0 && m.contiguousAt(hints) && productStrides(m) {
					delete(p.metas, name)
					forgot++
				}
			}
			require.NotZero(t, forgot)
			p.symVals = nil
			got, err := p.EncodeJSON(nil)
			require.NoError(t, err)
			if d := firstDiff(string(want), string(got)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// productStrides reports whether every symbolic stride of m is a product
// of symbols and integers.
func productStrides(m tensorMeta) bool {
	for _, s := range m.Sym.Strides {
		if s.Expr == nil || s.Expr.Kind == ops.SymSymbol {
			continue
		}
		if s.Expr.Kind != ops.SymMul {
			return false
		}
		for _, a := range s.Expr.Args {
			if a.Kind != ops.SymSymbol && a.Kind != ops.SymInteger {
				return false
			}
		}
	}
	return true
}

// DiffAt is firstDiff, for the external tests.
var DiffAt = firstDiff

// firstDiff describes where got first differs from want, with context;
// "" when they are equal.
func firstDiff(want, got string) string {
	if want == got {
		return ""
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(i-300, 0)
	return fmt.Sprintf("differs at byte %d:\nwant ...%s\n got ...%s", i, want[lo:min(i+200, len(want))], got[lo:min(i+200, len(got))])
}
