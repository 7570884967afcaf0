//go:build race

package main

// The race detector allocates on its own account: allocation counts mean nothing under it.
const raceEnabled = true
