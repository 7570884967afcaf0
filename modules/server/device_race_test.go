//go:build race

package server_test

// raceEnabled: the race detector's runtime allocates where a normal build does not (it
// drops sync.Pool entries at random, for one), so allocation budgets are not asserted
// under it.
const raceEnabled = true
