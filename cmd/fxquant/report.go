package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/internal/atomicfile"
	htmlreport "github.com/fxquant/fxquant/report"
)

// defaultReportFile is where "fxquant report" writes without -o.
const defaultReportFile = "report.html"

// cmdReport is "fxquant report": the run pipeline, then one HTML page
// with both graphs, the per-node numbers and the observers' histograms.
func cmdReport(e *env, args []string) error {
	c, err := parseRunFlagsFor(e, "report", args)
	if err != nil {
		return err
	}
	if c.out == "" {
		c.out = defaultReportFile
	}
	if err := checkOutputs(c); err != nil {
		return err
	}
	page, res, summary, err := buildReport(c, e)
	if err != nil {
		return err
	}
	html, err := htmlreport.HTML(page)
	if err != nil {
		return err
	}
	e.stdout.Write(summary)
	if err := writeDot(e, c.dot, res.quant); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(c.out, html, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", c.out)
	if res.verifyErr != nil {
		return &exitError{code: exitFail}
	}
	return nil
}

// buildReport runs the pipeline of c and fills the report's page: the
// histograms are taken from the calibrated graph before convert, and the
// per-node numbers are run's comparison on its eval batches. When the
// comparison fails the page still shows the graphs, uncoloured, and says
// why. It also returns run's summary, which the page shows too.
func buildReport(c *runConfig, e *env) (*htmlreport.Page, *runResult, []byte, error) {
	var hists map[string]*htmlreport.Histogram
	c.onCalibrated = func(g *fxgraph.Graph) {
		hists = htmlreport.ObserverHistograms(g)
	}
	res, err := runPipeline(c, e.stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	page := &htmlreport.Page{
		Title:      res.inputName,
		Float:      res.float,
		Quant:      res.quant,
		Histograms: hists,
	}
	if res.sqnrErr != nil {
		page.Note = "the per-node comparison failed: " + res.sqnrErr.Error()
		fmt.Fprintf(e.stderr, "fxquant report: warning: %s\n", page.Note)
	} else {
		page.Comparison = res.cmp
	}

	yes := map[bool]string{false: "no", true: "yes"}
	page.Settings = []htmlreport.Field{
		{Label: "input", Value: res.inputName},
		{Label: "user inputs", Value: res.inputsDesc()},
		{Label: "quantizer", Value: c.quantizerDesc()},
		{Label: "calibration", Value: res.calibDesc},
		{Label: "reference", Value: yes[c.reference]},
		{Label: "annotate by target", Value: yes[c.byTarget]},
		{Label: "own activation chains", Value: yes[c.ownChains]},
		{Label: "per-node numbers", Value: res.evalDesc},
	}
	// run's summary for stdout; the page shows its results part (the
	// settings are above).
	var sum bytes.Buffer
	res.writeSettings(&sum)
	sum.WriteString("\n")
	results := sum.Len()
	res.writeResults(&sum)
	page.Summary = []htmlreport.Field{{Label: "fxquant run", Value: strings.TrimRight(sum.String()[results:], "\n")}}
	return page, res, sum.Bytes(), nil
}
