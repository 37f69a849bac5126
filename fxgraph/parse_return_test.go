package fxgraph_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenRelu is a complete golden-text graph; the tests below drop or
// double its return line.
const goldenRelu = "graph():\n" +
	"    %x : f32[2] [num_users=1] = placeholder[target=x]\n" +
	"    %relu : f32[2] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})\n" +
	"    return (relu,)\n"

// TestParseReturnLineErrors: a golden file whose return line is missing
// or doubled is reported as such, not as the num_users mismatch it also
// causes (issue 14).
func TestParseReturnLineErrors(t *testing.T) {
	_, err := fxgraph.ParseString(goldenRelu)
	require.NoError(t, err)

	missing := strings.Replace(goldenRelu, "    return (relu,)\n", "", 1)
	_, err = fxgraph.ParseString(missing)
	var pe *fxgraph.ParseError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, err.Error(), "missing return line: the graph has no output")
	assert.Contains(t, err.Error(), "%relu")

	doubled := goldenRelu + "    return (relu,)\n"
	_, err = fxgraph.ParseString(doubled)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "line 5:5: duplicate return line: the graph already returns on line 4, and a graph has one output", err.Error())
	assert.NotContains(t, err.Error(), "num_users")

	// Doubled with the counts adjusted to agree: still refused.
	adjusted := strings.Replace(doubled, "%relu : f32[2] [num_users=1]", "%relu : f32[2] [num_users=2]", 1)
	_, err = fxgraph.ParseString(adjusted)
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, err.Error(), "duplicate return line")
}

// TestParseFragmentWithoutReturn: text without a return line whose counts
// agree is a fragment; it parses, and Verify reports the missing output.
func TestParseFragmentWithoutReturn(t *testing.T) {
	g, err := fxgraph.ParseString("graph():\n    %x : f32[2] [num_users=0] = placeholder[target=x]\n")
	require.NoError(t, err)
	problems := fxgraph.VerifyErrors(fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	require.Len(t, problems, 1)
	assert.True(t, errors.Is(problems[0], fxgraph.ErrOutput), "%v", problems[0])
}

// TestListingOutputRowErrors: a listing without an output row, or with
// two, is refused naming the rows.
func TestListingOutputRowErrors(t *testing.T) {
	const rows = "x | placeholder | x | () | {}\n" +
		"relu | call_function | aten.relu.default | (%x,) | {}\n"
	const out = "output | output | output | ((%relu,),) | {}\n"
	parse := func(src string) error {
		r, err := fxgraph.ParseListingString(src)
		require.NoError(t, err)
		_, err = fxgraph.GraphFromListing(r)
		return err
	}
	require.NoError(t, parse(rows+out))
	err := parse(rows)
	require.Error(t, err)
	assert.Equal(t, "fxgraph: listing: missing output row: none of the 2 rows has opcode output", err.Error())
	err = parse(rows + out + strings.Replace(out, "output | output", "output_1 | output", 1))
	require.Error(t, err)
	assert.Equal(t, "fxgraph: listing row 4 (output_1): duplicate output row: row 3 is already the output, and a graph has one", err.Error())
}
