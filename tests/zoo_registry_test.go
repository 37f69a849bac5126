package tests

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/pt2"
)

// TestZooKnowsEveryOp reads every program of the zoo (real models
// exported by PyTorch 2.14, testdata/zoo), verifies it against the
// registry, and writes and re-reads it unchanged: every operator they call
// is known, with its schema. Only a program with symbolic sizes may still
// be refused, for that reason alone.
func TestZooKnowsEveryOp(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(zooDir, "*.pt2"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := pt2.ReadFile(f, nil)
			if errors.Is(err, pt2.ErrUnsupported) && strings.Contains(err.Error(), "symbolic size") {
				t.Skipf("symbolic shapes: %v", err)
			}
			require.NoError(t, err)
			reg := ops.Default()
			require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{Registry: reg, RequireTypes: true}))
			for n := range p.Graph.All() {
				if o, ok := n.Target().(ops.Overload); ok && n.Op() == fxgraph.CallFunction {
					_, known := reg.Op(o)
					require.True(t, known, "node %s: %s", n.Name(), o)
				}
			}
			var buf bytes.Buffer
			require.NoError(t, p.WriteArchive(&buf, reg))
			q, err := pt2.Read(buf.Bytes(), nil)
			require.NoError(t, err)
			require.Equal(t, fxgraph.Format(p.Graph), fxgraph.Format(q.Graph))
		})
	}
}
