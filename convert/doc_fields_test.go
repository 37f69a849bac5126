package convert_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportedFieldsDocumented: every exported field of an exported struct
// type in package convert has a doc or line comment (a comment on a field
// group such as "QuantMin, QuantMax *int64" covers the group). The files
// are discovered by glob.
func TestExportedFieldsDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var missing []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				if fld.Doc != nil || fld.Comment != nil {
					continue
				}
				for _, name := range fld.Names {
					if name.IsExported() {
						missing = append(missing, fset.Position(name.Pos()).String()+": "+ts.Name.Name+"."+name.Name)
					}
				}
			}
			return true
		})
	}
	require.Empty(t, missing, "exported fields without a doc comment")
}
