package conformance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// kernelParams holds FuncGetParams to the layout every HIP compiler gives a kernel's
// parameter block (each parameter at its natural alignment, in declaration order, the
// hidden arguments AMD's compiler appends left out), on the suite's own kernels. What a
// platform cannot tell it leaves unknown (the kind on nvidia, a name), and that is
// accepted; anything it does tell must be right. A platform that cannot answer at all
// says hipErrorNotSupported.
func (s *suite) kernelParams(t *testing.T) {
	ptr, val := hipsys.ParamPointer, hipsys.ParamValue
	for _, tc := range []struct {
		source, entry string
		want          []hipsys.KernelParam
	}{
		{"vector", "vector_add", []hipsys.KernelParam{
			{Offset: 0, Size: 8, Kind: ptr, Name: "a"}, {Offset: 8, Size: 8, Kind: ptr, Name: "b"},
			{Offset: 16, Size: 8, Kind: ptr, Name: "c"}, {Offset: 24, Size: 4, Kind: val, Name: "n"},
		}},
		{"vector", "saxpy", []hipsys.KernelParam{
			{Offset: 0, Size: 4, Kind: val, Name: "alpha"}, {Offset: 8, Size: 8, Kind: ptr, Name: "x"},
			{Offset: 16, Size: 8, Kind: ptr, Name: "y"}, {Offset: 24, Size: 4, Kind: val, Name: "n"},
		}},
		{"spin", "spin", []hipsys.KernelParam{
			{Offset: 0, Size: 8, Kind: ptr, Name: "out"}, {Offset: 8, Size: 8, Kind: val, Name: "iters"},
			{Offset: 16, Size: 4, Kind: val, Name: "value"},
		}},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			got, err := s.p.FuncGetParams(s.function(t, tc.source, tc.entry))
			if errors.Is(err, hipsys.ErrorNotSupported) {
				s.expect(t, err, "hipFuncGetParams", hipsys.ErrorNotSupported)
				t.Skipf("%s cannot list a kernel's parameters: %v", s.p.Name(), err)
			}
			require.NoError(t, err, "hipFuncGetParams")
			require.Len(t, got, len(tc.want), "%+v", got)
			for i, w := range tc.want {
				assert.Equal(t, w.Offset, got[i].Offset, "parameter %d's offset", i)
				assert.Equal(t, w.Size, got[i].Size, "parameter %d's size", i)
				if got[i].Kind != hipsys.ParamUnknown {
					assert.Equal(t, w.Kind, got[i].Kind, "parameter %d's kind", i)
				}
				if got[i].Name != "" {
					assert.Equal(t, w.Name, got[i].Name, "parameter %d's name", i)
				}
			}
		})
	}
	_, err := s.p.FuncGetParams(0x1234)
	if !errors.Is(err, hipsys.ErrorNotSupported) {
		s.expect(t, err, "hipFuncGetParams", badHandle...)
	}
}
