package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// peerMatrix is which devices of p reach which directly: m[i][j] is
// DeviceCanAccessPeer(i, j) (false on the diagonal: a device is not its own peer).
func peerMatrix(p hipsys.Platform, count int) ([][]bool, error) {
	m := make([][]bool, count)
	for i := range m {
		m[i] = make([]bool, count)
		for j := range m[i] {
			ok, err := p.DeviceCanAccessPeer(i, j)
			if err != nil {
				return nil, fmt.Errorf("peer access %d to %d: %w", i, j, err)
			}
			m[i][j] = ok
		}
	}
	return m, nil
}

// peersOf is the row of m for device i as the indexes it reaches.
func peersOf(m [][]bool, i int) []int {
	out := []int{}
	for j, ok := range m[i] {
		if ok {
			out = append(out, j)
		}
	}
	return out
}

// printPeerMatrix writes m as a table, rows reaching columns: "y" where a copy from the
// column's device to the row's takes the peer path, "." where it goes through the host,
// "-" on the diagonal.
func printPeerMatrix(out io.Writer, platform string, m [][]bool) {
	fmt.Fprintf(out, "%s peer access (row reaches column):\n", platform)
	var b strings.Builder
	b.WriteString("       ") // under the rows' "    %3d"
	for j := range m {
		fmt.Fprintf(&b, " %3d", j)
	}
	fmt.Fprintln(out, b.String())
	for i, row := range m {
		b.Reset()
		fmt.Fprintf(&b, "    %3d", i)
		for j, ok := range row {
			c := "."
			switch {
			case i == j:
				c = "-"
			case ok:
				c = "y"
			}
			fmt.Fprintf(&b, " %3s", c)
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
}
