package stream_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/stream"
)

// fixture is a MultiStream on the cpu platform behind fault injection, with three
// buffers on stream 0 and one on stream 1.
type fixture struct {
	t               *testing.T
	p               *faults.Platform
	m               *stream.MultiStream
	in, out, other  *deviceBuffer
	foreign         *deviceBuffer
	hooks           int
	launchStandIn   byte
	lastGraph       *stream.Graph
	lastGraphStream *stream.Stream
}

const bufSize = 256

func newFixture(t *testing.T) *fixture {
	p := openCPU(t)
	m := newMulti(t, p)
	fx := &fixture{t: t, p: p, m: m, launchStandIn: 0x5a}
	m.SetFailureHook(func(stream.ID, error) { fx.hooks++ })
	fx.in = newDeviceBuffer(t, m, 0, bufSize)
	fx.out = newDeviceBuffer(t, m, 0, bufSize)
	fx.other = newDeviceBuffer(t, m, 0, bufSize)
	fx.foreign = newDeviceBuffer(t, m, 1, bufSize)
	for _, b := range []*deviceBuffer{fx.in, fx.out, fx.other, fx.foreign} {
		require.NoError(t, fx.write(b.b.Stream, b, 1))
	}
	return fx
}

// write is the server's write of one descriptor: a scope over dst, a command, a copy
// from pinned staging.
func (fx *fixture) write(id stream.ID, dst *deviceBuffer, value byte) error {
	src := pinned(fx.t, fx.p, bytes.Repeat([]byte{value}, bufSize))
	return upload(fx.m, id, dst, src, bufSize)
}

// launch is the server's launch with a stand-in kernel: an info upload, then
// hipModuleLaunchKernel (which fault injection can fail without a real function), then a
// memset of the outputs that plays the kernel's writes.
func (fx *fixture) launch(id stream.ID, reads, written []*deviceBuffer) error {
	all := append(append([]*deviceBuffer(nil), reads...), written...)
	return fx.m.Launching(id, bindings(reads), bindings(written)).Execute(func() error {
		r, err := fx.m.Resolve(id, bindings(all))
		if err != nil {
			return err
		}
		defer r.Close()
		sys := r.Stream().Sys
		info := pinned(fx.t, fx.p, make([]byte, 16))
		if err := fx.p.MemcpyHtoDAsync(fx.other.ptr, info, 16, sys); err != nil {
			return err
		}
		one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
		if err := fx.p.ModuleLaunchKernel(0, one, one, 0, sys, nil); err != nil && !fx.standIn(err) {
			return err
		}
		for _, w := range written {
			if err := fx.p.MemsetAsync(w.ptr, fx.launchStandIn, bufSize, sys); err != nil {
				return err
			}
		}
		return nil
	})
}

// standIn tells the cpu platform's refusal of the stand-in function (there is no real
// kernel) from an injected failure.
func (fx *fixture) standIn(err error) bool {
	e, ok := err.(*hipsys.Error)
	return ok && e.Detail != faults.Detail
}

func bindings(ds []*deviceBuffer) []stream.Binding {
	bs := make([]stream.Binding, len(ds))
	for i, d := range ds {
		bs[i] = d.b
	}
	return bs
}

