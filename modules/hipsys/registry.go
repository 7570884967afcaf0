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

// ErrNoPlatform is the cause (errors.Is(err, ErrNoPlatform)) of Open("auto")'s error when
// no platform could be opened with a device.
var ErrNoPlatform = errors.New("no platform available")

// callOpen is the HIP call Open stands for in its errors: opening a platform is what
// hipInit does for HIP.
const callOpen = "hipInit"

// Open opens a platform by name: "cpu", "nvidia", "amd", or "auto" (also ""), which is
// $CUBEHIP_PLATFORM when set and otherwise the first of amd, nvidia and cpu that opens
// and has a device. A platform is opened once per process and shared: a vendor library
// is loaded once, and its devices are process-wide anyway.
//
// Every error is an *Error for the call hipInit, with Platform the name that was asked
// for: hipErrorInvalidValue for a name no platform registered, hipErrorNoDevice when
// "auto" found none (its Cause is ErrNoPlatform, joined with each platform's reason), and
// a platform's own error when opening it failed (hipErrorNotInitialized where the
// platform gave no status, with the loader's error as the Cause).
func Open(name string) (Platform, error) {
	if name == "" || name == "auto" {
		if env := strings.TrimSpace(os.Getenv(EnvPlatform)); env != "" && env != "auto" {
			p, err := openOne(env)
			if err != nil {
				e := *err
				e.Detail = EnvPlatform + "=" + env + ": " + e.Detail
				return nil, &e
			}
			return p, nil
		}
		return openAuto()
	}
	p, err := openOne(name)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func openAuto() (Platform, error) {
	var reasons []error
	var why []string
	for _, name := range autoOrder {
		var reason error
		p, err := openOne(name)
		switch {
		case err != nil:
			reason = err // it names the platform already
		default:
			n, cerr := p.GetDeviceCount()
			if cerr == nil && n > 0 {
				return p, nil
			}
			if cerr == nil {
				cerr = errors.New("no device")
			}
			reason = fmt.Errorf("%s: %w", name, cerr)
		}
		reasons = append(reasons, reason)
		why = append(why, reason.Error())
	}
	return nil, &Error{Platform: "auto", Call: callOpen, Status: ErrorNoDevice,
		Detail: ErrNoPlatform.Error() + ": " + strings.Join(why, "; "),
		Cause:  fmt.Errorf("%w: %w", ErrNoPlatform, errors.Join(reasons...))}
}

// openOne opens a registered platform, or says why not. Its error is always an *Error,
// so the interface value Open returns is never a typed nil.
func openOne(name string) (Platform, *Error) {
	registry.Lock()
	defer registry.Unlock()
	if p, ok := registry.opened[name]; ok {
		return p, nil
	}
	open, ok := registry.openers[name]
	if !ok {
		if len(registry.openers) == 0 {
			return nil, NewError(name, callOpen, ErrorInvalidValue, fmt.Sprintf("unknown platform %q: no platform is registered "+
				"(import _ \"github.com/cubehip/cubehip/modules/hipsys/platforms\")", name))
		}
		known := make([]string, 0, len(registry.openers))
		for n := range registry.openers {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, NewError(name, callOpen, ErrorInvalidValue, fmt.Sprintf("unknown platform %q (known: %s, auto)", name, strings.Join(known, ", ")))
	}
	p, err := open()
	if err != nil {
		var he *Error
		if errors.As(err, &he) {
			// Wrapped or not, the platform's own status and words are the answer; any
			// wrapping it added stays reachable as the cause.
			e := *he
			if e.Cause == nil && error(he) != err {
				e.Cause = err
			}
			return nil, &e
		}
		return nil, &Error{Platform: name, Call: callOpen, Status: ErrorNotInitialized, Detail: err.Error(), Cause: err}
	}
	if p == nil {
		return nil, NewError(name, callOpen, ErrorNotInitialized, "the platform's opener returned nothing")
	}
	registry.opened[name] = p
	return p, nil
}
