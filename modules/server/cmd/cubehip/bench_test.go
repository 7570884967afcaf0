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
