package pt2_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

const fixtureDir = "../tests/testdata/pt2e"

// fixtures returns every .pt2 file of the PyTorch fixture folder.
func fixtures(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.pt2"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no .pt2 fixtures in %s", fixtureDir)
	return files
}

// opaque reads with unknown operators allowed, so that the tests do not
// depend on which registry rows have landed.
var opaque = &pt2.Options{AllowOpaque: true}

// modelJSON returns the models/model.json record of a fixture archive.
func modelJSON(t testing.TB, file string) map[string]any {
	zr, err := zip.OpenReader(file)
	require.NoError(t, err)
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/models/model.json") {
			rc, err := f.Open()
			require.NoError(t, err)
			defer rc.Close()
			var m map[string]any
			require.NoError(t, json.NewDecoder(rc).Decode(&m))
			return m
		}
	}
	t.Fatalf("%s: no models/model.json", file)
	return nil
}

// dumpGraph describes a graph completely (names, ops, targets, args,
// kwargs, types, metadata) for structural comparison.
func dumpGraph(g *fxgraph.Graph) string {
	var b strings.Builder
	for n := range g.All() {
		typ := "<nil>"
		if n.Type() != nil {
			typ = n.Type().String()
		}
		fmt.Fprintf(&b, "%s %s %s type=%s args=%s kwargs=%s\n", n.Name(), n.Op(), n.TargetName(), typ, dumpValue(n.Args()), dumpKwargs(n.Kwargs()))
		m := n.Meta
		fmt.Fprintf(&b, "  meta: st=%q nn=%v src=%v fn=%v custom=%q from=%q", m.StackTrace, m.NNModuleStack, m.SourceFnStack, m.TorchFn, m.Custom, m.FromNode)
		for _, k := range m.ExtraKeys() {
			fmt.Fprintf(&b, " %s=%v", k, m.Extra[k])
		}
		b.WriteString("\n")
	}
	for _, a := range g.AttrNames() {
		v, _ := g.Attr(a)
		fmt.Fprintf(&b, "attr %s %v\n", a, v)
	}
	return b.String()
}

