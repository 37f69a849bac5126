package pt2_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// TestFixturesDefaultRegistry reads every fixture with the built-in
// registry (no opaque ops): every operator must be known and its schema
// must bind the serialized arguments; the round trip through the
// schema-driven writer must give the same graph.
func TestFixturesDefaultRegistry(t *testing.T) {
	for _, file := range fixtures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p1, err := pt2.ReadFile(file, nil)
			require.NoError(t, err)
			p0, err := pt2.ReadFile(file, opaque)
			require.NoError(t, err)
			assert.Equal(t, fxgraph.FormatListing(p0.Graph), fxgraph.FormatListing(p1.Graph))
			var buf bytes.Buffer
			require.NoError(t, p1.WriteArchive(&buf, nil))
			p2, err := pt2.Read(buf.Bytes(), nil)
			require.NoError(t, err)
			assert.Equal(t, dumpGraph(p1.Graph), dumpGraph(p2.Graph))
			requireSameWeights(t, p1, p2)
			j0, err := p0.EncodeJSON(nil)
			require.NoError(t, err)
			j1, err := p1.EncodeJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, string(j0), string(j1), "schema-driven and opaque writers agree")
		})
	}
}
