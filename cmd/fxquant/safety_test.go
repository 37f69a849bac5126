package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rezip copies the zip archive src, passing each entry's bytes through
// edit (by entry name), and returns the new archive (entries stored).
func rezip(t *testing.T, src []byte, edit func(name string, data []byte) []byte) []byte {
	t.Helper()
	return copyZip(t, src, false, edit)
}

// replaceIn returns an edit for rezip that replaces old by new, exactly
// once, in the entries whose name ends in suffix.
func replaceIn(t *testing.T, suffix, old, new string) func(string, []byte) []byte {
	return func(name string, data []byte) []byte {
		if !strings.HasSuffix(name, suffix) {
			return data
		}
		require.Equal(t, 1, bytes.Count(data, []byte(old)), "%s: %q", name, old)
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
}

// TestOutputNamingInputIsRefused gives -o and --dot the input file (and
// the calibration data) under several spellings: every one is refused
// before anything runs, and the input is unchanged.
func TestOutputNamingInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pt2")
	require.NoError(t, os.WriteFile(in, embeddedModel, 0o644))
	require.NoError(t, os.Symlink("in.pt2", filepath.Join(dir, "link.pt2")))
	require.NoError(t, os.Link(in, filepath.Join(dir, "hard.pt2")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	calib := filepath.Join(dir, "calib.npy")
	require.NoError(t, os.WriteFile(calib, npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 32), }", make([]byte, 4*4*32)), 0o644))
	t.Chdir(dir)

	spellings := []string{
		"in.pt2", "./in.pt2", in, "sub/../in.pt2", filepath.Join(dir, "sub", "..", "in.pt2"),
		"link.pt2", "hard.pt2",
	}
	for _, flag := range []string{"-o", "--dot"} {
		for _, sp := range spellings {
			code, out, errs := runCmd(t, "run", "in.pt2", flag, sp)
			assert.Equal(t, exitUsage, code, "%s %s: stderr %s", flag, sp, errs)
			assert.Contains(t, errs, "refusing to overwrite an input", "%s %s", flag, sp)
			assert.Empty(t, out, "%s %s: nothing runs", flag, sp)
		}
	}
	// The calibration data is an input too.
	code, _, errs := runCmd(t, "run", "in.pt2", "--calibration-data", calib, "-o", "calib.npy")
	assert.Equal(t, exitUsage, code, errs)
	assert.Contains(t, errs, "--calibration-data")
	// -o and --dot naming one new file.
	code, _, errs = runCmd(t, "run", "in.pt2", "-o", "new.out", "--dot", "./new.out")
	assert.Equal(t, exitUsage, code, errs)
	assert.Contains(t, errs, "name the same file")
	_, err := os.Stat("new.out")
	assert.ErrorIs(t, err, os.ErrNotExist)

	got, err := os.ReadFile(in)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(embeddedModel, got), "the input changed")

	// A different file is written, atomically: nothing else is left.
	code, _, errs = runCmd(t, "run", "in.pt2", "-o", "out.pt2", "--dot", "out.dot", "--no-progress")
	require.Equal(t, exitOK, code, errs)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"in.pt2", "link.pt2", "hard.pt2", "sub", "calib.npy", "out.pt2", "out.dot"}, names)
}

// TestRunRefusesBrokenInput: an input whose recorded types are wrong (the
// relu's result recorded as uint8) is refused with the verifier's
// problems, unless --force, which warns and runs.
func TestRunRefusesBrokenInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pt2")
	data := rezip(t, embeddedModel, replaceIn(t, "models/model.json",
		`"relu": {"dtype": 7,`, `"relu": {"dtype": 1,`))
	require.NoError(t, os.WriteFile(bad, data, 0o644))

	code, out, errs := runCmd(t, "run", bad, "--no-progress")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "the input fails verification (--force runs it anyway)")
	assert.Contains(t, errs, `node "relu"`)

	code, out, errs = runCmd(t, "run", bad, "--force", "--no-progress")
	assert.Contains(t, errs, "warning: "+bad+" fails verification; running it anyway (--force)")
	assert.Contains(t, errs, `node "relu"`)
	assert.Contains(t, out, "input:       "+bad, "the run went on (exit %d)", code)
}

