package faults

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// absent is a platform none of whose calls may run: it embeds a nil hipsys.Platform, so
// reaching the wrapped platform panics. A call that an armed rule stops never gets there.
type absent struct{ hipsys.Platform }

func (absent) Name() string { return "absent" }

var platformType = reflect.TypeFor[hipsys.Platform]()

// TestEveryMethodHasACall keeps the name table and hipsys.Platform in step: a method
// added to the interface without a row here would be a call the wrapper cannot fail.
func TestEveryMethodHasACall(t *testing.T) {
	seen := map[call]string{}
	for m := range platformType.Methods() {
		if m.Name == "Name" {
			continue // not a HIP call
		}
		c, ok := methods[m.Name]
		if !assert.True(t, ok, "hipsys.Platform.%s has no HIP call name in faults.methods", m.Name) {
			continue
		}
		if prev, dup := seen[c]; dup {
			t.Errorf("%s and %s share the call %s", prev, m.Name, names[c])
		}
		seen[c] = m.Name
	}
	assert.Len(t, seen, len(methods), "the table names a method the interface lacks")
	for c := range capabilityCalls {
		_, dup := seen[c]
		assert.False(t, dup, "%s is both a Platform method's and a capability's call", names[c])
	}
	assert.Equal(t, int(numCalls), len(methods)+len(capabilityCalls), "every call index has exactly one name")
	for c, n := range names {
		assert.NotEmpty(t, n, "call %d has no name", c)
	}
	assert.Len(t, byName, int(numCalls), "two calls share a name")
	for v, base := range variantOf {
		assert.Contains(t, capabilityCalls, v, "a variant is a capability's call")
		assert.Contains(t, methods, base.method(), "%s is a variant of a Platform call", names[v])
		assert.Equal(t, base, bases[v])
	}
}

// method is the hipsys.Platform method c is the call of, "" for a capability's call.
func (c call) method() string {
	for m, mc := range methods {
		if mc == c {
			return m
		}
	}
	return ""
}

// TestNamesAreHIPs spot-checks the derived C names against the spellings the platforms
// put in hipsys.Error.Call.
func TestNamesAreHIPs(t *testing.T) {
	for m, want := range map[string]string{
		"Malloc":             "hipMalloc",
		"ModuleLaunchKernel": "hipModuleLaunchKernel",
		"RTCCompileProgram":  "hiprtcCompileProgram",
		"StreamSynchronize":  "hipStreamSynchronize",
		"MemcpyHtoDAsync":    "hipMemcpyHtoDAsync",
		"HostFree":           "hipHostFree",
		"GraphNodeGetType":   "hipGraphNodeGetType",
	} {
		assert.Equal(t, want, names[methods[m]], m)
	}
	assert.Len(t, Names(), int(numCalls))
}

// TestEveryMethodInjects calls every method of the wrapper, by reflection so that none
// is forgotten, once with its rule armed (the injected error, and the absent platform
// never reached) and once without (the call reaches the wrapped platform, which panics).
func TestEveryMethodInjects(t *testing.T) {
	w := Wrap(absent{})
	wv := reflect.ValueOf(w)
	for m := range platformType.Methods() {
		if m.Name == "Name" {
			continue
		}
		name := names[methods[m.Name]]
		t.Run(m.Name, func(t *testing.T) {
			fn := wv.MethodByName(m.Name)
			args := make([]reflect.Value, fn.Type().NumIn())
			for i := range args {
				args[i] = reflect.Zero(fn.Type().In(i))
			}

			status := error(hipsys.ErrorLaunchFailure)
			if name[:6] == "hiprtc" {
				status = hipsys.RTCErrorCompilation
			}
			require.True(t, w.Fail(name, status))
			before := w.Calls(name)
			var out []reflect.Value
			require.NotPanics(t, func() { out = fn.Call(args) }, "the armed call reached the wrapped platform")
			assert.Equal(t, before+1, w.Calls(name))

			err, _ := out[len(out)-1].Interface().(error)
			var he *hipsys.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, name, he.Call)
			assert.Equal(t, "absent", he.Platform)
			assert.Equal(t, Detail, he.Detail)
			assert.ErrorIs(t, err, status)
			for _, v := range out[:len(out)-1] {
				assert.True(t, v.IsZero(), "a failed call returns zero values")
			}

			w.Clear(name)
			assert.Panics(t, func() { fn.Call(args) }, "the disarmed call did not reach the wrapped platform")
		})
	}
}
