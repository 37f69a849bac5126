package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rewriteEntry returns a copy of the zip archive with f applied to the
// entry whose name ends in suffix; entries keep their order and method.
func rewriteEntry(t *testing.T, archive []byte, suffix string, f func([]byte) []byte) []byte {
	t.Helper()
	return copyZip(t, archive, true, func(name string, data []byte) []byte {
		if strings.HasSuffix(name, suffix) {
			return f(data)
		}
		return data
	})
}

// copyZip copies the zip archive src, in entry order, passing each
// entry's bytes through edit (by entry name); each entry keeps its
// compression method when keepMethod holds and is stored otherwise.
func copyZip(t *testing.T, src []byte, keepMethod bool, edit func(name string, data []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range zr.File {
		rc, err := e.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		method := zip.Store
		if keepMethod {
			method = e.Method
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.Name, Method: method})
		require.NoError(t, err)
		_, err = w.Write(edit(e.Name, data))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestRunAllowOpaque: run reads a program calling an operator no registry
// knows only with --allow-opaque, as the other commands do; the run then
// stops where the operator must be computed, naming the node and the op.
func TestRunAllowOpaque(t *testing.T) {
	data := rewriteEntry(t, embeddedModel, "models/model.json", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"torch.ops.aten.relu.default"`), []byte(`"torch.ops.mylib.custom_relu.default"`), 1)
	})
	file := filepath.Join(t.TempDir(), "opaque.pt2")
	require.NoError(t, os.WriteFile(file, data, 0o644))

	code, _, errs := runCmd(t, "run", "--no-progress", file)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "mylib.custom_relu.default")

	code, _, errs = runCmd(t, "run", "--no-progress", "--allow-opaque", file)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "mylib.custom_relu.default")
	assert.Contains(t, errs, "relu", "names the node")
	assert.NotContains(t, errs, "not in the op registry", "read past the registry")
	t.Log(errs)
}
