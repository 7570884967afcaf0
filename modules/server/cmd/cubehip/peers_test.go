package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/cpu"
)

func TestPeerMatrixOfSeveralCPUDevices(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_DEVICES", "3")
	p, err := cpu.Open()
	require.NoError(t, err)
	m, err := peerMatrix(p, 3)
	require.NoError(t, err)
	assert.Equal(t, [][]bool{{false, true, true}, {true, false, true}, {true, true, false}}, m)
	assert.Equal(t, []int{0, 2}, peersOf(m, 1))

	var out bytes.Buffer
	printPeerMatrix(&out, "cpu", [][]bool{{false, true}, {false, false}})
	assert.Equal(t, "cpu peer access (row reaches column):\n"+
		"          0   1\n"+
		"      0   -   y\n"+
		"      1   .   -\n", out.String())

	_, err = peerMatrix(p, 4)
	assert.ErrorContains(t, err, "hipErrorInvalidDevice")
}
