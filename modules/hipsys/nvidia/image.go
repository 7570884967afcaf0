package nvidia

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// checkImage rejects an ELF (CUBIN) image whose headers point outside it.
// cuModuleLoadData takes no length: the driver follows the ELF's own offsets, so a
// truncated or corrupt CUBIN would make it read past the buffer (a crash, not a
// status). PTX is text, made safe by the NUL the loader appends; anything else (a
// fatbinary) is left to the driver.
func checkImage(image []byte) error {
	if !bytes.HasPrefix(image, []byte(elf.ELFMAG)) {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return err
	}
	defer f.Close()
	size := uint64(len(image))
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && (s.Offset > size || s.FileSize > size-s.Offset) {
			return fmt.Errorf("section %q at [%d, +%d) lies outside the %d-byte image", s.Name, s.Offset, s.FileSize, size)
		}
	}
	for i, p := range f.Progs {
		if p.Off > size || p.Filesz > size-p.Off {
			return fmt.Errorf("segment %d at [%d, +%d) lies outside the %d-byte image", i, p.Off, p.Filesz, size)
		}
	}
	return nil
}
