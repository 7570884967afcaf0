package nvidia

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each input of an NVRTC compile other than the program changes the identity: a cache
// keyed on it never hands out code another NVRTC, device or option list built.
func TestCodeIdentityCoversWhatDecidesTheCode(t *testing.T) {
	nv := &nvrtcLib{major: 12, minor: 4, archs: []int{80, 90}}
	base := codeIdentity(nv, 90, []string{"-DX=1"})
	assert.Equal(t, base, codeIdentity(nv, 90, []string{"-DX=1"}), "the same inputs, the same identity")

	assert.NotEqual(t, base, codeIdentity(nv, 80, []string{"-DX=1"}), "another device architecture")
	assert.NotEqual(t, base, codeIdentity(nv, 90, []string{"-DX=2"}), "other options")
	assert.NotEqual(t, base, codeIdentity(nv, 90, []string{"-DX=1", "--gpu-architecture=compute_80"}), "PTX instead of CUBIN")
	assert.Equal(t, base, codeIdentity(nv, 90, []string{"-DX=1", "-mcumode"}), "an AMD-only option NVRTC never sees")

	newer := &nvrtcLib{major: 12, minor: 6, archs: nv.archs}
	assert.NotEqual(t, base, codeIdentity(newer, 90, []string{"-DX=1"}), "another NVRTC version")

	// Another toolkit at the same path: the same options, another cuda_fp16.h.
	dir := t.TempDir()
	fp16 := filepath.Join(dir, "cuda_fp16.h")
	require.NoError(t, os.WriteFile(fp16, []byte("// one toolkit\n"), 0o600))
	withToolkit := &nvrtcLib{major: 12, minor: 4, archs: nv.archs, includes: []string{dir}}
	before := codeIdentity(withToolkit, 90, []string{"-DX=1"})
	require.NoError(t, os.WriteFile(fp16, []byte("// another toolkit's header\n"), 0o600))
	assert.NotEqual(t, before, codeIdentity(withToolkit, 90, []string{"-DX=1"}), "the toolkit's headers")

	saved := builtinHeaders[0].Source
	t.Cleanup(func() { builtinHeaders[0].Source = saved; builtinHeadersHash = onceHeadersHash() })
	builtinHeaders[0].Source += "\n// changed"
	builtinHeadersHash = onceHeadersHash()
	assert.NotEqual(t, base, codeIdentity(nv, 90, []string{"-DX=1"}), "cubehip's HIP headers")
}
