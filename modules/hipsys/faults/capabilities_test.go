package faults

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// capable is a platform with every optional capability and nothing else: it counts the
// capabilities' calls, and any other call reaches the nil Platform it embeds and panics.
type capable struct {
	hipsys.Platform
	stages   bool
	plainQ   bool // its queue flags no launches
	opens    int
	copies   int // MemcpyDtoHAsyncFlagged
	waits    int // StreamWaitFlag
	waitTok  uint32
	launches int // LaunchFlagged
	settles  int
}

const (
	copyToken   = 7
	launchToken = 9
)

func (*capable) Name() string             { return "capable" }
func (c *capable) StagesSmallReads() bool { return c.stages }

func (c *capable) MemcpyDtoHAsyncFlagged(hipsys.HostPtr, hipsys.DevicePtr, uint64, hipsys.Stream) (uint32, error) {
	c.copies++
	return copyToken, nil
}

func (c *capable) StreamWaitFlag(_ hipsys.Stream, token uint32) error {
	c.waits++
	c.waitTok = token
	return nil
}

func (c *capable) OpenLaunchQueue(int) (hipsys.LaunchQueue, error) {
	c.opens++
	if c.plainQ {
		return plainQueue{&capableQueue{c}}, nil
	}
	return &capableQueue{c}, nil
}

// capableQueue is capable's queue, which flags launches.
type capableQueue struct{ c *capable }

func (q *capableQueue) Launch(_ hipsys.Function, _, _ hipsys.Dim3, _ uint32, _ hipsys.Stream, _ *hipsys.KernelArgs,
	refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	return 0, refused, nil
}

func (q *capableQueue) LaunchFlagged(_ hipsys.Function, _, _ hipsys.Dim3, _ uint32, _ hipsys.Stream, _ *hipsys.KernelArgs,
	refused []hipsys.LaunchRefusal) (uint64, uint32, []hipsys.LaunchRefusal, error) {
	q.c.launches++
	return 0, launchToken, refused, nil
}

func (q *capableQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	q.c.settles++
	return refused
}

func (q *capableQueue) Depth() int   { return 4 }
func (q *capableQueue) Close() error { return nil }

// plainQueue hides capableQueue's LaunchFlagged.
type plainQueue struct{ hipsys.LaunchQueue }

// bare is a platform with no optional capability: it counts the calls the wrapper falls
// back to.
type bare struct {
	hipsys.Platform
	asyncCopies, syncs int
}

func (*bare) Name() string { return "bare" }

func (b *bare) MemcpyDtoHAsync(hipsys.HostPtr, hipsys.DevicePtr, uint64, hipsys.Stream) error {
	b.asyncCopies++
	return nil
}

func (b *bare) StreamSynchronize(hipsys.Stream) error {
	b.syncs++
	return nil
}

