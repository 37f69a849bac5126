package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops/tensor"
)

// stubCompare makes compare the per-node comparison of run and report
// for the test.
func stubCompare(t testing.TB, compare func(f, q *fxgraph.Graph, b [][]*tensor.Tensor) (*numdebug.Comparison, error)) {
	t.Helper()
	old := compareGraphs
	compareGraphs = compare
	t.Cleanup(func() { compareGraphs = old })
}

// withComparison records the comparisons the report got.
func withComparison(t testing.TB) *[]*numdebug.Comparison {
	t.Helper()
	var got []*numdebug.Comparison
	stubCompare(t, func(f, q *fxgraph.Graph, b [][]*tensor.Tensor) (*numdebug.Comparison, error) {
		c, err := numdebug.Compare(f, q, b)
		if err == nil {
			got = append(got, c)
		}
		return c, err
	})
	return &got
}

// "fxquant report" with no argument reports on the embedded model and
// writes report.html in the current directory; a second run writes the
// same bytes.
func TestReportDefault(t *testing.T) {
	withComparison(t)
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote report.html") || !strings.Contains(stdout.String(), "SQNR:") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	first, err := os.ReadFile("report.html")
	if err != nil {
		t.Fatal(err)
	}
	want := pipelineGraphs(t)
	for _, s := range []string{
		"<title>fxquant report: &lt;embedded mlp.float.pt2&gt;</title>",
		`Float graph <span class="count">` + strconv.Itoa(want.float.Len()) + " nodes",
		`Quantized graph <span class="count">` + strconv.Itoa(want.quant.Len()) + " nodes",
		"quantizer", "xnnpack-static", `<table id="node-table">`,
	} {
		if !bytes.Contains(first, []byte(s)) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	if code := run([]string{"report"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, stderr.String())
	}
	second, _ := os.ReadFile("report.html")
	if !bytes.Equal(first, second) {
		t.Error("two reports of the same run differ")
	}
}

// A failing comparison still gives a page, uncoloured, that says why; the
// command warns and succeeds.
func TestReportComparisonFails(t *testing.T) {
	stubCompare(t, func(*fxgraph.Graph, *fxgraph.Graph, [][]*tensor.Tensor) (*numdebug.Comparison, error) {
		return nil, errors.New("no handles")
	})
	out := filepath.Join(t.TempDir(), "r.html")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--no-progress", "-o", out}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "warning: the per-node comparison failed: no handles") {
		t.Errorf("stderr: %s", stderr.String())
	}
	page, _ := os.ReadFile(out)
	if !bytes.Contains(page, []byte("Nodes are not coloured: the per-node comparison failed: no handles")) {
		t.Error("the page does not say why its nodes are not coloured")
	}
}

func TestReportUsage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.pt2")
	if err := os.WriteFile(in, embeddedModel, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report", in, "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"report", "--quantizer", "nope"}, exitUsage, `--quantizer "nope"`},
		{[]string{"report", in, "-o", in}, exitUsage, "-o"},
		{[]string{"report", filepath.Join(dir, "missing.pt2"), "-o", filepath.Join(dir, "r.html")}, exitFail, "missing.pt2"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, strings.NewReader(""), &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err == nil {
		t.Error("a failed report wrote its page")
	}
}

// report takes run's flags; -h says that its -o is the HTML page, and the
// usage text lists the command.
func TestReportHelp(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"report", "-h"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("report -h: exit %d\n%s", code, out.String())
	}
	for _, s := range []string{"usage: fxquant report [FILE] [run flags] [-o REPORT.html]", "write the HTML report to this file (default report.html)", "-calibration-data", "-reference"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report -h lacks %q:\n%s", s, out.String())
		}
	}
	if !strings.Contains(usageText, "fxquant report [FILE] [run flags] [-o REPORT.html]") {
		t.Error("the usage text does not list report")
	}
}

// The report names the quantizer as run's summary does: with
// --per-tensor the page says so (it once showed the bare flag value).
func TestReportQuantizerAsRun(t *testing.T) {
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--per-tensor"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	page, err := os.ReadFile("report.html")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("xnnpack-static (per-tensor weights)")) {
		t.Error("report.html does not name the quantizer as run does: xnnpack-static (per-tensor weights)")
	}
	if !strings.Contains(stdout.String(), "xnnpack-static (per-tensor weights)") {
		t.Errorf("run's summary: %s", stdout.String())
	}
}
