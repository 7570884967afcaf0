package paired

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixed returns a Side that reports times[i] on its i-th call and appends name to the
// shared order on each.
func fixed(name string, order *[]string, times ...float64) Side {
	i := 0
	return func() (float64, error) {
		*order = append(*order, name)
		t := times[i%len(times)]
		i++
		return t, nil
	}
}

func TestRunAlternatesWhoGoesFirst(t *testing.T) {
	var order []string
	_, err := Run(4, fixed("a", &order, 1), fixed("b", &order, 1))
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a", "a", "b", "b", "a", "a", "b"}, order)
}

func TestRunKeepsEachRoundsRatio(t *testing.T) {
	var order []string
	r, err := Run(3, fixed("a", &order, 2, 3, 8), fixed("b", &order, 1, 2, 4))
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 3, 8}, r.A)
	assert.Equal(t, []float64{1, 2, 4}, r.B)
	assert.Equal(t, []float64{2, 1.5, 2}, r.Ratios)
	assert.Equal(t, Stats{Median: 2, Q1: 1.5, Q3: 2}, r.Ratio())
}

// A drift that slows both sides alike from one round to the next leaves every round's
// ratio at the true one, however far the times themselves move.
func TestRunCancelsADriftSlowerThanARound(t *testing.T) {
	level, calls := 1.0, 0
	tick := func() { // the machine slows by 10% after every round (two calls)
		if calls++; calls%2 == 0 {
			level *= 1.1
		}
	}
	a := func() (float64, error) { t := 1.03 * level; tick(); return t, nil }
	b := func() (float64, error) { t := level; tick(); return t, nil }
	r, err := Run(51, a, b)
	require.NoError(t, err)
	assert.Greater(t, r.B[50]/r.B[0], 100.0, "the times drifted")
	for i, x := range r.Ratios {
		assert.InDelta(t, 1.03, x, 1e-9, "round %d", i)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	one := func() (float64, error) { return 1, nil }
	_, err := Run(0, one, one)
	assert.ErrorContains(t, err, "0 rounds")
	_, err = Run(1, nil, one)
	assert.ErrorContains(t, err, "nil")
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err = Run(3, one, func() (float64, error) { return bad, nil })
		assert.ErrorContains(t, err, "side b, round 0", "time %v", bad)
	}
	boom := errors.New("boom")
	n := 0
	r, err := Run(5, one, func() (float64, error) {
		if n++; n == 3 {
			return 0, boom
		}
		return 1, nil
	})
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "side b, round 2")
	assert.Len(t, r.Ratios, 2, "the rounds before the failure are kept")
}

func TestOf(t *testing.T) {
	assert.Equal(t, Stats{}, Of(nil))
	v := []float64{9, 1, 5, 3, 7}
	assert.Equal(t, Stats{Median: 5, Q1: 3, Q3: 7}, Of(v))
	assert.Equal(t, []float64{9, 1, 5, 3, 7}, v, "Of leaves its input unsorted")
}

func TestBlock(t *testing.T) {
	calls, finished := 0, 0
	us, err := Block(100, func() error { calls++; return nil }, func() error { finished++; return nil })()
	require.NoError(t, err)
	assert.Equal(t, 100, calls)
	assert.Equal(t, 1, finished)
	assert.Greater(t, us, 0.0)

	boom := errors.New("boom")
	_, err = Block(3, func() error { return boom }, nil)()
	assert.ErrorIs(t, err, boom)
	_, err = Block(2, func() error { return nil }, func() error { return boom })()
	assert.ErrorIs(t, err, boom)
	_, err = Block(0, func() error { return nil }, nil)()
	assert.ErrorContains(t, err, "0 operations")
}

type metrics map[string]float64

func (m metrics) ReportMetric(n float64, unit string) { m[unit] = n }

func TestReport(t *testing.T) {
	r := Result{A: []float64{4, 2, 6}, B: []float64{2, 2, 2}, Ratios: []float64{2, 1, 3}}
	m := metrics{}
	r.Report(m, "launch-", "go", "c")
	assert.Equal(t, metrics{
		"launch-go-us": 4, "launch-c-us": 2,
		"launch-x": 2, "launch-x-q1": 1, "launch-x-q3": 3,
	}, m)
}
