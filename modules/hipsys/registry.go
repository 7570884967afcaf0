package hipsys

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Opener opens a platform. A platform package registers one in its init function, the
// way database/sql drivers do; import github.com/cubehip/cubehip/modules/hipsys/platforms
// to register all three.
type Opener func() (Platform, error)

// Order in which auto tries platforms: a real GPU first (amd, the platform the project is
// named for, then nvidia), the embedded cpu device last because it always works.
var autoOrder = []string{"amd", "nvidia", "cpu"}

var registry struct {
	sync.Mutex
	openers map[string]Opener
	opened  map[string]Platform
}

// Register makes a platform available to Open under name. It panics on a duplicate name,
// which can only be a programming error in a platform package's init.
func Register(name string, open Opener) {
	registry.Lock()
	defer registry.Unlock()
	if registry.openers == nil {
		registry.openers = map[string]Opener{}
		registry.opened = map[string]Platform{}
	}
	if _, dup := registry.openers[name]; dup {
		panic("hipsys: platform registered twice: " + name)
	}
	registry.openers[name] = open
}

// Platforms lists the registered platform names, sorted.
func Platforms() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.openers))
	for n := range registry.openers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// EnvPlatform is the environment variable that overrides the platform Open("auto") and
// Open("") choose.
const EnvPlatform = "CUBEHIP_PLATFORM"

// ErrNoPlatform is returned (wrapped, with the reasons) when no platform could be opened.
var ErrNoPlatform = errors.New("hipsys: no platform available")

// Open opens a platform by name: "cpu", "nvidia", "amd", or "auto" (also ""), which is
// $CUBEHIP_PLATFORM when set and otherwise the first of amd, nvidia and cpu that opens
// and has a device. A platform is opened once per process and shared: a vendor library
// is loaded once, and its devices are process-wide anyway.
func Open(name string) (Platform, error) {
	if name == "" || name == "auto" {
		if env := strings.TrimSpace(os.Getenv(EnvPlatform)); env != "" && env != "auto" {
			p, err := openOne(env)
			if err != nil {
				return nil, fmt.Errorf("hipsys: %s=%s: %w", EnvPlatform, env, err)
			}
			return p, nil
		}
		return openAuto()
	}
	return openOne(name)
}

func openAuto() (Platform, error) {
	var reasons []error
	for _, name := range autoOrder {
		p, err := openOne(name)
		if err == nil {
			var n int
			if n, err = p.GetDeviceCount(); err == nil && n > 0 {
				return p, nil
			}
			if err == nil {
				err = fmt.Errorf("no device")
			}
		}
		reasons = append(reasons, fmt.Errorf("%s: %w", name, err))
	}
	return nil, fmt.Errorf("%w: %w", ErrNoPlatform, errors.Join(reasons...))
}

func openOne(name string) (Platform, error) {
	registry.Lock()
	defer registry.Unlock()
	if p, ok := registry.opened[name]; ok {
		return p, nil
	}
	open, ok := registry.openers[name]
	if !ok {
		if len(registry.openers) == 0 {
			return nil, fmt.Errorf("hipsys: unknown platform %q: no platform is registered "+
				"(import _ \"github.com/cubehip/cubehip/modules/hipsys/platforms\")", name)
		}
		known := make([]string, 0, len(registry.openers))
		for n := range registry.openers {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("hipsys: unknown platform %q (known: %s, auto)", name, strings.Join(known, ", "))
	}
	p, err := open()
	if err != nil {
		return nil, err
	}
	registry.opened[name] = p
	return p, nil
}
