package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunWorstNodesAreTorchaos runs the cnn fixture as torchao's numeric
// debugger ran it (calibrated on the recorded calibration batches,
// measured on the recorded eval inputs, which --eval-data takes from an
// outputs file's inputs.eval) and checks the summary's worst five rows
// against torchao's compare_results (tests/testdata/numdebug).
func TestRunWorstNodesAreTorchaos(t *testing.T) {
	const pt2e = "../../tests/testdata/pt2e/"
	code, out, errs := runCmd(t, "run", pt2e+"cnn.float.pt2", "--calibration-data", pt2e+"cnn.outputs.json",
		"--eval-data", pt2e+"cnn.outputs.json", "--no-progress")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "eval:        2 batches from "+pt2e+"cnn.outputs.json\n")

	data, err := os.ReadFile("../../tests/testdata/numdebug/cnn.expected.json")
	require.NoError(t, err)
	var want struct {
		Results []struct {
			FloatNode string  `json:"float_node"`
			SQNRTotal float64 `json:"sqnr_total"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(data, &want))
	torchao := map[string]float64{}
	for _, r := range want.Results {
		torchao[r.FloatNode] = r.SQNRTotal
	}
	_, table, ok := strings.Cut(out, "worst nodes by SQNR (5 of 7 compared")
	require.True(t, ok, out)
	rows := regexp.MustCompile(`(?m)^  (\w+) +\S+ +([0-9.]+) dB `).FindAllStringSubmatch(table, -1)
	require.Len(t, rows, 5, table)
	var prev float64
	for _, row := range rows {
		var got float64
		_, err := fmt.Sscan(row[2], &got)
		require.NoError(t, err)
		w, ok := torchao[row[1]]
		require.True(t, ok, "%s is not a node torchao compared", row[1])
		assert.InDelta(t, w, got, 0.006, "%s: summary %.2f dB, torchao %.4f dB", row[1], got, w)
		assert.GreaterOrEqual(t, got, prev, "rows sorted by SQNR")
		prev = got
	}
	// The five worst of torchao's seven are listed.
	assert.Equal(t, "conv2d", rows[0][1])
}
