package fxgraph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Every PyTorch listing in tests/testdata/pt2e (discovered by glob):
// each line parses into a row that re-formats to the same bytes, and the
// graph built from the rows prints the whole file back with FormatListing.
func TestListingFixtures(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/pt2e/*.graph.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			text := string(data)
			rows, err := fxgraph.ParseListingString(text)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			require.Len(t, rows, len(lines))
			for i, r := range rows {
				assert.Equal(t, lines[i], r.String(), "line %d", i+1)
			}
			g, err := fxgraph.GraphFromListing(rows)
			require.NoError(t, err)
			assert.Equal(t, text, fxgraph.FormatListing(g))
		})
	}
}

// The listing conventions of tests/testdata/pt2e/README.md, on rows
// copied from the fixtures: str(target) for overloads, packets and
// getitem; quoted strings and dict keys; one-tuples; Python float repr.
func TestListingRowConventions(t *testing.T) {
	tests := []struct {
		name string
		row  fxgraph.ListingRow
		want string
	}{
		{"packet with tuple block size and kwarg",
			fxgraph.ListingRow{Name: "dequantize_affine", Op: fxgraph.CallFunction, Target: "torchao.dequantize_affine",
				Args: []ops.Value{fxgraph.Ref{Name: "quantize_affine"}, ops.Tuple{int64(1), int64(8)}, fxgraph.Ref{Name: "_scale0"},
					fxgraph.Ref{Name: "_zero_point0"}, tensor.Int8, int64(-8), int64(7)},
				Kwargs: []fxgraph.Kwarg{{Name: "output_dtype", Value: tensor.Float32}}},
			"dequantize_affine | call_function | torchao.dequantize_affine | (%quantize_affine, (1, 8), %_scale0, %_zero_point0, torch.int8, -8, 7) | {'output_dtype': torch.float32}"},
		{"quoted string and eps",
			fxgraph.ListingRow{Name: "choose_qparams_affine", Op: fxgraph.CallFunction, Target: "torchao.choose_qparams_affine",
				Args: []ops.Value{fxgraph.Ref{Name: "x"}, "ASYMMETRIC", ops.Tuple{int64(1), int64(32)}, tensor.Int8, int64(-128), int64(127),
					1.1920928955078125e-07, tensor.Float32, tensor.Int32}},
			"choose_qparams_affine | call_function | torchao.choose_qparams_affine | (%x, 'ASYMMETRIC', (1, 32), torch.int8, -128, 127, 1.1920928955078125e-07, torch.float32, torch.int32) | {}"},
		{"output one-tuple",
			fxgraph.ListingRow{Name: "output", Op: fxgraph.Output, Target: "output", Args: []ops.Value{ops.Tuple{fxgraph.Ref{Name: "linear"}}}},
			"output | output | output | ((%linear,),) | {}"},
		{"get_attr", fxgraph.ListingRow{Name: "conv1_bias", Op: fxgraph.GetAttr, Target: "conv1.bias"}, "conv1_bias | get_attr | conv1.bias | () | {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.row.String())
			rows, err := fxgraph.ParseListingString(tt.want + "\n")
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assert.Equal(t, tt.want, rows[0].String())
		})
	}
}

// ListingTarget prints str(target): overloads with their overload name,
// packets without, operator functions as built-ins.
func TestListingTarget(t *testing.T) {
	g := fxgraph.New()
	x := g.Placeholder("x", nil)
	tests := []struct {
		target ops.Target
		want   string
	}{
		{ops.MustOverload("aten.linear.default"), "aten.linear.default"},
		{ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor"), "quantized_decomposed.quantize_per_tensor.tensor"},
		{ops.MustPacket("torchao.quantize_affine"), "torchao.quantize_affine"},
		{ops.GetItem, "<built-in function getitem>"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fxgraph.ListingTarget(g.Call(tt.target, x)))
		})
	}
}

func TestParseListingErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"missing fields", "x | placeholder\n", `line 1:5: want an opcode followed by " | "`},
		{"bad opcode", "x | nop | x | () | {}\n", `line 1:5: want an opcode, got "nop"`},
		{"bare word", "a | call_function | aten.relu.default | (x,) | {}\n", `line 1:42: want a value (%node, number, quoted string, None, True, False, torch.*), got "x"`},
		{"args not a tuple", "a | call_function | aten.relu.default | [%x] | {}\n", `line 1:41: want the args tuple, got [%x]`},
		{"kwargs missing", "a | call_function | aten.relu.default | (%x,)\n", `line 1:46: want " | ", got end of line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fxgraph.ParseListingString(tt.src)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestGraphFromListingErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"forward reference", "a | call_function | aten.relu.default | (%b,) | {}\nb | placeholder | b | () | {}\n",
			`fxgraph: listing row 1 (a): arg 0: unknown node %b (not defined on an earlier row)`},
		{"duplicate", "a | placeholder | a | () | {}\na | placeholder | b | () | {}\n", `fxgraph: listing row 2: duplicate node name "a"`},
		{"bad target", "a | call_function | aten..x | () | {}\n", `fxgraph: listing row 1 (a): ops: bad target "aten..x": empty or invalid segment`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := fxgraph.ParseListingString(tt.src)
			require.NoError(t, err)
			_, err = fxgraph.GraphFromListing(rows)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// FuzzParseListing: bad input is an error, never a panic; a parsed row
// re-formats and re-parses to the same text.
func FuzzParseListing(f *testing.F) {
	files, err := filepath.Glob("../tests/testdata/pt2e/*.graph.txt")
	require.NoError(f, err)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		for _, line := range strings.Split(string(data), "\n") {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		rows, err := fxgraph.ParseListingString(src)
		if err != nil {
			return
		}
		for _, r := range rows {
			out := r.String()
			again, err := fxgraph.ParseListingString(out)
			require.NoError(t, err, "re-parse of %q", out)
			require.Len(t, again, 1)
			require.Equal(t, out, again[0].String())
		}
	})
}
