package tests

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const impModule = "github.com/fxquant/fxquant"

// importRule says what one layer of STYLE.md 2.1 may import. Package
// patterns are module-relative: "ops" is that package, "ops/..." its
// subpackages. fxgraph/interp is special: only constfold, convert and the
// top layers may import it.
type importRule struct {
	pkg string   // the layer's package pattern
	may []string // module packages it may import
	ext []string // non-standard modules it may import (path prefixes)
	any bool     // cmd, examples, tests: anything but cmd/examples/tests
}

var (
	impOps     = []string{"ops", "ops/..."}
	impFxgraph = []string{"fxgraph", "fxgraph/...!interp"} // subpackages other than interp
	impGonum   = []string{"gonum.org/v1/gonum"}
	impDominik = []string{"github.com/dominikbraun/graph"}
	impAtomic  = []string{"internal/atomicfile"}
)

func impJoin(parts ...[]string) []string { return slices.Concat(parts...) }

// impRules is STYLE.md 2.1's table. The first rule whose pattern
// matches a package applies; a package that matches none fails the test
// until it is added here.
var impRules = []importRule{
	// internal/atomicfile writes files for every layer that writes one
	// and imports nothing of the module.
	{pkg: "internal/atomicfile"},
	{pkg: "ops/tensor", ext: impGonum},
	// ops/kernels picks its assembly kernels by the CPU's features.
	{pkg: "ops/kernels", may: []string{"ops/tensor"}, ext: impJoin(impGonum, []string{"golang.org/x/sys/cpu"})},
	{pkg: "ops", may: []string{"ops/..."}, ext: impGonum},
	{pkg: "fxgraph", may: impOps, ext: impDominik},
	{pkg: "fxgraph/interp", may: impJoin([]string{"fxgraph"}, impOps)},
	{pkg: "fxgraph/...", may: impJoin(impFxgraph, impOps, impAtomic), ext: impDominik},
	// observers picks its AVX2 kernels by the CPU's features.
	{pkg: "observers", may: impJoin(impFxgraph, impOps), ext: []string{"golang.org/x/sys/cpu"}},
	{pkg: "metadata", may: impJoin(impFxgraph, impOps)},
	{pkg: "constfold", may: impJoin([]string{"metadata", "fxgraph/interp"}, impFxgraph, impOps)},
	{pkg: "reftransform", may: impJoin([]string{"metadata"}, impFxgraph, impOps)},
	{pkg: "convert", may: impJoin([]string{"reftransform", "constfold", "metadata", "observers", "typed", "fxgraph/interp"}, impFxgraph, impOps)},
	{pkg: "numdebug", may: impJoin([]string{"fxgraph/interp"}, impFxgraph, impOps)},
	{pkg: "pt2", may: impJoin(impFxgraph, impOps, impAtomic)},
	// report draws the graphs and the debugger's numbers as one HTML page.
	{pkg: "report", may: impJoin([]string{"numdebug", "observers", "convert"}, impFxgraph, impOps)},
	// typed (spec/typed-rewrites.md) is a pass package like reftransform;
	// it is not in STYLE.md 2.1's table, so its layer is set here.
	{pkg: "typed", may: impJoin([]string{"metadata"}, impFxgraph, impOps)},
	{pkg: "cmd/...", any: true},
	{pkg: "examples", any: true},
	{pkg: "examples/...", any: true},
	{pkg: "tests", any: true},
	{pkg: "tests/...", any: true},
}

// impMatch reports whether the module-relative package rel matches pattern
// ("ops", "ops/...", "fxgraph/...!interp").
func impMatch(pattern, rel string) bool {
	pattern, except, _ := strings.Cut(pattern, "!")
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		sub, ok := strings.CutPrefix(rel, prefix+"/")
		if !ok || sub == "" {
			return false
		}
		return except == "" || (sub != except && !strings.HasPrefix(sub, except+"/"))
	}
	return rel == pattern
}

func impRule(rel string) (importRule, bool) {
	for _, r := range impRules {
		if impMatch(r.pkg, rel) {
			return r, true
		}
	}
	return importRule{}, false
}

