// Package paired compares two ways of doing the same work in one process, in paired
// rounds, the method cubehip's benchmarks use to hold a Go path to the raw driver.
//
// Two runs of one benchmark on a GPU differ by more than the budgets measured
// (docs/benchmarks.md, "Paired rounds: drift and the number of rounds"), and within
// a process the rate drifts by several percent over a second or two (clocks, the
// driver's own queues). Timing side A for a while and then side B would fold that drift
// into the comparison. Run times both sides in short blocks, back to back, for many
// rounds, each side going first in alternate rounds so that neither always follows the
// other, and keeps each round's ratio A/B: a drift slower than one round cancels out of
// that round's ratio, and the median of the ratios is the comparison. The quartiles of
// the ratios are its spread.
//
// The package is pure Go and imports nothing but the standard library, so test files,
// benchmarks and commands can all use it; Report writes a result to a *testing.B.
package paired