// Every capability of the wrapped platform is found on the wrapper, by hipsys.As as by a
// type assertion, and its calls reach the wrapped platform through the wrapper.
func TestCapabilitiesForwarded(t *testing.T) {
	in := &capable{stages: true}
	w := Wrap(in)

	st, ok := hipsys.As[hipsys.SmallReadStager](w)
	require.True(t, ok)
	assert.Same(t, w, st, "As finds the wrapper's, which sees the calls")
	assert.True(t, st.StagesSmallReads())
	in.stages = false
	assert.False(t, w.StagesSmallReads(), "it answers as the wrapped platform")

	fc, ok := hipsys.As[hipsys.FlaggingCopier](w)
	require.True(t, ok)
	assert.Same(t, w, fc)
	tok, err := fc.MemcpyDtoHAsyncFlagged(0, 0, 4, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(copyToken), tok)
	assert.Equal(t, 1, in.copies)
	assert.Equal(t, 1, w.Calls("hipMemcpyDtoHAsyncFlagged"))
	assert.Equal(t, 1, w.Calls("hipMemcpyDtoHAsync"), "a flagged copy is an async copy too")

	fw, ok := hipsys.As[hipsys.FlagWaiter](w)
	require.True(t, ok)
	assert.Same(t, w, fw)
	require.NoError(t, fw.StreamWaitFlag(0, 5))
	assert.Equal(t, 1, in.waits)
	assert.Equal(t, uint32(5), in.waitTok)
	assert.Equal(t, 1, w.Calls("hipStreamWaitFlag"))
	assert.Equal(t, 1, w.Calls("hipStreamSynchronize"), "a flag's wait is a stream's wait too")

	lq, ok := hipsys.As[hipsys.LaunchQueuer](w)
	require.True(t, ok)
	assert.Same(t, w, lq)
	q, err := lq.OpenLaunchQueue(0)
	require.NoError(t, err)
	assert.Equal(t, 1, in.opens)
	assert.Equal(t, 1, w.Calls("hipOpenLaunchQueue"))
	fq, ok := q.(hipsys.FlaggingQueue)
	require.True(t, ok, "the wrapped platform's queue flags launches, so the wrapper's does")
	seq, tok, _, err := fq.LaunchFlagged(0, hipsys.Dim3{}, hipsys.Dim3{}, 0, 0, nil, nil)
	require.NoError(t, err)
	assert.Zero(t, seq)
	assert.Equal(t, uint32(launchToken), tok)
	assert.Equal(t, 1, in.launches)
	assert.Equal(t, 1, w.Calls("hipModuleLaunchKernelFlagged"))
	assert.Equal(t, 1, w.Calls("hipModuleLaunchKernel"), "a flagged launch is a launch too")
	require.NoError(t, q.Close())

	lc, ok := hipsys.As[hipsys.LiveCounter](w)
	require.True(t, ok)
	assert.Same(t, w, lc, "the wrapper counts what passed through it, on any platform")
}

// A rule armed on a capability's call fails that call, which then does not reach the
// wrapped platform; so does a rule on the call a flagged one is a variant of. Disarmed,
// the call goes through.
func TestCapabilityRulesFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		call   func(w *Platform) error
		inner  func(in *capable) int // the wrapped platform's count of the call
		settle bool                  // a failed launch settles the queue first
	}{
		{name: "hipOpenLaunchQueue", call: openQueue, inner: func(in *capable) int { return in.opens }},
		{name: "hipModuleLaunchKernelFlagged", call: launchFlagged, inner: func(in *capable) int { return in.launches }, settle: true},
		{name: "hipModuleLaunchKernel", call: launchFlagged, inner: func(in *capable) int { return in.launches }, settle: true},
		{name: "hipMemcpyDtoHAsyncFlagged", call: copyFlagged, inner: func(in *capable) int { return in.copies }},
		{name: "hipMemcpyDtoHAsync", call: copyFlagged, inner: func(in *capable) int { return in.copies }},
		{name: "hipStreamWaitFlag", call: waitFlag, inner: func(in *capable) int { return in.waits }},
		{name: "hipStreamSynchronize", call: waitFlag, inner: func(in *capable) int { return in.waits }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &capable{}
			w := Wrap(in)
			require.True(t, w.FailNext(tc.name, 1, hipsys.ErrorLaunchFailure))
			before, settles := tc.inner(in), in.settles
			err := tc.call(w)
			var he *hipsys.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.name, he.Call)
			assert.Equal(t, "capable", he.Platform)
			assert.Equal(t, Detail, he.Detail)
			assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
			assert.Equal(t, before, tc.inner(in), "the failed call reached the wrapped platform")
			if tc.settle {
				assert.Equal(t, settles+1, in.settles, "nothing queued overtakes the refusal")
			}

			require.NoError(t, tc.call(w), "the rule fired once")
			assert.Equal(t, before+1, tc.inner(in))
		})
	}
}

