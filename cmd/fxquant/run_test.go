package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs the command in-process and returns its exit status and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRunEmbedded is "go run ./cmd/fxquant run" on a fresh clone: the
// embedded MLP is quantized and the summary printed.
func TestRunEmbedded(t *testing.T) {
	code, out, errs := runCmd(t, "run")
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.Empty(t, errs)
	for _, want := range []string{
		"input:       <embedded mlp.float.pt2>\n",
		"user inputs: x: f32[4, 32]\n",
		"quantizer:   xnnpack-static\n",
		"calibration: 4 random batches (seed 1)\n",
		"q/dq:        3 quantize, 5 dequantize, 0 choose_qparams\n",
		"verifier:    ok\n",
		"SQNR:        ",
	} {
		assert.Contains(t, out, want)
	}
	// The same run prints the same bytes (fixed seed, no map order).
	_, out2, _ := runCmd(t, "run")
	assert.Equal(t, out, out2)
}

// TestRunSQNRIsQuantizationNoise checks the SQNR line is a plausible int8
// figure: 8-bit quantization of a two-layer MLP loses far less than the
// signal (> 20 dB) and is not lossless (< 60 dB).
func TestRunSQNRIsQuantizationNoise(t *testing.T) {
	code, out, errs := runCmd(t, "run")
	require.Equal(t, exitOK, code, errs)
	i := strings.Index(out, "SQNR:")
	require.GreaterOrEqual(t, i, 0)
	var db float64
	_, err := fmt.Sscan(strings.TrimSpace(out[i+len("SQNR:"):]), &db)
	require.NoError(t, err)
	assert.Greater(t, db, 20.0)
	assert.Less(t, db, 60.0)
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	require.NoError(t, os.WriteFile(a, []byte("graph():\n    %x : f32[2] [num_users=1] = placeholder[target=x]\n    return (x,)\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("graph():\n    %y : f32[2] [num_users=1] = placeholder[target=y]\n    return (y,)\n"), 0o644))
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("graph():\n    %x : f32[2] [num_users=1] = placeholder[target=x]\n    %r : i8[2] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n    return (r,)\n"), 0o644))
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"help"}, exitOK},
		{"dash h", []string{"-h"}, exitOK},
		{"no args", nil, exitUsage},
		{"unknown command", []string{"frob"}, exitUsage},
		{"bad flag", []string{"print", "--frob", a}, exitUsage},
		{"missing arg", []string{"print"}, exitUsage},
		{"subcommand -h", []string{"print", "-h"}, exitOK},
		{"print", []string{"print", a}, exitOK},
		{"missing file", []string{"print", filepath.Join(dir, "nosuch.pt2")}, exitFail},
		{"verify ok", []string{"verify", a}, exitOK},
		{"verify problems", []string{"verify", bad}, exitFail},
		{"diff equal", []string{"diff", a, a}, exitOK},
		{"diff differ", []string{"diff", a, b}, exitFail},
		{"dot", []string{"dot", a}, exitOK},
		{"match none", []string{"match", "--pattern", a, b}, exitOK},
		{"run bad quantizer", []string{"run", "--quantizer", "x"}, exitUsage},
		{"run text graph", []string{"run", a}, exitFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, tt.args...)
			assert.Equal(t, tt.want, code, "stderr: %s", errs)
			assert.NotContains(t, errs, "goroutine", "no Go trace on stderr")
		})
	}
}

// TestPanicIsReported checks the last-resort recover: a panicking
// subcommand exits 1 with a message, not a Go trace.
func TestPanicIsReported(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append(commands[:len(commands):len(commands)], command{"boom", func(*env, []string) error { panic("kaboom") }})
	code, _, errs := runCmd(t, "boom")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "fxquant: internal error: kaboom\n", errs)
}

