package compute

import "time"

// TrimIdlePools gives back the free pages of the device pools that the trim policy says
// are idle, or all free pages when the pools reserve far more than is in use
// (stream.MultiStream.TrimIdle, whose policy Config.Stream sets with
// stream.WithTrimPolicy). It returns how long until a stream that still holds free pages
// would be idle, 0 when none does. It blocks while it frees (a free waits for the
// device).
func (s *Server) TrimIdlePools() time.Duration {
	s.settleQueue()
	return s.streams.TrimIdle(time.Now())
}
