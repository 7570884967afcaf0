package paired

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Side is one timed block of work: it runs the work and returns how long it took, in a
// unit of the caller's choosing (the same for both sides of a comparison).
type Side func() (float64, error)

// Result holds the rounds of one comparison, in the order they ran.
type Result struct {
	A, B   []float64 // each round's time of side a and of side b
	Ratios []float64 // each round's A/B
}

// Stats summarises a sample: its median and its quartiles.
type Stats struct {
	Median, Q1, Q3 float64
}

// Run times a and b in rounds rounds, b first in even rounds and a first in odd ones,
// and returns every round's times and ratio. It stops at the first error of either
// side, and rejects a round count below one and a side that reports a time that is not
// a positive finite number (a ratio over it would be meaningless).
func Run(rounds int, a, b Side) (Result, error) {
	if rounds < 1 {
		return Result{}, fmt.Errorf("paired: %d rounds: need at least one", rounds)
	}
	if a == nil || b == nil {
		return Result{}, errors.New("paired: a side is nil")
	}
	r := Result{
		A:      make([]float64, 0, rounds),
		B:      make([]float64, 0, rounds),
		Ratios: make([]float64, 0, rounds),
	}
	for round := range rounds {
		var ta, tb float64
		var err error
		if round%2 == 0 {
			if tb, err = timeSide("b", round, b); err == nil {
				ta, err = timeSide("a", round, a)
			}
		} else {
			if ta, err = timeSide("a", round, a); err == nil {
				tb, err = timeSide("b", round, b)
			}
		}
		if err != nil {
			return r, err
		}
		r.A, r.B, r.Ratios = append(r.A, ta), append(r.B, tb), append(r.Ratios, ta/tb)
	}
	return r, nil
}

func timeSide(name string, round int, s Side) (float64, error) {
	t, err := s()
	if err != nil {
		return 0, fmt.Errorf("paired: side %s, round %d: %w", name, round, err)
	}
	if !(t > 0) || math.IsInf(t, 1) {
		return 0, fmt.Errorf("paired: side %s, round %d: time %v is not a positive finite number", name, round, t)
	}
	return t, nil
}

// Ratio is the comparison: the median of the rounds' ratios A/B and their quartiles.
func (r Result) Ratio() Stats { return Of(r.Ratios) }

// Of returns the median and quartiles of v (zero for an empty v), leaving v as it is.
// The quartiles are the values at a quarter and three quarters of the sorted sample.
func Of(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	return Stats{Median: s[n/2], Q1: s[n/4], Q3: s[3*n/4]}
}

// Block returns a Side that runs op n times and then finish (when not nil: a stream
// sync, so that asynchronous work is counted), and reports the microseconds per
// operation. op's errors are checked with a plain comparison: anything heavier in the
// loop (a testify assertion) would weigh on figures of a few µs (docs/benchmarks.md,
// "Paired rounds: drift and the number of rounds").
func Block(n int, op, finish func() error) Side {
	return func() (float64, error) {
		if n < 1 {
			return 0, fmt.Errorf("paired: block of %d operations: need at least one", n)
		}
		start := time.Now()
		for range n {
			if err := op(); err != nil {
				return 0, err
			}
		}
		if finish != nil {
			if err := finish(); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(n), nil
	}
}

// Metrics is where Report writes: *testing.B is one.
type Metrics interface {
	ReportMetric(n float64, unit string)
}

// Report writes a result: prefix+"x", prefix+"x-q1" and prefix+"x-q3", the ratio A/B
// and its quartiles, and prefix+a+"-us" and prefix+b+"-us", the median time of each
// side (Block's unit, µs per operation). prefix may be empty, when a benchmark reports
// one comparison; a and b name the sides ("go", "c").
func (r Result) Report(m Metrics, prefix, a, b string) {
	x := r.Ratio()
	m.ReportMetric(Of(r.A).Median, prefix+a+"-us")
	m.ReportMetric(Of(r.B).Median, prefix+b+"-us")
	m.ReportMetric(x.Median, prefix+"x")
	m.ReportMetric(x.Q1, prefix+"x-q1")
	m.ReportMetric(x.Q3, prefix+"x-q3")
}