func openQueue(w *Platform) error {
	q, err := w.OpenLaunchQueue(0)
	if err != nil {
		return err
	}
	return q.Close()
}

// launchFlagged opens the queue before the rule can see it: the rules under test are
// armed on launches, not on the open.
func launchFlagged(w *Platform) error {
	inner := w.Unwrap().(*capable)
	q := &flaggingQueue{wrappedQueue: &wrappedQueue{w: w, q: &capableQueue{inner}}, fq: &capableQueue{inner}}
	_, _, _, err := q.LaunchFlagged(0, hipsys.Dim3{}, hipsys.Dim3{}, 0, 0, nil, nil)
	return err
}

func copyFlagged(w *Platform) error {
	_, err := w.MemcpyDtoHAsyncFlagged(0, 0, 4, 0)
	return err
}

func waitFlag(w *Platform) error { return w.StreamWaitFlag(0, 1) }

// A rule on a variant's base counts the variant's calls too: FailNth of the base fails
// the nth of both kinds together.
func TestVariantsCountTowardsTheirBase(t *testing.T) {
	in := &bare{}
	w := Wrap(in)
	require.True(t, w.FailNth("hipStreamSynchronize", 2, hipsys.ErrorLaunchFailure))
	require.NoError(t, w.StreamWaitFlag(0, 1))
	require.ErrorIs(t, w.StreamSynchronize(0), hipsys.ErrorLaunchFailure)
	require.NoError(t, w.StreamWaitFlag(0, 1))
	assert.Equal(t, 2, in.syncs)
	assert.Equal(t, 3, w.Calls("hipStreamSynchronize"))
	assert.Equal(t, 2, w.Calls("hipStreamWaitFlag"))
}

// Over a platform without them, the capabilities answer as that platform would have
// been taken to: no small reads staged, no flag queued, a flag's wait a StreamSynchronize,
// a queue that flags nothing.
func TestCapabilitiesOverAPlatformWithout(t *testing.T) {
	in := &bare{}
	w := Wrap(in)
	assert.False(t, w.StagesSmallReads())

	tok, err := w.MemcpyDtoHAsyncFlagged(0, 0, 4, 0)
	require.NoError(t, err)
	assert.Zero(t, tok, "no flag was queued")
	assert.Equal(t, 1, in.asyncCopies)

	require.NoError(t, w.StreamWaitFlag(0, 3))
	assert.Equal(t, 1, in.syncs)

	q, err := w.OpenLaunchQueue(0)
	require.NoError(t, err)
	_, ok := q.(hipsys.FlaggingQueue)
	assert.False(t, ok, "the emulated queue flags nothing")
	require.NoError(t, q.Close())

	// A queue of the wrapped platform's own that flags nothing stays so.
	w = Wrap(&capable{plainQ: true})
	q, err = w.OpenLaunchQueue(0)
	require.NoError(t, err)
	_, ok = q.(hipsys.FlaggingQueue)
	assert.False(t, ok)
	require.NoError(t, q.Close())
}