func dumpKwargs(kw []ops.Kwarg) string {
	parts := make([]string, len(kw))
	for i, k := range kw {
		parts[i] = k.Name + "=" + dumpValue(k.Value)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func dumpValue(v any) string {
	switch x := v.(type) {
	case *fxgraph.Node:
		return "%" + x.Name()
	case []ops.Value:
		return dumpValue(ops.Tuple(x))
	case ops.Tuple:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = dumpValue(e)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case ops.List:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = dumpValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float64:
		return fmt.Sprintf("float(%s)", pt2.PyFloatRepr(x))
	case nil:
		return "None"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// requireSameWeights checks that both programs hold bit-identical tensors
// under the same attribute names.
func requireSameWeights(t *testing.T, a, b *pt2.Program) {
	t.Helper()
	require.Equal(t, a.Graph.AttrNames(), b.Graph.AttrNames())
	for _, name := range a.Graph.AttrNames() {
		va, _ := a.Graph.Attr(name)
		vb, _ := b.Graph.Attr(name)
		ta, ok := va.(*tensor.Tensor)
		require.True(t, ok, "attr %s", name)
		tb, ok := vb.(*tensor.Tensor)
		require.True(t, ok, "attr %s", name)
		require.NoError(t, tensor.Diff(tb, ta), "attr %s", name)
	}
}

func TestFixturesLoad(t *testing.T) {
	for _, file := range fixtures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := pt2.ReadFile(file, opaque)
			require.NoError(t, err)
			raw := modelJSON(t, file)
			gm := raw["graph_module"].(map[string]any)
			graph := gm["graph"].(map[string]any)
			nodes := graph["nodes"].([]any)
			inputs := graph["inputs"].([]any)

			// one call_function node per serialized node, plus getitems for
			// every tensor of a multi-result op
			calls, getitems, wantGetitems := 0, 0, 0
			for n := range p.Graph.All() {
				if n.Op() == fxgraph.CallFunction {
					if n.Target() == ops.GetItem {
						getitems++
					} else {
						calls++
					}
				}
			}
			for _, n := range nodes {
				if outs := n.(map[string]any)["outputs"].([]any); len(outs) > 1 {
					wantGetitems += len(outs)
				}
			}
			assert.Equal(t, len(nodes), calls, "call_function nodes")
			assert.Equal(t, wantGetitems, getitems, "getitem nodes")
			assert.Len(t, p.Graph.Placeholders(), len(inputs), "placeholders")
			assert.Len(t, p.Signature.Inputs, len(inputs))
			_, hasOut := p.Graph.OutputNode()
			assert.True(t, hasOut)
			assert.Equal(t, pt2.Version{Major: 8, Minor: 20}, p.SchemaVersion)
			assert.Equal(t, "2.14.1+debian", p.TorchVersion)
			assert.Equal(t, []string{"TRAINING"}, p.Verifiers)
			assert.Equal(t, pt2.ContainerPT2, p.Container)
			assert.Equal(t, "archive", p.ArchiveRoot)
			// only the sample inputs are pickled in these archives
			require.Len(t, p.Unreadable, 1)
			assert.Equal(t, "data/sample_inputs/model.pt", p.Unreadable[0].Record)

			// every parameter and buffer has its tensor, with its placeholder's type
			for _, s := range p.Signature.Inputs {
				if s.Kind == pt2.UserInput {
					continue
				}
				v, ok := p.Graph.Attr(s.Target)
				require.True(t, ok, "no tensor for %s %q", s.Kind, s.Target)
				ph, ok := p.Graph.NodeByName(s.Name)
				require.True(t, ok)
				tt, ok := ph.TensorType()
				require.True(t, ok)
				w := v.(*tensor.Tensor)
				assert.Equal(t, tt.DType(), w.DType(), s.Target)
				assert.Equal(t, tt.Shape, ops.ShapeInts(w.Shape()), s.Target)
			}
		})
	}
}

// TestFixturesListing compares the graph with PyTorch's own listing of the
// same program, byte for byte.
func TestFixturesListing(t *testing.T) {
	for _, file := range fixtures(t) {
		stem := strings.TrimSuffix(file, ".pt2")
		listing := stem + ".export.graph.txt"
		if _, err := os.Stat(listing); err != nil {
			listing = stem + ".graph.txt"
		}
		want, err := os.ReadFile(listing)
		if err != nil {
			continue // no listing for this archive
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := pt2.ReadFile(file, opaque)
			require.NoError(t, err)
			assert.Equal(t, string(want), fxgraph.FormatListing(p.Graph))
		})
	}
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, file := range fixtures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p1, err := pt2.ReadFile(file, opaque)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, p1.WriteArchive(&buf, nil))
			p2, err := pt2.Read(buf.Bytes(), opaque)
			require.NoError(t, err)
			assert.Equal(t, dumpGraph(p1.Graph), dumpGraph(p2.Graph))
			assert.Equal(t, fxgraph.Format(p1.Graph), fxgraph.Format(p2.Graph))
			assert.Equal(t, p1.Signature, p2.Signature)
			assert.Equal(t, p1.Tensors, p2.Tensors)
			requireSameWeights(t, p1, p2)

			// the JSON structure survives, apart from what the writer
			// normalizes (the payload of sample inputs is not JSON)
			j1, err := p1.EncodeJSON(nil)
			require.NoError(t, err)
			j2, err := p2.EncodeJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, string(j1), string(j2), "write is stable across a round trip")
			var orig, back any
			require.NoError(t, json.Unmarshal(j1, &back))
			orig = modelJSON(t, file)
			assert.Equal(t, orig, back, "written JSON equals PyTorch's JSON structurally")

			// written archives are stored, under one root, 64-byte aligned
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			require.NoError(t, err)
			for _, f := range zr.File {
				assert.Equal(t, zip.Store, f.Method, f.Name)
				assert.True(t, strings.HasPrefix(f.Name, "archive/"), f.Name)
				off, err := f.DataOffset()
				require.NoError(t, err)
				assert.Zero(t, off%64, "%s data at offset %d", f.Name, off)
			}
		})
	}
}
