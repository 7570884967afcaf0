package nvidia

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckImage(t *testing.T) {
	assert.NoError(t, checkImage([]byte(emptyPTX)), "PTX text is the driver's to judge")
	assert.NoError(t, checkImage([]byte("garbage")), "not ELF: the driver's to judge")
	assert.Error(t, checkImage([]byte{0x7f, 'E', 'L', 'F', 0, 0, 0}), "a truncated ELF header")

	// A real ELF passes whole and fails cut short: any ELF will do, the test binary is one.
	self, err := os.ReadFile("/proc/self/exe")
	require.NoError(t, err)
	assert.NoError(t, checkImage(self))
	assert.Error(t, checkImage(self[:len(self)/2]), "sections past the end")
}
