package stream

import "github.com/cubehip/cubehip/modules/memory"

// ID is the logical stream a client chose (CubeCL's StreamId). It is mapped onto one of
// at most MaxStreams device streams by ID % MaxStreams, so distinct ids may share a
// device stream; they then share its memory and its order.
type ID uint64

// Binding is the seed's BufferBinding: a non-owning reference to an allocation (its
// offsets and size ride in the embedded [memory.Binding]) and the stream whose memory
// manager holds it. It is what every buffer argument of a command is.
//
// A Binding value is one reference, as [memory.Binding] is: the stream layer never
// releases the caller's bindings; it clones the ones it must keep past a call.
type Binding struct {
	memory.Binding
	Stream ID // the stream whose pools the allocation came from
}

// Clone returns a second reference to the same view on the same stream.
func (b Binding) Clone() (Binding, error) {
	mb, err := b.Binding.Clone()
	if err != nil {
		return Binding{}, err
	}
	return Binding{Binding: mb, Stream: b.Stream}, nil
}
