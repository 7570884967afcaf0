package compute

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// piece is the part of a copy one staging chunk carries: height rows of width bytes,
// starting host bytes into the dense host side and dev bytes into the device view, the
// device rows the layout's pitch apart.
type piece struct {
	host, dev     uint64
	width, height uint64
}

func (p piece) bytes() uint64 { return p.width * p.height }

// whole is all of l as one piece: a dense layout is one row.
func whole(l layout) piece {
	if !l.pitched {
		return piece{width: l.bytes, height: 1}
	}
	return piece{width: l.width, height: l.height}
}

// pieceCursor walks the pieces of a list of copies, each at most chunk bytes: whole rows
// when a row fits in a chunk, else one row in chunk-sized parts.
type pieceCursor struct {
	ls       []layout
	chunk    uint64
	part     int
	row, col uint64 // the next piece's row of part, and byte within the row
}

func newPieceCursor(ls []layout, chunk uint64) pieceCursor {
	c := pieceCursor{ls: ls, chunk: chunk}
	c.skipEmpty()
	return c
}

// rows is l as the cursor walks it: a dense layout is one row of all its bytes.
func rows(l layout) (width, height, pitch uint64) {
	if !l.pitched {
		return l.bytes, 1, l.bytes
	}
	return l.width, l.height, l.pitch
}

func (c *pieceCursor) skipEmpty() {
	for c.part < len(c.ls) && c.ls[c.part].bytes == 0 {
		c.part++
	}
}

func (c *pieceCursor) more() bool { return c.part < len(c.ls) }

// peek is what next will return, without moving.
func (c pieceCursor) peek() (int, piece) { return c.next() }

// skipPart moves past what is left of copy part.
func (c *pieceCursor) skipPart(part int) {
	if c.part == part {
		c.part, c.row, c.col = c.part+1, 0, 0
		c.skipEmpty()
	}
}

// next is the next piece and the copy it belongs to; more must be true.
func (c *pieceCursor) next() (int, piece) {
	part := c.part
	width, height, pitch := rows(c.ls[part])
	var p piece
	if width <= c.chunk {
		n := min(c.chunk/width, height-c.row)
		p = piece{host: c.row * width, dev: c.row * pitch, width: width, height: n}
		c.row += n
	} else {
		w := min(c.chunk, width-c.col)
		p = piece{host: c.row*width + c.col, dev: c.row*pitch + c.col, width: w, height: 1}
		if c.col += w; c.col == width {
			c.col, c.row = 0, c.row+1
		}
	}
	if c.row == height {
		c.part, c.row, c.col = c.part+1, 0, 0
		c.skipEmpty()
	}
	return part, p
}

// copyPiece queues p's copy on sys between host (where p's first byte is on the host
// side) and the view at dev laid out as l, in direction kind.
func (s *Server) copyPiece(sys hipsys.Stream, host hipsys.HostPtr, dev hipsys.DevicePtr, l layout, p piece, kind hipsys.MemcpyKind) error {
	at := dev + hipsys.DevicePtr(p.dev)
	var err error
	switch {
	case p.height > 1 && kind == hipsys.MemcpyDeviceToHost:
		err = s.p.Memcpy2DAsync(hipsys.Copy2D{
			Dst: uintptr(host), DstPitch: p.width, Src: uintptr(at), SrcPitch: l.pitch,
			Width: p.width, Height: p.height, Kind: kind,
		}, sys)
	case p.height > 1:
		err = s.p.Memcpy2DAsync(hipsys.Copy2D{
			Dst: uintptr(at), DstPitch: l.pitch, Src: uintptr(host), SrcPitch: p.width,
			Width: p.width, Height: p.height, Kind: kind,
		}, sys)
	case kind == hipsys.MemcpyDeviceToHost:
		err = s.p.MemcpyDtoHAsync(host, at, p.width, sys)
	default:
		err = s.p.MemcpyHtoDAsync(at, host, p.width, sys)
	}
	if err != nil {
		what := "read"
		if kind != hipsys.MemcpyDeviceToHost {
			what = "write"
		}
		return fmt.Errorf("compute: %s of %d bytes at %d: %w", what, p.bytes(), p.dev, err)
	}
	return nil
}
