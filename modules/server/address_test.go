package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// A buffer's Address is its DevicePointer, stays put, and a released buffer has none.
func TestBufferAddress(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	b := alloc(t, d.Stream, 256)
	c := alloc(t, d.On(2), 256)
	at, err := b.Address()
	require.NoError(t, err)
	ptr, err := b.DevicePointer()
	require.NoError(t, err)
	require.Equal(t, ptr, at)
	cat, err := c.Address()
	require.NoError(t, err)
	require.NotEqual(t, at, cat)
	require.NoError(t, b.Release())
	_, err = b.Address()
	require.ErrorIs(t, err, server.ErrReleased)
	require.NoError(t, c.Release())
	var nilBuf *server.Buffer
	_, err = nilBuf.Address()
	require.ErrorIs(t, err, server.ErrInvalidArgument)
}