// impTopLevel reports packages nothing may import.
func impTopLevel(rel string) bool {
	for _, p := range []string{"cmd", "examples", "tests"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

func impStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// impCheck returns "" when a package under rule may import path, or the
// reason it may not.
func impCheck(rule importRule, path string) string {
	if rel, ok := strings.CutPrefix(path, impModule+"/"); ok {
		if impTopLevel(rel) {
			return "nothing imports cmd, examples or tests"
		}
		if rule.any {
			return ""
		}
		for _, m := range rule.may {
			if impMatch(m, rel) {
				return ""
			}
		}
		return "not in the layer's allowlist " + strings.Join(rule.may, ", ")
	}
	if path == impModule {
		return "the module root is no package"
	}
	if impStdlib(path) || rule.any {
		return ""
	}
	for _, e := range rule.ext {
		if path == e || strings.HasPrefix(path, e+"/") {
			return ""
		}
	}
	return "third-party module not allowed here"
}

func impRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err, "tests/ must sit directly under the module root")
	return dir
}

// impDirs walks the module and returns every directory holding a Go
// package (testdata, hidden and underscore directories excluded).
func impDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		matches, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(matches) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// TestImportDirection enforces STYLE.md 2.1: each package's imports (read
// with go/build) must be allowed by its layer's rule; test files may not
// import cmd, examples or tests either.
func TestImportDirection(t *testing.T) {
	root := impRoot(t)
	dirs := impDirs(t, root)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		t.Run(rel, func(t *testing.T) {
			pkg, err := build.Default.ImportDir(dir, 0)
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				t.Skip("no buildable Go files")
			}
			require.NoError(t, err)
			if rel == "." {
				t.Fatalf("the module root holds package %s; STYLE.md 2.1 has no layer for it", pkg.Name)
			}
			rule, ok := impRule(rel)
			if !ok {
				t.Fatalf("package %s is not in the import table of tests/imports_test.go (STYLE.md 2.1); add its layer", rel)
			}
			for _, imp := range pkg.Imports {
				if why := impCheck(rule, imp); why != "" {
					t.Errorf("%s imports %s: %s", rel, imp, why)
				}
			}
			for _, imp := range slices.Concat(pkg.TestImports, pkg.XTestImports) {
				if r, ok := strings.CutPrefix(imp, impModule+"/"); ok && impTopLevel(r) && !impTopLevel(rel) {
					t.Errorf("%s tests import %s: nothing imports cmd, examples or tests", rel, imp)
				}
			}
		})
	}
}

// TestImportRules checks the table's own logic on cases written from
// STYLE.md 2.1.
func TestImportRules(t *testing.T) {
	tests := []struct {
		pkg, imp string
		ok       bool
	}{
		{"ops/tensor", "math", true},
		{"ops/tensor", "gonum.org/v1/gonum/floats", true},
		{"ops/tensor", impModule + "/ops", false},
		{"ops", impModule + "/ops/tensor", true},
		{"ops", impModule + "/ops/kernels", true},
		{"ops", impModule + "/fxgraph", false},
		{"ops/kernels", impModule + "/ops", false},
		{"fxgraph", impModule + "/ops", true},
		{"fxgraph", "github.com/dominikbraun/graph", true},
		{"fxgraph", impModule + "/pt2", false},
		{"fxgraph", impModule + "/fxgraph/interp", false},
		{"fxgraph/match", impModule + "/fxgraph", true},
		{"fxgraph/interp", impModule + "/fxgraph", true},
		{"fxgraph/interp", impModule + "/fxgraph/match", false},
		{"observers", impModule + "/fxgraph/match", true},
		{"observers", impModule + "/fxgraph/interp", false},
		{"observers", impModule + "/metadata", false},
		{"metadata", impModule + "/observers", false},
		{"constfold", impModule + "/metadata", true},
		{"constfold", impModule + "/fxgraph/interp", true},
		{"constfold", impModule + "/reftransform", false},
		{"reftransform", impModule + "/constfold", false},
		{"convert", impModule + "/reftransform", true},
		{"convert", impModule + "/pt2", false},
		{"pt2", impModule + "/convert", false},
		{"pt2", "github.com/stretchr/testify/require", false},
		{"typed", impModule + "/fxgraph", true},
		{"typed", impModule + "/convert", false},
		{"convert", impModule + "/typed", true},
		{"cmd/fxquant", impModule + "/pt2", true},
		{"cmd/fxquant", impModule + "/examples", false},
		{"tests", impModule + "/convert", true},
		{"examples", impModule + "/tests", false},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+" imports "+tt.imp, func(t *testing.T) {
			rule, ok := impRule(tt.pkg)
			require.True(t, ok)
			why := impCheck(rule, tt.imp)
			assert.Equal(t, tt.ok, why == "", "reason: %q", why)
		})
	}
	_, ok := impRule("newpkg")
	assert.False(t, ok, "a package not in the table has no rule")
}
