package hipsys

// ForeignStreams is a Platform that can order work against streams another library in
// the process created: CuPy's, PyTorch's, a C host's own. DLPack's and the CUDA array
// interface's stream arguments name such streams, and ordering on the device through
// them (an event recorded on one stream, the other made to wait for it) is what lets
// two libraries hand memory across without a host wait. The platform's own stream calls
// refuse handles it did not create (its handle checks), so these are separate calls.
//
// The platform cannot check a foreign handle against anything it made: the caller
// vouches that s is a live stream of the current device, as it vouches for the
// addresses it passes. NullStream is the null stream; on nvidia 1 and 2 are the CUDA
// driver's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD handles, which it takes as streams.
// It is optional: the cpu platform has no streams but its own (its memory is host
// memory, and host code waits on the host).
type ForeignStreams interface {
	// OrdersForeignStreams reports whether the calls below work: true on a platform
	// that has them; a wrapper (hipsys/faults) answers as the platform it wraps.
	OrdersForeignStreams() bool
	// ForeignEventRecord records e (an event of this platform) on foreign stream s.
	ForeignEventRecord(e Event, s Stream) error
	// ForeignStreamWaitEvent makes foreign stream s wait for e's last record.
	ForeignStreamWaitEvent(s Stream, e Event) error
	// ForeignStreamQuery is nil when everything queued so far on foreign stream s has
	// completed, ErrorNotReady (or another error) otherwise: hipStreamQuery of a stream
	// the platform did not make.
	ForeignStreamQuery(s Stream) error
}
