package faults

import "github.com/cubehip/cubehip/modules/hipsys"

// Device and memory calls. Each checks its rule first and returns before the wrapped
// platform is reached when one fires, so an injected failure has no side effect.

func (w *Platform) GetDeviceCount() (int, error) {
	if err := w.check(cGetDeviceCount); err != nil {
		return 0, err
	}
	return w.inner.GetDeviceCount()
}

func (w *Platform) GetDeviceProperties(device int) (hipsys.DeviceProps, error) {
	if err := w.check(cGetDeviceProperties); err != nil {
		return hipsys.DeviceProps{}, err
	}
	return w.inner.GetDeviceProperties(device)
}

func (w *Platform) SetDevice(device int) error {
	if err := w.check(cSetDevice); err != nil {
		return err
	}
	return w.inner.SetDevice(device)
}

func (w *Platform) GetDevice() (int, error) {
	if err := w.check(cGetDevice); err != nil {
		return 0, err
	}
	return w.inner.GetDevice()
}

func (w *Platform) DeviceSynchronize() error {
	if err := w.check(cDeviceSynchronize); err != nil {
		return err
	}
	return w.inner.DeviceSynchronize()
}

func (w *Platform) MemGetInfo() (free, total uint64, err error) {
	if err := w.check(cMemGetInfo); err != nil {
		return 0, 0, err
	}
	return w.inner.MemGetInfo()
}

func (w *Platform) Malloc(size uint64) (hipsys.DevicePtr, error) {
	if err := w.check(cMalloc); err != nil {
		return 0, err
	}
	ptr, err := w.inner.Malloc(size)
	return created(w, liveDevice, ptr, size, err)
}

func (w *Platform) Free(ptr hipsys.DevicePtr) error {
	if err := w.check(cFree); err != nil {
		return err
	}
	return destroyed(w, liveDevice, ptr, w.inner.Free(ptr))
}

func (w *Platform) HostMalloc(size uint64, flags hipsys.HostMallocFlags) (hipsys.HostPtr, error) {
	if err := w.check(cHostMalloc); err != nil {
		return 0, err
	}
	ptr, err := w.inner.HostMalloc(size, flags)
	return created(w, liveHost, ptr, size, err)
}

func (w *Platform) HostFree(ptr hipsys.HostPtr) error {
	if err := w.check(cHostFree); err != nil {
		return err
	}
	return destroyed(w, liveHost, ptr, w.inner.HostFree(ptr))
}

func (w *Platform) Memset(dst hipsys.DevicePtr, value byte, size uint64) error {
	if err := w.check(cMemset); err != nil {
		return err
	}
	return w.inner.Memset(dst, value, size)
}

func (w *Platform) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, stream hipsys.Stream) error {
	if err := w.check(cMemsetAsync); err != nil {
		return err
	}
	return w.inner.MemsetAsync(dst, value, size, stream)
}

func (w *Platform) MemcpyHtoD(dst hipsys.DevicePtr, src []byte) error {
	if err := w.check(cMemcpyHtoD); err != nil {
		return err
	}
	return w.inner.MemcpyHtoD(dst, src)
}

func (w *Platform) MemcpyDtoH(dst []byte, src hipsys.DevicePtr) error {
	if err := w.check(cMemcpyDtoH); err != nil {
		return err
	}
	return w.inner.MemcpyDtoH(dst, src)
}

func (w *Platform) MemcpyDtoD(dst, src hipsys.DevicePtr, size uint64) error {
	if err := w.check(cMemcpyDtoD); err != nil {
		return err
	}
	return w.inner.MemcpyDtoD(dst, src, size)
}

func (w *Platform) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, stream hipsys.Stream) error {
	if err := w.check(cMemcpyHtoDAsync); err != nil {
		return err
	}
	return w.inner.MemcpyHtoDAsync(dst, src, size, stream)
}

func (w *Platform) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error {
	if err := w.check(cMemcpyDtoHAsync); err != nil {
		return err
	}
	return w.inner.MemcpyDtoHAsync(dst, src, size, stream)
}

func (w *Platform) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error {
	if err := w.check(cMemcpyDtoDAsync); err != nil {
		return err
	}
	return w.inner.MemcpyDtoDAsync(dst, src, size, stream)
}

func (w *Platform) Memcpy2D(c hipsys.Copy2D) error {
	if err := w.check(cMemcpy2D); err != nil {
		return err
	}
	return w.inner.Memcpy2D(c)
}

func (w *Platform) Memcpy2DAsync(c hipsys.Copy2D, stream hipsys.Stream) error {
	if err := w.check(cMemcpy2DAsync); err != nil {
		return err
	}
	return w.inner.Memcpy2DAsync(c, stream)
}

func (w *Platform) ImportMemory(ptr hipsys.DevicePtr, size uint64) error {
	if err := w.check(cImportMemory); err != nil {
		return err
	}
	return w.inner.ImportMemory(ptr, size)
}

func (w *Platform) ReleaseImportedMemory(ptr hipsys.DevicePtr, size uint64) error {
	if err := w.check(cReleaseImportedMemory); err != nil {
		return err
	}
	return w.inner.ReleaseImportedMemory(ptr, size)
}
