package server

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// gpuLike is a platform that cannot check kernels, as nvidia's and amd's cannot.
type gpuLike struct{ hipsys.Platform }

func (gpuLike) Name() string { return "nvidia" }

func TestCheckOnAGPUPlatformSaysWhatToDo(t *testing.T) {
	_, err := OpenPlatform(gpuLike{}, Options{Check: hipsys.CheckMemory})
	require.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
	require.ErrorContains(t, err, "memcheck")
	require.ErrorContains(t, err, "nvidia platform")
	require.ErrorContains(t, err, "CUBEHIP_PLATFORM=cpu")

	t.Setenv(EnvCheck, "synccheck")
	_, err = OpenPlatform(gpuLike{}, Options{})
	require.ErrorContains(t, err, "synccheck")
	t.Setenv(EnvCheck, "memchek")
	_, err = OpenPlatform(gpuLike{}, Options{})
	require.ErrorContains(t, err, `unknown kernel check "memchek"`)
}
