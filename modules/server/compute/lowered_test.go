package compute

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamesRoundTripThroughTheDiskEntry(t *testing.T) {
	code := []byte("\x7fELF code")
	names := []string{"reduce<float, 256>", "scale"}
	lowered := map[string]string{"reduce<float, 256>": "_Z6reduceIfLi256EEvPKT_PS0_", "scale": "_Z5scalePf"}
	entry := packNames(code, names, lowered)
	gotCode, gotLowered := unpackNames(entry, names)
	assert.Equal(t, code, gotCode)
	assert.Equal(t, lowered, gotLowered)
	assert.Equal(t, code, packNames(code, nil, nil), "a module without names is its code")

	for name, bad := range map[string][]byte{
		"no header":      code,
		"cut short":      entry[:len(namesMagic)+4],
		"length too big": append(append([]byte(namesMagic), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0), code...),
	} {
		c, l := unpackNames(bad, names)
		assert.Nil(t, c, name)
		assert.Nil(t, l, name)
	}
	c, _ := unpackNames(packNames(code, names[:1], map[string]string{names[0]: "x"}), names)
	assert.Nil(t, c, "an entry missing a symbol is a miss")
}