// npyFile builds a .npy file by hand: magic, version, header length, the
// header dict padded with spaces to a multiple of 64 bytes and ended by
// '\n' (NumPy's layout), then the raw data.
func npyFile(major byte, header string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	h := header
	for (pre+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major >= 2 {
		binary.Write(&b, binary.LittleEndian, uint32(len(h)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	}
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func TestReadNPY(t *testing.T) {
	tests := []struct {
		name  string
		file  []byte
		dtype tensor.DType
		shape []int
		want  []float64
	}{
		// 1.0 = 0x3f800000, -2.5 = 0xc0200000, little-endian.
		{"v1 f4", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0}), tensor.Float32, []int{2}, []float64{1, -2.5}},
		// 0.5 = 0x3fe0000000000000.
		{"v1 f8 scalar", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f}), tensor.Float64, nil, []float64{0.5}},
		{"v2 i1", npyFile(2, "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }", []byte{0x01, 0xff, 0x7f, 0x80}), tensor.Int8, []int{2, 2}, []float64{1, -1, 127, -128}},
		{"v3 u1", npyFile(3, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", []byte{0, 128, 255}), tensor.UInt8, []int{3}, []float64{0, 128, 255}},
		// 258 = 0x0102; -2 = 0xfffffffe.
		{"i4", npyFile(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", []byte{0x02, 0x01, 0, 0, 0xfe, 0xff, 0xff, 0xff}), tensor.Int32, []int{2}, []float64{258, -2}},
		{"i8", npyFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", []byte{0x02, 0x01, 0, 0, 0, 0, 0, 0}), tensor.Int64, []int{1}, []float64{258}},
		{"keys in another order, double quotes", npyFile(1, `{"shape": (1, 1), "fortran_order": False, "descr": "|u1"}`, []byte{9}), tensor.UInt8, []int{1, 1}, []float64{9}},
		{"empty array", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", nil), tensor.Float32, []int{0, 3}, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readNPY(tt.file)
			require.NoError(t, err)
			assert.Equal(t, tt.dtype, got.DType())
			assert.Equal(t, tt.shape, got.Shape())
			vals, err := got.Float64s()
			require.NoError(t, err)
			require.Len(t, vals, len(tt.want))
			for i := range vals {
				assert.Equal(t, math.Float64bits(tt.want[i]), math.Float64bits(vals[i]), "element %d: got %g, want %g", i, vals[i], tt.want[i])
			}
		})
	}
}

func TestReadNPYErrors(t *testing.T) {
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"no magic", []byte("PK\x03\x04..."), "no \\x93NUMPY magic"},
		{"truncated", []byte("\x93NUMPY\x01"), "truncated header"},
		{"version 4", npyFile(1, "{}", nil)[:6:6], "truncated header"},
		{"big endian", npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", []byte{0, 0, 0, 0}), `dtype ">f4" is not supported`},
		{"fortran", npyFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", []byte{0, 0, 0, 0}), "fortran_order is True"},
		{"short data", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", []byte{0, 0, 0, 0}), "data holds 4 bytes, want 8 for shape [2]"},
		{"missing shape", npyFile(1, "{'descr': '<f4', 'fortran_order': False, }", nil), `missing key "shape"`},
		{"bad dim", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", nil), `bad dimension "x"`},
		{"header past end", []byte("\x93NUMPY\x01\x00\xff\x00{}"), "runs past the end"},
	}
	v4 := npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", []byte{0, 0, 0, 0})
	v4[6] = 4
	tests = append(tests, struct {
		name string
		file []byte
		want string
	}{"unknown version", v4, "format version 4.0"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readNPY(tt.file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestRunNPYCalibration calibrates the embedded MLP (input f32[4, 32]) on a
// .npy array of 2 batches, and rejects one whose batches have another shape.
func TestRunNPYCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, shape string, n int) string {
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i%7-3)/4))
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': "+shape+", }", data), 0o644))
		return p
	}
	good := write("good.npy", "(2, 4, 32)", 2*4*32)
	code, out, errs := runCmd(t, "run", "--calibration-data", good)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "calibration: 2 batches from "+good+"\n")
	assert.Contains(t, out, "verifier:    ok\n")

	bad := write("bad.npy", "(2, 4, 31)", 2*4*31)
	code, _, errs = runCmd(t, "run", "--calibration-data", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, bad+": batch 0, input \"x\": shape [4 31], want [4 32]")

	flat := write("flat.npy", "(128,)", 128)
	code, _, errs = runCmd(t, "run", "--calibration-data", flat)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "array shape [128], want [N 4 32]")
}

func TestReadJSONBatches(t *testing.T) {
	one := `{"shape": [2], "dtype": "float32", "values": [1.5, "NaN"]}`
	hex := `{"shape": [2], "dtype": "float32", "values": [0, 0], "hex": ["3f800000", "c0200000"]}`
	ints := `{"shape": [3], "dtype": "int8", "values": [-128, 0, 127]}`
	tests := []struct {
		name    string
		src     string
		batches int
		per     int
		first   []float64
	}{
		{"list of tensors", "[" + one + "," + one + "]", 2, 1, []float64{1.5, math.NaN()}},
		{"list of lists", "[[" + hex + "," + ints + "]]", 1, 2, []float64{1, -2.5}},
		{"outputs file", `{"format": "fxquant-pt2e-outputs/1", "inputs": {"calibration": [` + hex + `], "eval": []}}`, 1, 1, []float64{1, -2.5}},
		{"int8", "[" + ints + "]", 1, 1, []float64{-128, 0, 127}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readJSONBatches([]byte(tt.src))
			require.NoError(t, err)
			require.Len(t, got, tt.batches)
			require.Len(t, got[0], tt.per)
			vals, err := got[0][0].Float64s()
			require.NoError(t, err)
			require.Len(t, vals, len(tt.first))
			for i := range vals {
				if math.IsNaN(tt.first[i]) {
					assert.True(t, math.IsNaN(vals[i]), "element %d", i)
					continue
				}
				assert.Equal(t, tt.first[i], vals[i], "element %d", i)
			}
		})
	}
	errTests := []struct {
		name, src, want string
	}{
		{"not json", "[{", "json: "},
		{"scalar", "3", "want a list of tensors"},
		{"object without inputs", `{"a": 1}`, "inputs.calibration"},
		{"bad dtype", `[{"shape": [1], "dtype": "float99", "values": [1]}]`, `batch 0: dtype "float99"`},
		{"count", `[{"shape": [2], "dtype": "float32", "values": [1]}]`, "values has 1 elements, want 2"},
		{"bad hex", `[{"shape": [1], "dtype": "float32", "values": [1], "hex": ["xyz"]}]`, `hex[0] = "xyz"`},
		{"int overflow", `[{"shape": [1], "dtype": "int8", "values": [300]}]`, "element 0 is 300"},
		{"string value", `[{"shape": [1], "dtype": "float32", "values": ["one"]}]`, `values[0]: want a number, got "one"`},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readJSONBatches([]byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestRandomBatchesSeeded checks the random batches depend only on the seed.
func TestRandomBatchesSeeded(t *testing.T) {
	specs := []inputSpec{{name: "x", dtype: tensor.Float32, shape: []int{2, 3}}}
	a, err := randomBatches(specs, 2, 5)
	require.NoError(t, err)
	b, err := randomBatches(specs, 2, 5)
	require.NoError(t, err)
	c, err := randomBatches(specs, 2, 6)
	require.NoError(t, err)
	require.Len(t, a, 2)
	assert.True(t, tensor.Equal(a[0][0], b[0][0]))
	assert.True(t, tensor.Equal(a[1][0], b[1][0]))
	assert.False(t, tensor.Equal(a[0][0], c[0][0]))
	assert.False(t, tensor.Equal(a[0][0], a[1][0]))
	assert.Equal(t, []int{2, 3}, a[0][0].Shape())
}