// TestRunDoesNotWriteUnverified: when the converted graph fails
// verification, -o is not written (an existing file stays as it was)
// unless --force is given.
func TestRunDoesNotWriteUnverified(t *testing.T) {
	saved := verifyConverted
	t.Cleanup(func() { verifyConverted = saved })
	verifyConverted = func(*fxgraph.Graph) error {
		return errors.Join(&fxgraph.VerifyError{Node: "x", Check: fxgraph.ErrTypeMismatch, Got: "injected"})
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "q.pt2")
	require.NoError(t, os.WriteFile(out, []byte("previous"), 0o644))

	code, stdout, errs := runCmd(t, "run", "-o", out, "--no-progress")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "not writing "+out+": the quantized graph fails verification")
	assert.NotContains(t, stdout, "wrote "+out)
	got, _ := os.ReadFile(out)
	assert.Equal(t, "previous", string(got))

	code, stdout, errs = runCmd(t, "run", "-o", out, "--force", "--no-progress")
	assert.Equal(t, exitFail, code, "verification still failed")
	assert.Contains(t, errs, "warning: writing "+out)
	assert.Contains(t, stdout, "wrote "+out)
	got, _ = os.ReadFile(out)
	assert.True(t, bytes.HasPrefix(got, []byte("PK")), "the archive was written")
}

// TestVerifyChecksLiftedQParams corrupts one per-channel scale of the
// quantized MLP fixture (the lifted buffer _scale_0, element 5, set to
// -1.0): the reader refuses it where it enters, naming the stored buffer,
// its placeholder, the element and the node and argument it feeds, for
// verify and run alike. (The verifier's own check of lifted values, which
// a graph built in Go reaches, is tested in fxgraph.)
func TestVerifyChecksLiftedQParams(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "tests", "testdata", "pt2e", "mlp.static.pt2"))
	require.NoError(t, err)
	data := rezip(t, src, func(name string, data []byte) []byte {
		if !strings.HasSuffix(name, "data/weights/weight_4") { // _scale_0, f32[64]
			return data
		}
		require.Len(t, data, 64*4)
		out := bytes.Clone(data)
		copy(out[5*4:], []byte{0x00, 0x00, 0x80, 0xbf}) // -1.0f, little-endian
		return out
	})
	bad := filepath.Join(t.TempDir(), "bad.pt2")
	require.NoError(t, os.WriteFile(bad, data, 0o644))

	const want = `buffer "_scale_0" (placeholder "b__scale_0"): element [5] is -1, but it is the scales of node "dequantize_per_channel" (quantized_decomposed.dequantize_per_channel.default), which must be finite and > 0`
	code, _, errs := runCmd(t, "verify", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, want)

	code, out, errs := runCmd(t, "run", bad, "--no-progress")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, want)
}

// TestTextGraphUnknownOpRefused: a text graph (golden text or listing)
// calling an operator the registry does not know is refused by every
// reading command, naming the node; --allow-opaque reads it.
func TestTextGraphUnknownOpRefused(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "g.txt")
	require.NoError(t, os.WriteFile(txt, []byte("graph():\n"+
		"    %x : f32[2] [num_users=1] = placeholder[target=x]\n"+
		"    %f : f32[2] [num_users=1] = call_function[target=torch.ops.aten.frobnicate.default](args = (%x,), kwargs = {})\n"+
		"    return (f,)\n"), 0o644))
	listing := filepath.Join(dir, "g.listing")
	require.NoError(t, os.WriteFile(listing, []byte("x | placeholder | x | () | {}\n"+
		"f | call_function | aten.frobnicate.default | (%x,) | {}\n"+
		"output | output | output | ((%f,),) | {}\n"), 0o644))
	for _, file := range []string{txt, listing} {
		for _, cmd := range []string{"print", "verify", "dot"} {
			code, _, errs := runCmd(t, cmd, file)
			assert.Equal(t, exitFail, code, "%s %s", cmd, file)
			assert.Contains(t, errs, `node "f" calls aten.frobnicate.default, which is not in the op registry (--allow-opaque reads it)`, "%s %s", cmd, file)
		}
		code, out, errs := runCmd(t, "print", "--allow-opaque", file)
		assert.Equal(t, exitOK, code, errs)
		assert.Contains(t, out, "aten.frobnicate.default")
	}
}

// TestRunCalibrationDataNaN: a NaN in --calibration-data (batch 1,
// element [2, 5] of input x) is reported against the batch, the input and
// the element when the file is read, and nothing is written.
func TestRunCalibrationDataNaN(t *testing.T) {
	dir := t.TempDir()
	n := 2 * 4 * 32
	data := make([]byte, 4*n)
	for i := range n {
		v := float32(i%7-3) / 4
		if i == 4*32+69 {
			v = float32(math.NaN())
		}
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	calib := filepath.Join(dir, "nan.npy")
	require.NoError(t, os.WriteFile(calib, npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 32), }", data), 0o644))
	out := filepath.Join(dir, "q.pt2")
	code, _, errs := runCmd(t, "run", "--calibration-data", calib, "-o", out, "--no-progress")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, `batch 1, input "x": element [2 5] is NaN; calibration data must be finite`)
	_, err := os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
