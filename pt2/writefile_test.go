package pt2_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// TestWriteFileAtomic: WriteFile replaces an existing file whole (through
// a symbolic link, which stays a link) and leaves no temporary file; a
// program that cannot be written leaves the old file as it was.
func TestWriteFileAtomic(t *testing.T) {
	p, err := pt2.ReadFile(filepath.Join(fixtureDir, "mlp.float.pt2"), opaque)
	require.NoError(t, err)
	dir := t.TempDir()
	real := filepath.Join(dir, "model.pt2")
	link := filepath.Join(dir, "link.pt2")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o600))
	require.NoError(t, os.Symlink("model.pt2", link))

	require.NoError(t, p.WriteFile(link, nil))
	back, err := pt2.ReadFile(real, opaque)
	require.NoError(t, err)
	assert.Equal(t, p.Graph.Len(), back.Graph.Len())
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link was replaced")
	fi, err = os.Stat(real)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the old file's mode is kept")

	// A program without a graph fails before anything is written.
	good, err := os.ReadFile(real)
	require.NoError(t, err)
	require.Error(t, (&pt2.Program{}).WriteFile(real, nil))
	got, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, good, got)

	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"model.pt2", "link.pt2"}, names)
}

// TestLiftedAttrs: the converted MLP's lifted state by placeholder name,
// as VerifyOptions.Lifted takes it: the ten parameter and buffer inputs
// of the file's input_specs (the user input x is not one).
func TestLiftedAttrs(t *testing.T) {
	p, err := pt2.ReadFile(filepath.Join(fixtureDir, "mlp.static.pt2"), opaque)
	require.NoError(t, err)
	m := p.LiftedAttrs()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"p_fc1_weight", "p_fc1_bias", "p_fc2_weight", "p_fc2_bias",
		"b__scale_0", "b__zero_point_0", "b__scale_1", "b__zero_point_1", "b__frozen_param0", "b__frozen_param1"}, keys)
	require.NotNil(t, m["b__scale_0"])
	assert.Equal(t, []int{64}, m["b__scale_0"].Shape())
	assert.Nil(t, (*pt2.Program)(nil).LiftedAttrs())
}
