package hipsys

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubPlatform is a Platform that opens and has n devices; only GetDeviceCount and Name
// are ever called on it.
type stubPlatform struct {
	Platform
	name string
	n    int
}

func (s *stubPlatform) Name() string                 { return s.name }
func (s *stubPlatform) GetDeviceCount() (int, error) { return s.n, nil }

// withRegistry runs the test against a registry holding only openers, and puts the
// process's registry back afterwards.
func withRegistry(t *testing.T, openers map[string]Opener) {
	registry.Lock()
	saved, savedOpened := registry.openers, registry.opened
	registry.openers, registry.opened = openers, map[string]Platform{}
	registry.Unlock()
	t.Cleanup(func() {
		registry.Lock()
		registry.openers, registry.opened = saved, savedOpened
		registry.Unlock()
	})
}

// openError asserts that Open(name) failed with an *Error for hipInit and returns it.
func openError(t *testing.T, name string) *Error {
	t.Helper()
	p, err := Open(name)
	require.Error(t, err)
	assert.Nil(t, p)
	var he *Error
	require.ErrorAs(t, err, &he, "Open's error is a *hipsys.Error: %v", err)
	assert.Equal(t, "hipInit", he.Call)
	return he
}

func TestOpenErrorsAreHIPErrors(t *testing.T) {
	t.Setenv(EnvPlatform, "")
	loaderErr := fmt.Errorf("dl: libfoo.so: %w", fs.ErrNotExist)
	withRegistry(t, map[string]Opener{
		"good":   func() (Platform, error) { return &stubPlatform{name: "good", n: 1}, nil },
		"empty":  func() (Platform, error) { return &stubPlatform{name: "empty"}, nil },
		"noload": func() (Platform, error) { return nil, loaderErr },
		"hiperr": func() (Platform, error) {
			return nil, NewError("hiperr", "hipInit", ErrorInsufficientDriver, "driver 5.0")
		},
		"wrapped": func() (Platform, error) {
			return nil, fmt.Errorf("opening: %w", NewError("wrapped", "hipInit", ErrorNoDevice, ""))
		},
		"nilnil": func() (Platform, error) { return nil, nil },
	})

	p, err := Open("good")
	require.NoError(t, err)
	assert.Equal(t, "good", p.Name())
	again, err := Open("good")
	require.NoError(t, err)
	assert.Same(t, p, again, "a platform is opened once per process")

	e := openError(t, "bogus")
	assert.Equal(t, ErrorInvalidValue, e.Status)
	assert.Equal(t, "bogus", e.Platform)
	assert.Contains(t, e.Detail, `unknown platform "bogus" (known: empty, good, hiperr, nilnil, noload, wrapped, auto)`)

	e = openError(t, "noload")
	assert.Equal(t, ErrorNotInitialized, e.Status, "a platform that gave no status could not be initialized")
	assert.Contains(t, e.Error(), "noload: hipInit: hipErrorNotInitialized (3): dl: libfoo.so: file does not exist")
	assert.ErrorIs(t, e, fs.ErrNotExist, "the loader's error stays reachable")

	e = openError(t, "hiperr")
	assert.Equal(t, ErrorInsufficientDriver, e.Status, "the platform's own status is kept")
	assert.Equal(t, "driver 5.0", e.Detail)

	e = openError(t, "wrapped")
	assert.Equal(t, ErrorNoDevice, e.Status)

	e = openError(t, "nilnil")
	assert.Equal(t, ErrorNotInitialized, e.Status)
}

func TestOpenAutoPicksTheFirstPlatformWithADevice(t *testing.T) {
	t.Setenv(EnvPlatform, "")
	withRegistry(t, map[string]Opener{
		"amd":    func() (Platform, error) { return nil, errors.New("no libamdhip64") },
		"nvidia": func() (Platform, error) { return &stubPlatform{name: "nvidia"}, nil },
		"cpu":    func() (Platform, error) { return &stubPlatform{name: "cpu", n: 1}, nil },
	})
	for _, name := range []string{"", "auto"} {
		p, err := Open(name)
		require.NoError(t, err)
		assert.Equal(t, "cpu", p.Name())
	}
}

func TestOpenAutoWithNoDevice(t *testing.T) {
	t.Setenv(EnvPlatform, "auto")
	withRegistry(t, map[string]Opener{
		"amd":    func() (Platform, error) { return nil, errors.New("no libamdhip64") },
		"nvidia": func() (Platform, error) { return &stubPlatform{name: "nvidia"}, nil },
	})
	e := openError(t, "auto")
	assert.Equal(t, ErrorNoDevice, e.Status)
	assert.Equal(t, "auto", e.Platform)
	assert.ErrorIs(t, e, ErrNoPlatform)
	for _, why := range []string{"no platform available: amd: hipInit: hipErrorNotInitialized (3): no libamdhip64; nvidia: no device; cpu: hipInit: hipErrorInvalidValue (1): unknown platform \"cpu\""} {
		assert.Contains(t, e.Detail, why)
	}
}

func TestOpenHonoursTheEnvironment(t *testing.T) {
	withRegistry(t, map[string]Opener{
		"cpu":  func() (Platform, error) { return &stubPlatform{name: "cpu", n: 1}, nil },
		"fake": func() (Platform, error) { return &stubPlatform{name: "fake", n: 1}, nil },
	})
	t.Setenv(EnvPlatform, " fake ")
	p, err := Open("auto")
	require.NoError(t, err)
	assert.Equal(t, "fake", p.Name())
	p, err = Open("cpu")
	require.NoError(t, err)
	assert.Equal(t, "cpu", p.Name(), "a name given explicitly is not overridden")

	t.Setenv(EnvPlatform, "nope")
	e := openError(t, "")
	assert.Equal(t, ErrorInvalidValue, e.Status)
	assert.Contains(t, e.Detail, `CUBEHIP_PLATFORM=nope: unknown platform "nope"`)
}

func TestOpenWithNothingRegisteredSaysWhatToImport(t *testing.T) {
	t.Setenv(EnvPlatform, "")
	withRegistry(t, nil)
	e := openError(t, "cpu")
	assert.Contains(t, e.Detail, `import _ "github.com/cubehip/cubehip/modules/hipsys/platforms"`)
}

func TestRegisterRefusesADuplicate(t *testing.T) {
	withRegistry(t, nil)
	open := func() (Platform, error) { return &stubPlatform{name: "x", n: 1}, nil }
	Register("x", open)
	assert.Panics(t, func() { Register("x", open) })
	assert.Equal(t, []string{"x"}, Platforms())
}
