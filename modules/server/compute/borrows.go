package compute

import "github.com/cubehip/cubehip/modules/stream"

// A buffer released while other streams' commands still use it is held by those
// commands until their work is done, and the holds of closed commands wait for a fence
// that a stream records once per batch of commands (stream.Stream.FencePins). These are
// the server's points where the holds end sooner, so that released memory is back in
// its pool when the program looks: a wait, a memory figure, a cleanup.

// syncBorrowings is what a Sync of stream st does with borrowings, before its wait:
// every stream with nothing left to run gives its holds back now (the borrowing streams
// of a program whose other streams finished, whatever stream it syncs), and st's holds
// get their fence, which its wait covers.
func (s *Server) syncBorrowings(st *stream.Stream) {
	s.streams.ReturnFinishedBorrowings()
	_ = st.FencePins()
}

// ReturnFinishedBorrowings gives back the holds of every stream with nothing left to run
// (stream.MultiStream.ReturnFinishedBorrowings), so that a memory figure counts a
// released buffer only while work that used it may still run. No wait.
func (s *Server) ReturnFinishedBorrowings() {
	s.settleQueue()
	s.streams.ReturnFinishedBorrowings()
}

// SettleBorrowings records a fence after every stream's holds still waiting for one and
// returns a channel that closes once every hold handed to the release worker so far is
// given back (stream.MultiStream.SettleBorrowings). The caller waits for it without the
// owner's lock, if it can: the wait lasts as long as the borrowing streams' work. A
// cleanup after it finds the released buffers' memory free.
func (s *Server) SettleBorrowings() <-chan struct{} {
	s.settleQueue()
	return s.streams.SettleBorrowings()
}
