package hipsys_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// base is a platform with one capability; wrapper wraps another, with or without the
// capability itself.
type base struct{ hipsys.Platform }

func (*base) StagesSmallReads() bool { return false }

type wrapper struct {
	hipsys.Platform
	inner hipsys.Platform
}

func (w *wrapper) Unwrap() hipsys.Platform { return w.inner }

type stagingWrapper struct{ wrapper }

func (*stagingWrapper) StagesSmallReads() bool { return true }

// selfWrapper unwraps to itself: a bug, which must not hang As.
type selfWrapper struct{ hipsys.Platform }

func (s *selfWrapper) Unwrap() hipsys.Platform { return s }

func TestAs(t *testing.T) {
	b := &base{}

	st, ok := hipsys.As[hipsys.SmallReadStager](b)
	assert.True(t, ok)
	assert.Same(t, b, st, "the platform's own")

	w := &wrapper{inner: &wrapper{inner: b}}
	st, ok = hipsys.As[hipsys.SmallReadStager](w)
	assert.True(t, ok)
	assert.Same(t, b, st, "found through two wrappers that lack it")

	sw := &stagingWrapper{wrapper{inner: b}}
	st, ok = hipsys.As[hipsys.SmallReadStager](&wrapper{inner: sw})
	assert.True(t, ok)
	assert.Same(t, sw, st, "the outermost that has it wins: its calls are its own")
	assert.True(t, st.StagesSmallReads())

	got, ok := hipsys.As[*base](w)
	assert.True(t, ok, "a concrete type is found under its wrappers")
	assert.Same(t, b, got)

	_, ok = hipsys.As[hipsys.LaunchQueuer](w)
	assert.False(t, ok, "none in the chain has it")
	_, ok = hipsys.As[hipsys.LaunchQueuer](nil)
	assert.False(t, ok)
	_, ok = hipsys.As[hipsys.LaunchQueuer](&wrapper{})
	assert.False(t, ok, "a wrapper of nothing")
	_, ok = hipsys.As[hipsys.LaunchQueuer](&selfWrapper{})
	assert.False(t, ok, "a chain that never ends")
}