// hipsysInterfaces is every interface type hipsys declares, by name, and what the wrapper
// owes it. A name the test finds in hipsys's source but not here fails it: whoever adds an
// interface says here what it is, and so cannot add a capability the wrapper misses.
var hipsysInterfaces = map[string]reflect.Type{
	// Parts of the Platform interface, which TestEveryMethodHasACall covers method by
	// method, and the queue's.
	"Platform": reflect.TypeFor[hipsys.Platform](), "DeviceAPI": reflect.TypeFor[hipsys.DeviceAPI](),
	"MemoryAPI": reflect.TypeFor[hipsys.MemoryAPI](), "StreamAPI": reflect.TypeFor[hipsys.StreamAPI](),
	"EventAPI": reflect.TypeFor[hipsys.EventAPI](), "ModuleAPI": reflect.TypeFor[hipsys.ModuleAPI](),
	"GraphAPI": reflect.TypeFor[hipsys.GraphAPI](), "RTCAPI": reflect.TypeFor[hipsys.RTCAPI](),
	"PeerAPI": reflect.TypeFor[hipsys.PeerAPI](), "LaunchQueue": reflect.TypeFor[hipsys.LaunchQueue](),

	// Optional capabilities, of a platform or of its queue.
	"LaunchQueuer": reflect.TypeFor[hipsys.LaunchQueuer](), "FlaggingQueue": reflect.TypeFor[hipsys.FlaggingQueue](),
	"FlaggingCopier": reflect.TypeFor[hipsys.FlaggingCopier](), "FlagWaiter": reflect.TypeFor[hipsys.FlagWaiter](),
	"SmallReadStager": reflect.TypeFor[hipsys.SmallReadStager](), "LiveCounter": reflect.TypeFor[hipsys.LiveCounter](),
	"Unwrapper": reflect.TypeFor[hipsys.Unwrapper](), "CodeIdentifier": reflect.TypeFor[hipsys.CodeIdentifier](),
	"ForeignStreams": reflect.TypeFor[hipsys.ForeignStreams](), "KernelChecking": reflect.TypeFor[hipsys.KernelChecking](),
}

// TestEveryCapabilityIsTheWrappers reads hipsys's source for its interfaces and checks
// the wrapper has each optional one, so a capability added to hipsys later cannot be a
// way around the rules. An interface the Platform or the LaunchQueue interface already
// implies is a part of them, not optional; one that embeds LaunchQueue is a queue's, and
// the wrapper's queue over a queue that has it must have it too; any other is a
// platform's, and the wrapper must have it.
func TestEveryCapabilityIsTheWrappers(t *testing.T) {
	declared := hipsysInterfaceNames(t)
	require.NotEmpty(t, declared)
	platform, queue := reflect.TypeFor[hipsys.Platform](), reflect.TypeFor[hipsys.LaunchQueue]()
	wrapper := reflect.TypeFor[*Platform]()
	q, err := Wrap(&capable{}).OpenLaunchQueue(0)
	require.NoError(t, err)
	wrappedQueue := reflect.TypeOf(q)
	innerQueue := reflect.TypeFor[*capableQueue]()
	var checked []string
	for _, name := range declared {
		it, ok := hipsysInterfaces[name]
		if !assert.True(t, ok, "hipsys declares the interface %s, which this test does not know: add it to hipsysInterfaces "+
			"and, if it is an optional capability, implement it in the wrapper (capabilities.go)", name) {
			continue
		}
		switch {
		case platform.Implements(it) || queue.Implements(it):
			continue // part of what every platform or queue has
		case it.Implements(queue):
			require.True(t, innerQueue.Implements(it), "the test's queue lacks %s: give it one", name)
			assert.True(t, wrappedQueue.Implements(it), "the wrapper's queue over one with %s lacks it", name)
		default:
			assert.True(t, wrapper.Implements(it), "the fault wrapper lacks hipsys.%s: calls of it would get past the rules", name)
		}
		checked = append(checked, name)
	}
	t.Logf("optional capabilities checked: %s", strings.Join(checked, ", "))
	for name := range hipsysInterfaces {
		assert.Contains(t, declared, name, "hipsysInterfaces names %s, which hipsys no longer declares", name)
	}
}

// hipsysInterfaceNames parses the hipsys package's own files (the directory above this
// file, tests left out) for its exported interface types. The directory is found from
// this file's compiled-in path rather than the working directory, so a test binary run
// elsewhere in the same tree still finds it; one copied to a machine without the source
// skips the test.
func hipsysInterfaceNames(t *testing.T) []string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	dir := filepath.Dir(filepath.Dir(self))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skipf("hipsys's source is not at %s", dir)
	}
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		if file.Name.Name != "hipsys" {
			continue
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() {
					out = append(out, ts.Name.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
