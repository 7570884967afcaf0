package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A figure held to the anchor's other process is shown, not judged, when its in-process
// twin exists; the twin carries the verdict, and a miss there is counted.
func TestPrintFiguresJudgesTheTwin(t *testing.T) {
	figs := []figure{
		{name: "launch, one stream", unit: "µs", device: 4.2, raw: 3.8, rawFrom: "anchor", budget: within(5), twin: "launch, C loop"},
		{name: "launch, C loop", unit: "µs", device: 4.3, raw: 4.29, ratio: 1.002, rawFrom: "C loop", budget: within(5)},
		{name: "read 4 B, one stream", unit: "µs", device: 9, raw: 7.6, rawFrom: "anchor", budget: within(15), twin: "missing twin"},
	}
	var out bytes.Buffer
	assert.ErrorContains(t, printFigures(&out, figs, false), "1 budget(s) missed", "a missed budget is the command's failure")
	s := out.String()
	assert.Contains(t, s, `judged by "launch, C loop", whose C loop ran +12.9% from the anchor's`)
	assert.Contains(t, s, "within 5% of raw (0.2%): ok")
	assert.Contains(t, s, "within 15% of raw (18.4%): MISSED", "without its twin a figure is judged as before")

	// On the cpu device a GPU-only budget is shown, not judged.
	out.Reset()
	require.NoError(t, printFigures(&out, []figure{{name: "launch, streams", unit: "µs", device: 1, raw: 0.1, rawFrom: "hipsys", budget: within(5)}}, true))
	assert.Contains(t, out.String(), "within 5% of raw: n/a")
}

// On the cpu device a kernel that misses its budget by less than 10% is reported as
// noise and does not fail the command; a bigger miss does, and the output states the rule.
func TestCPUBudgetMissWithinNoise(t *testing.T) {
	kernel := func(name string, raw, dev float64) figure {
		return figure{name: name, unit: "µs", device: dev, raw: raw, rawFrom: "C loop", cpu: true, budget: fasterThan(1, 2)}
	}
	var out bytes.Buffer
	require.NoError(t, printFigures(&out, []figure{kernel("histogram", 1205, 1312), kernel("reduce", 433, 280)}, true), out.String())
	assert.Contains(t, out.String(), "(0.92×): missed, within 10% (noise)")
	assert.Contains(t, out.String(), "(1.55×): ok")
	assert.Contains(t, out.String(), "a miss within 10% of its budget is put down to noise")

	out.Reset()
	assert.ErrorContains(t, printFigures(&out, []figure{kernel("Jacobi", 640, 808)}, true), "1 budget(s) missed")
	assert.Contains(t, out.String(), "(0.79×): MISSED")

	// A GPU's budget has no such margin.
	out.Reset()
	assert.ErrorContains(t, printFigures(&out, []figure{{name: "launch, C loop", unit: "µs", device: 1.06, raw: 1, ratio: 1.06, rawFrom: "C loop", budget: within(5)}}, false), "1 budget(s) missed")
}
