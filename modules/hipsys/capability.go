package hipsys

// Optional capabilities. A Platform may have more than the Platform interface: a launch
// queue (LaunchQueuer), completion flags (FlagWaiter, FlaggingCopier), staged small reads
// (SmallReadStager), live counts (LiveCounter). The layers above find them with As, never
// with a plain type assertion, so that a platform wrapped by another is still seen for
// what it can do.
//
// The rule for a wrapper (a Platform that holds another, as package faults does): for
// each capability it either implements it, and so sees every call of it, or it
// implements Unwrapper and lets As find the capability on the platform it wraps, whose
// calls then do not pass through the wrapper at all. A wrapper that must see every call
// (one that injects failures, or counts what is queued) therefore implements every
// capability, reporting through it what the wrapped platform has (a StagesSmallReads
// that answers as the wrapped platform does, a flagged copy that queues no flag where
// the wrapped platform has none); a capability it left out would be a way around it.

// Unwrapper is a Platform that wraps another: Unwrap is the platform it wraps (nil when
// none). As looks through it for the capabilities the wrapper does not have itself.
type Unwrapper interface {
	Unwrap() Platform
}

// As finds capability T on p: p itself when it has T, else the first platform down its
// chain of Unwrap that has it. The outermost one wins, so a wrapper that implements T
// keeps its calls. T is usually an interface (As[LaunchQueuer](p)); a concrete type
// finds that platform under its wrappers. A nil p, or a chain that ends without T, gives
// false; so does a chain deeper than maxUnwrap, which only a wrapper that unwraps to
// itself makes, so that such a bug is a missing capability rather than a hung caller.
func As[T any](p Platform) (T, bool) {
	for range maxUnwrap {
		if p == nil {
			break
		}
		if t, ok := p.(T); ok {
			return t, true
		}
		u, ok := p.(Unwrapper)
		if !ok {
			break
		}
		p = u.Unwrap()
	}
	var zero T
	return zero, false
}

// maxUnwrap bounds As's walk; real chains are one or two wrappers deep.
const maxUnwrap = 64
