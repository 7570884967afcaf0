package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

func BenchmarkZZLaunchSync(b *testing.B) {
	d := benchDevice(b)
	require.NoError(b, d.Compile(devEmpty))
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	for b.Loop() {
		_ = d.Launch(devEmpty, one, server.Args{})
		_ = d.Sync()
	}
}
