package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// fnC is a function of the fake queue's platform whose parameters the fake
// cuFuncGetParamInfo tells: k3(float* a, float* b, int n).
const fnC = uintptr(0xc000)

// k3Layout is the parameter table the fake driver gives fnC.
var k3Layout = []rawdriver.FakeParam{{Offset: 0, Size: 8}, {Offset: 8, Size: 8}, {Offset: 16, Size: 4}}

// checkedFunc registers fnC on the fake queue's platform with the fake driver's k3Layout.
func checkedFunc(t *testing.T) {
	t.Helper()
	old := swapParamInfoEntry(rawdriver.FakeParamInfoEntry())
	defer swapParamInfoEntry(old)
	require.NoError(t, rawdriver.FakeSetParams(k3Layout))
	f := newKernelFunc(fnC, 0, "k3", nil)
	require.NoError(t, f.paramsErr)
	fake.p.functions.put(f)
}

// A launch whose arguments differ from the parameters the driver told, in number or in
// size, is refused before anything reaches the driver or the queue's ring, through
// ModuleLaunchKernel, the queue's Launch and LaunchFlagged alike: one pointer for k3's
// three parameters would have cuLaunchKernel read two argument pointers past the list
// (the crash this check exists for), nil would launch k3 with none. The right arguments
// go through.
func TestLaunchArgumentsCheckedAgainstTheDriversParams(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	checkedFunc(t)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	cases := []struct {
		name   string
		args   *hipsys.KernelArgs
		detail string
	}{
		{"one pointer for three parameters", new(hipsys.KernelArgs).Ptr(0x1000), "kernel k3 takes 3 arguments, got 1"},
		{"nil args", nil, "kernel k3 takes 3 arguments, got 0"},
		{"one too many", new(hipsys.KernelArgs).Ptr(1).Ptr(2).I32(3).I32(4), "kernel k3 takes 3 arguments, got 4"},
		{"an I64 for the int", new(hipsys.KernelArgs).Ptr(1).Ptr(2).I64(3), "argument 2 of kernel k3 is 8 bytes; the parameter takes 4"},
	}
	launches := map[string]func(args *hipsys.KernelArgs) error{
		"ModuleLaunchKernel": func(args *hipsys.KernelArgs) error {
			return q.p.ModuleLaunchKernel(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, args)
		},
		"Launch": func(args *hipsys.KernelArgs) error {
			seq, ref, err := h.Launch(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, args, nil)
			assert.Zero(t, seq, "nothing queued")
			assert.Empty(t, ref)
			return err
		},
		"LaunchFlagged": func(args *hipsys.KernelArgs) error {
			seq, token, _, err := h.(hipsys.FlaggingQueue).LaunchFlagged(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, args, nil)
			assert.Zero(t, seq, "nothing queued")
			assert.Zero(t, token, "no flag written")
			return err
		},
	}
	for how, launch := range launches {
		for _, c := range cases {
			t.Run(how+"/"+c.name, func(t *testing.T) {
				err := launch(c.args)
				requireStatus(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
				var he *hipsys.Error
				require.ErrorAs(t, err, &he)
				assert.Equal(t, c.detail, he.Detail)
			})
		}
	}
	require.Empty(t, h.Settle(nil))
	assert.Empty(t, rawdriver.FakeCalls(), "no refused launch reached the driver")

	var args hipsys.KernelArgs
	for i := range 3 {
		_, ref, err := h.Launch(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, args.Reset().Ptr(hipsys.DevicePtr(i)).Ptr(2).I32(3), nil)
		require.NoError(t, err)
		require.Empty(t, ref)
	}
	require.Empty(t, h.Settle(nil))
	requireInOrder(t, 3)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _, _ = h.Launch(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, args.Reset().Ptr(1).Ptr(2).I32(3), nil)
	}), "a checked launch allocates nothing")
	require.Empty(t, h.Settle(nil))
}

// With a driver older than CUDA 12.4 no call tells a function's parameters: a launch
// is checked against those the module's image declares (imageParamSizes), and where the
// image tells nothing, it reaches the driver unchecked, as before the check.
func TestLaunchArgumentsWithoutTheQuery(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	old := swapParamInfoEntry(nil)
	image := imageParamSizes([]byte(k3PTX))
	fromImage := newKernelFunc(0xc100, 0, "scale", image)
	unknown := newKernelFunc(0xc200, 0, "not_in_the_image", image)
	swapParamInfoEntry(old)
	requireStatus(t, fromImage.paramsErr, "hipFuncGetParams", hipsys.ErrorNotSupported)
	q.p.functions.put(fromImage)
	q.p.functions.put(unknown)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}

	_, _, err := h.Launch(hipsys.Function(0xc100), one, one, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(0), nil)
	requireStatus(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
	assert.ErrorContains(t, err, "kernel scale takes 3 arguments, got 1")
	_, _, err = h.Launch(hipsys.Function(0xc100), one, one, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(0).Ptr(1).I32(2), nil)
	require.NoError(t, err)
	_, _, err = h.Launch(hipsys.Function(0xc200), one, one, 0, hipsys.NullStream, new(hipsys.KernelArgs).U64(1), nil)
	require.NoError(t, err, "nothing tells this kernel's parameters")
	require.Empty(t, h.Settle(nil))
	requireInOrder(t, 2)
}
