package main

import (
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
)

// pipelineGraphs reruns the pipeline of args (deterministic) for the
// expected node counts.
func pipelineGraphs(t testing.TB, args ...string) *runResult {
	t.Helper()
	c, err := parseRunFlags(&env{stdout: io.Discard, stderr: io.Discard}, append(args, "--no-progress"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := runPipeline(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// browser starts Debian's headless chromium (FXQUANT_CHROMIUM names
// another binary), or skips the test when there is none; a chromium that
// does not start fails it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("FXQUANT_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		t.Skip("no chromium installed (apt-get install chromium, or set FXQUANT_CHROMIUM): skipping the browser test of fxquant report")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900), chromedp.Flag("hide-scrollbars", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		// Installed but broken is a failure: CI installs chromium to run this.
		t.Fatalf("chromium at %s does not start: %v", path, err)
	}
	return ctx
}

// TestReportBrowser opens the report of the embedded model in headless
// chromium: both SVGs have one node box per graph node, clicking a node
// shows its numbers and its histogram and selects its counterpart,
// sorting by SQNR puts the worst node first. The screenshot is saved in
// $FXQUANT_REPORT_SCREENSHOT, or in the test's temporary directory.
func TestReportBrowser(t *testing.T) {
	ctx := browser(t)
	cmps := withComparison(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var stdout, stderr strings.Builder
	if code := run([]string{"report", "--no-progress", "-o", page}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	if len(*cmps) != 1 {
		t.Fatalf("the report ran %d comparisons, want 1", len(*cmps))
	}
	cmp := (*cmps)[0]
	want := pipelineGraphs(t)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#svg-q"))))
	nf, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#svg-f g.n").length`))
	must(err)
	nq, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#svg-q g.n").length`))
	must(err)
	if nf != want.float.Len() || nq != want.quant.Len() {
		t.Errorf("SVG node boxes: float %d, quantized %d; want %d and %d", nf, nq, want.float.Len(), want.quant.Len())
	}

	// Click the float graph's relu: its numbers, its histogram (2048 bins
	// drawn as 64 bars), and the quantized relu selected too.
	var res *numdebug.Result
	for i := range cmp.Results {
		if cmp.Results[i].FloatNode == "relu" {
			res = &cmp.Results[i]
		}
	}
	if res == nil {
		t.Fatalf("the comparison has no result for relu: %+v", cmp.Results)
	}
	fi := slices.IndexFunc(want.float.Nodes(), func(n *fxgraph.Node) bool { return n.Name() == "relu" })
	qi := slices.IndexFunc(want.quant.Nodes(), func(n *fxgraph.Node) bool { return n.Name() == res.QuantNode })
	reluBox := chromedp.CSS(`#svg-f g.n[data-i="` + strconv.Itoa(fi) + `"] rect`)
	must(chromedp.Do(ctx, chromedp.Click(reluBox), chromedp.WaitVisible(chromedp.CSS("#d-sqnr"))))
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".d-name")))
	must(err)
	sqnr, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#d-sqnr")))
	must(err)
	maxErr, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#d-err")))
	must(err)
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#d-hist svg rect").length`))
	must(err)
	qsel, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#svg-q g.n[data-i="`+strconv.Itoa(qi)+`"]').getAttribute("class")`))
	must(err)
	if name != "relu" {
		t.Errorf("details show node %q, want relu", name)
	}
	if want := strconv.FormatFloat(res.SQNR, 'f', 2, 64); sqnr != want {
		t.Errorf("details SQNR %q, want %q", sqnr, want)
	}
	if want := strconv.FormatFloat(res.MaxAbsErr, 'g', 4, 64); maxErr != want {
		t.Errorf("details max abs err %q, want %q", maxErr, want)
	}
	if bars != 64 {
		t.Errorf("histogram has %d bars, want 64 (2048 bins in groups of 32)", bars)
	}
	if !strings.Contains(" "+qsel+" ", " sel ") {
		t.Errorf("quantized node %s not selected: class %q", res.QuantNode, qsel)
	}

	// Sort by SQNR (ascending): the worst node comes first.
	worst := cmp.Results[0]
	for _, r := range cmp.Results {
		if r.SQNR < worst.SQNR {
			worst = r
		}
	}
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#node-table th[data-c="4"]`))))
	first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#node-table tbody tr:first-child td:nth-child(2)`)))
	must(err)
	if first != worst.FloatNode {
		t.Errorf("sorted by SQNR, the first row is %q, want %q (%.2f dB)", first, worst.FloatNode, worst.SQNR)
	}

	// Search: typing a name filters the table, Enter selects the first row.
	must(chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#filter"), "linear_1\r")))
	name, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".d-name")))
	must(err)
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#shown")))
	must(err)
	if name != "linear_1" || shown != "1 of "+strconv.Itoa(len(cmp.Results))+" rows" {
		t.Errorf("after searching linear_1: details show %q, the table %q; want linear_1 and 1 of %d rows", name, shown, len(cmp.Results))
	}

	// Back to the page as it opens, with relu selected, for the screenshot.
	must(chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#svg-q")),
		chromedp.Click(reluBox), chromedp.WaitVisible(chromedp.CSS("#d-hist"))))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	must(err)
	shot := os.Getenv("FXQUANT_REPORT_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	must(os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// TestReportBrowserLarge opens the report of a 500-layer MLP (12,013
// quantized nodes) and measures the time from the file's read to the
// first frame after the page's script ran: it must be under 2 s. Then it
// scrolls to the bottom (the bands there are drawn) and draws every band
// (one box per node).
func TestReportBrowserLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 500-layer report in a browser")
	}
	ctx := browser(t)
	withComparison(t)
	dir := t.TempDir()
	mlp := deepMLP(t, dir, 500, 64)
	page := filepath.Join(dir, "report.html")
	var stderr strings.Builder
	if code := run([]string{"report", mlp, "--reference", "--no-progress", "-o", page}, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("FXQUANT_REPORT_KEEP"); keep != "" {
		data, _ := os.ReadFile(page)
		os.WriteFile(keep, data, 0o644)
	}
	// The page's own work: parsing, the script and the first frame, from
	// the moment the file is read (reading 6 MB from disk is the test
	// machine's business). A timing on a shared machine is noisy: the best
	// of three loads counts.
	best := math.Inf(1)
	var nq int
	for try := range 3 {
		start := time.Now()
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#svg-q"))); err != nil {
			t.Fatal(err)
		}
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise(function(r){requestAnimationFrame(function(){setTimeout(function(){r(performance.now())},0)})})`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		nav, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function(){var n=performance.getEntriesByType("navigation")[0];return [n.responseEnd,n.domInteractive,n.loadEventEnd]})()`))
		if err != nil || len(nav) != 3 {
			t.Fatalf("navigation timing: %v %v", nav, err)
		}
		if nq, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#svg-q g.n").length`)); err != nil {
			t.Fatal(err)
		}
		t.Logf("load %d: file read by %.0f ms, parsed (DOM interactive) at %.0f ms, load event end %.0f ms, first frame %.0f ms (%v wall); %d quantized nodes drawn; page %d bytes",
			try+1, nav[0], nav[1], nav[2], ms, time.Since(start).Round(time.Millisecond), nq, fi.Size())
		best = min(best, ms-nav[0])
	}
	if nq == 0 {
		t.Error("no node of the quantized graph is drawn")
	}
	if best > 2000 || math.IsNaN(best) {
		t.Errorf("the page took %.0f ms from reading to its first frame at best, want under 2000", best)
	}

	// Scrolled to the bottom, the quantized graph's output is drawn.
	want := pipelineGraphs(t, mlp, "--reference")
	last := want.quant.Len() - 1
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(function(r){var s=document.querySelector("#pane-q .scroll");s.scrollTop=s.scrollHeight;
		setTimeout(function(){r(!!document.querySelector('#svg-q g.n[data-i="`+strconv.Itoa(last)+`"]'))},300)})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !drawn {
		t.Error("scrolled to the bottom, the quantized graph's last node is not drawn")
	}
	// Every band drawn: one box per node of each graph.
	nf, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fxqRenderAll(),document.querySelectorAll("#svg-f g.n").length`))
	if err != nil {
		t.Fatal(err)
	}
	nq, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#svg-q g.n").length`))
	if err != nil {
		t.Fatal(err)
	}
	if nf != want.float.Len() || nq != want.quant.Len() {
		t.Errorf("all bands drawn: float %d, quantized %d node boxes; want %d and %d", nf, nq, want.float.Len(), want.quant.Len())
	}
}