// capture records a graph on stream 0 whose one launch writes out.
func (fx *fixture) capture() (*stream.Stream, *stream.Graph, *stream.Refused) {
	s, err := fx.m.Stream(0)
	require.NoError(fx.t, err)
	require.NoError(fx.t, s.PrepareCapture())
	require.NoError(fx.t, s.BeginCapture())
	fx.launchStandIn = 0x33
	require.NoError(fx.t, fx.m.Over(0, []stream.Binding{fx.out.b}).Execute(func() error {
		r, err := fx.m.Resolve(0, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		return fx.p.MemsetAsync(fx.out.ptr, fx.launchStandIn, bufSize, r.Stream().Sys)
	}))
	g, refused := s.Instantiate(42)
	return s, g, refused
}

// compileFails is the server's compile_failed with hiprtc failing: in an executing
// launch the declared outputs take the failure; in a dry run only the hook runs.
func (fx *fixture) compileFails(execute bool) {
	fx.p.FailNext("hiprtcCompileProgram", 1, hipsys.RTCErrorCompilation)
	prog, err := fx.p.RTCCreateProgram(`extern "C" __global__ void k() {}`, "k.hip", nil)
	require.NoError(fx.t, err)
	defer fx.p.RTCDestroyProgram(prog)
	cerr := fx.p.RTCCompileProgram(prog, nil)
	require.Error(fx.t, cerr)
	if execute {
		fx.m.FailedWriting(0, []stream.Binding{fx.out.b}, cerr)
	} else {
		fx.m.FailedWriting(0, nil, cerr)
	}
}

// replay is the server's replay: a scope over the graph's write set.
func (fx *fixture) replay(g *stream.Graph) error {
	return fx.m.Over(0, g.Written).Execute(func() error {
		r, err := fx.m.Resolve(0, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		return fx.p.GraphLaunch(g.Exec, r.Stream().Sys)
	})
}

// read reads b on stream id (ensure-written, command, copy, fence), as the server does.
func (fx *fixture) read(id stream.ID, b *deviceBuffer) ([]byte, error) {
	return download(fx.t, fx.m, id, b, bufSize)
}

// TestCaseTableCPU is §2.5's case table driven by real HIP calls on the cpu platform,
// with the failing call injected by name. Each row checks what the call returned, which
// buffers then fail to read (from stream 1, another stream, since the store is
// server-wide) and with which status, and how often the failure hook ran.
func TestCaseTableCPU(t *testing.T) {
	tests := []struct {
		name    string
		run     func(fx *fixture) error
		wantErr error                             // nil: no error returned
		bad     func(fx *fixture) []*deviceBuffer // buffers that must fail to read
		status  error                             // their status
		good    func(fx *fixture) map[*deviceBuffer]byte
		hooks   int
	}{
		{
			name: "write fails: destination tainted, nothing else",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
				return fx.write(0, fx.out, 9)
			},
			wantErr: hipsys.ErrorInvalidValue,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status:  hipsys.ErrorInvalidValue,
			good:    func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1, fx.other: 1} },
			hooks:   1,
		},
		{
			name: "write succeeds after a failure: destination healed",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
				_ = fx.write(0, fx.out, 9)
				return fx.write(0, fx.out, 4)
			},
			good:  func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.out: 4} },
			hooks: 1,
		},
		{
			name: "hipModuleLaunchKernel fails: outputs tainted, inputs untouched",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				return fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
			},
			wantErr: hipsys.ErrorLaunchFailure,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status:  hipsys.ErrorLaunchFailure,
			good:    func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1} },
			hooks:   1,
		},
		{
			name: "info upload fails: outputs tainted, no launch",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorOutOfMemory)
				launches := fx.p.Calls("hipModuleLaunchKernel")
				err := fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
				assert.Equal(fx.t, launches, fx.p.Calls("hipModuleLaunchKernel"))
				return err
			},
			wantErr: hipsys.ErrorOutOfMemory,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status:  hipsys.ErrorOutOfMemory,
			hooks:   1,
		},
		{
			name: "tainted input: launch skipped, outputs inherit",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				_ = fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
				launches := fx.p.Calls("hipModuleLaunchKernel")
				err := fx.launch(0, []*deviceBuffer{fx.out}, []*deviceBuffer{fx.foreign})
				assert.Equal(fx.t, launches, fx.p.Calls("hipModuleLaunchKernel"), "skipped")
				return err
			},
			wantErr: hipsys.ErrorLaunchFailure,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out, fx.foreign} },
			status:  hipsys.ErrorLaunchFailure,
			good:    func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1} },
			hooks:   2,
		},
		{
			name: "launch enqueued: outputs released and written",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				_ = fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
				return fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
			},
			good:  func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.out: 0x5a, fx.in: 1} },
			hooks: 1,
		},
		{
			name: "dynamic count readback fails: outputs take the failure",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipMemcpyDtoHAsync", 1, hipsys.ErrorIllegalAddress)
				if _, err := fx.read(0, fx.in); err != nil {
					fx.m.FailedWriting(0, []stream.Binding{fx.out.b}, err)
				}
				return nil
			},
			bad:    func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status: hipsys.ErrorIllegalAddress,
			good:   func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1} },
			hooks:  1,
		},
		{
			name: "end_capture refused: every written buffer tainted",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipGraphInstantiate", 1, hipsys.ErrorInvalidValue)
				_, g, refused := fx.capture()
				require.Nil(fx.t, g)
				require.NotNil(fx.t, refused)
				fx.m.Taint(refused.Err, refused.Written...)
				return refused
			},
			wantErr: hipsys.ErrorInvalidValue,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status:  hipsys.ErrorInvalidValue,
			good:    func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1, fx.other: 1} },
		},
		{
			name: "replay enqueue fails: the graph's write set",
			run: func(fx *fixture) error {
				s, g, refused := fx.capture()
				require.Nil(fx.t, refused)
				fx.lastGraph, fx.lastGraphStream = g, s
				fx.p.FailNext("hipGraphLaunch", 1, hipsys.ErrorLaunchFailure)
				return fx.replay(g)
			},
			wantErr: hipsys.ErrorLaunchFailure,
			bad:     func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status:  hipsys.ErrorLaunchFailure,
			good:    func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1} },
			hooks:   1,
		},
		{
			name: "a later replay succeeds: the write set is released",
			run: func(fx *fixture) error {
				s, g, refused := fx.capture()
				require.Nil(fx.t, refused)
				fx.lastGraph, fx.lastGraphStream = g, s
				fx.p.FailNext("hipGraphLaunch", 1, hipsys.ErrorLaunchFailure)
				_ = fx.replay(g)
				return fx.replay(g)
			},
			good:  func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.out: 0x33} },
			hooks: 1,
		},
		{
			name: "graph_destroy's wait fails: the graph's write set only",
			run: func(fx *fixture) error {
				s, g, refused := fx.capture()
				require.Nil(fx.t, refused)
				require.NoError(fx.t, fx.replay(g))
				fx.p.FailNext("hipEventSynchronize", 1, hipsys.ErrorLaunchFailure)
				f, err := stream.NewFence(fx.p, s.Sys)
				require.NoError(fx.t, err)
				werr := f.Wait()
				require.NoError(fx.t, s.DestroyGraph(42, g))
				fx.m.FailedWriting(0, g.Written, werr)
				return nil
			},
			bad:    func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status: hipsys.ErrorLaunchFailure,
			good:   func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.other: 1, fx.in: 1} },
			hooks:  1,
		},
		{
			name: "compile fails (execute): declared outputs only, never inputs",
			run: func(fx *fixture) error {
				fx.compileFails(true)
				return nil
			},
			bad:    func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status: hipsys.RTCErrorCompilation,
			good:   func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1} },
			hooks:  1,
		},
		{
			name: "compile fails (dry run): nothing tainted, profiles invalidated",
			run: func(fx *fixture) error {
				fx.compileFails(false)
				return nil
			},
			good:  func(fx *fixture) map[*deviceBuffer]byte { return map[*deviceBuffer]byte{fx.in: 1, fx.out: 1} },
			hooks: 1,
		},
		{
			name: "count resolves to zero: no scope, an earlier failure stays",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				_ = fx.launch(0, []*deviceBuffer{fx.in}, []*deviceBuffer{fx.out})
				return nil // the zero-count launch returns before any scope opens
			},
			bad:    func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status: hipsys.ErrorLaunchFailure,
			hooks:  1,
		},
		{
			name: "flush reports nothing",
			run: func(fx *fixture) error {
				fx.p.FailNext("hipMemcpyHtoDAsync", 1, hipsys.ErrorInvalidValue)
				_ = fx.write(0, fx.out, 9)
				s, err := fx.m.Stream(0)
				require.NoError(fx.t, err)
				return s.Flush()
			},
			bad:    func(fx *fixture) []*deviceBuffer { return []*deviceBuffer{fx.out} },
			status: hipsys.ErrorInvalidValue,
			hooks:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			err := tt.run(fx)
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			if tt.bad != nil {
				for _, b := range tt.bad(fx) {
					_, err := fx.read(1, b)
					assert.ErrorIs(t, err, tt.status, "a read from another stream reports the failure")
					assert.ErrorIs(t, fx.m.EnsureWritten(b.b), tt.status, "check and sync report it too")
				}
			}
			if tt.good != nil {
				for b, want := range tt.good(fx) {
					got, err := fx.read(1, b)
					require.NoError(t, err)
					assert.Equal(t, bytes.Repeat([]byte{want}, bufSize), got)
				}
			}
			assert.Equal(t, tt.hooks, fx.hooks, "failure hook calls")
			if g := fx.lastGraph; g != nil {
				require.NoError(t, fx.lastGraphStream.DestroyGraph(42, g))
			}
		})
	}
}
