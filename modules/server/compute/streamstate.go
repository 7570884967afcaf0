package compute

import (
	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
)

// One state per device stream, and fast paths that fail closed. What the server infers
// about a device stream that the driver does not say (whether it is idle, which call
// carries a completion flag, whether a capture is being recorded on it, which writes no
// wait has confirmed, which streams it was ordered after, the kernel launched last) is
// one ledger entry per device stream (internal/ledger, whose Stream lists each field's
// guard and the invariants every fast path relies on), not per logical id: ids that
// share a device stream share its work and its faults. The entry is made when the stream
// layer creates the device stream (stream.MultiStream.SetCreateHook, set by New, which
// also gives it the id its failures are reported under) and forgotten when the queue
// watch destroys it; where the ledger cannot show an inference holds, the server asks the
// driver.

// state is s's ledger entry.
func (w *queueWatch) state(s hipsys.Stream) *ledger.Stream { return w.ledger.Of(s) }

// knownIdle is s's ledger.Stream.KnownIdle.
func (w *queueWatch) knownIdle(s hipsys.Stream) bool { return w.ledger.Of(s).KnownIdle() }
