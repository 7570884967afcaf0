package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Run runs the whole suite against p as subtests of t, one group per part of the
// Platform API, in dependency order (devices and memory first, so that a platform that
// cannot allocate fails there and not, confusingly, inside a kernel test). The groups run
// one after another, never in parallel: the timing and NotReady checks need the device
// to themselves. Checks that only the cpu platform promises run last, under
// "cpu-strict", and only when p.Name() is "cpu".
//
// Run uses device 0 and leaves nothing allocated behind it: every buffer, stream, event,
// module and graph a subtest creates is released in its cleanup.
func Run(t *testing.T, p hipsys.Platform) {
	s := &suite{p: p, modules: map[string]hipsys.Module{}}
	t.Cleanup(s.unloadModules)
	n, err := p.GetDeviceCount()
	require.NoError(t, err, "hipGetDeviceCount")
	require.GreaterOrEqual(t, n, 1, "the suite needs a device")
	s.props, err = p.GetDeviceProperties(0)
	require.NoError(t, err, "hipGetDeviceProperties(0)")

	t.Run("device", s.device)
	t.Run("memory", s.memory)
	t.Run("imports", s.imports)
	t.Run("memory2d", s.memory2D)
	t.Run("streams", s.streams)
	t.Run("events", s.events)
	t.Run("hiprtc", s.rtc)
	t.Run("name expressions", s.names)
	t.Run("modules", s.moduleErrors)
	t.Run("kernels", s.kernels)
	t.Run("kernel parameters", s.kernelParams)
	t.Run("types", s.types)
	t.Run("module globals", s.moduleGlobals)
	t.Run("graphs", s.graphs)
	t.Run("peers", s.peers)
	t.Run("cooperative launches", s.cooperative)
	if p.Name() == "cpu" {
		t.Run("cpu-strict", s.cpuStrict)
	}
}

// suite is one Run's state: the platform, device 0's properties and the modules
// compiled so far, which the kernel groups share so that each source is compiled once.
type suite struct {
	p       hipsys.Platform
	props   hipsys.DeviceProps
	modules map[string]hipsys.Module // by source name and options
}

func (s *suite) unloadModules() {
	for _, m := range s.modules {
		_ = s.p.ModuleUnload(m)
	}
}

// compile runs a source through the whole hiprtc path (create, compile, get code,
// destroy) and returns the code object. It fails the test on any error, with the log.
func (s *suite) compile(t *testing.T, source, name string, headers []hipsys.Header, options []string) []byte {
	t.Helper()
	prog, err := s.p.RTCCreateProgram(source, name, headers)
	require.NoError(t, err, "hiprtcCreateProgram %s", name)
	defer func() { require.NoError(t, s.p.RTCDestroyProgram(prog), "hiprtcDestroyProgram") }()
	if err := s.p.RTCCompileProgram(prog, options); err != nil {
		log, _ := s.p.RTCGetProgramLog(prog)
		require.NoError(t, err, "hiprtcCompileProgram %s %v; log:\n%s", name, options, log)
	}
	code, err := s.p.RTCGetCode(prog)
	require.NoError(t, err, "hiprtcGetCode %s", name)
	require.NotEmpty(t, code, "hiprtcGetCode %s", name)
	return code
}

// module compiles and loads a suite kernel source once per Run and options.
func (s *suite) module(t *testing.T, source string, options ...string) hipsys.Module {
	t.Helper()
	key := source
	for _, o := range options {
		key += " " + o
	}
	if m, ok := s.modules[key]; ok {
		return m
	}
	k := kernel(source)
	m, err := s.p.ModuleLoadData(s.compile(t, k.Source, k.Name+".hip", nil, options))
	require.NoError(t, err, "hipModuleLoadData %s", source)
	s.modules[key] = m
	return m
}

// function is the entry point of a suite source, compiled with -O3.
func (s *suite) function(t *testing.T, source, entry string) hipsys.Function {
	t.Helper()
	f, err := s.p.ModuleGetFunction(s.module(t, source, "-O3"), entry)
	require.NoError(t, err, "hipModuleGetFunction %s", entry)
	return f
}

// launch launches fn and fails the test if the launch is refused.
func (s *suite) launch(t *testing.T, fn hipsys.Function, grid, block hipsys.Dim3, shared uint32, stream hipsys.Stream, args *hipsys.KernelArgs) {
	t.Helper()
	require.NoError(t, s.p.ModuleLaunchKernel(fn, grid, block, shared, stream, args), "hipModuleLaunchKernel")
}

// stream creates a stream destroyed at the end of the test.
func (s *suite) stream(t *testing.T, flags hipsys.StreamFlags) hipsys.Stream {
	t.Helper()
	st, err := s.p.StreamCreateWithFlags(flags)
	require.NoError(t, err, "hipStreamCreateWithFlags(%d)", flags)
	t.Cleanup(func() { _ = s.p.StreamDestroy(st) })
	return st
}

// event creates an event destroyed at the end of the test.
func (s *suite) event(t *testing.T, flags hipsys.EventFlags) hipsys.Event {
	t.Helper()
	ev, err := s.p.EventCreateWithFlags(flags)
	require.NoError(t, err, "hipEventCreateWithFlags(%d)", flags)
	t.Cleanup(func() { _ = s.p.EventDestroy(ev) })
	return ev
}

// sync waits for stream and fails the test if the stream reports an error.
func (s *suite) sync(t *testing.T, stream hipsys.Stream) {
	t.Helper()
	require.NoError(t, s.p.StreamSynchronize(stream), "hipStreamSynchronize")
}
