package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// requireRTC checks that err is a hipsys.Error of call with hiprtc status st.
func requireRTC(t *testing.T, err error, call string, st hipsys.RTCStatus) {
	t.Helper()
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, st, he.RTCStatus)
	assert.Equal(t, call, he.Call)
}

// Name expressions over rawdriver's fake NVRTC entries, with no NVRTC: what reaches
// NVRTC and comes back, and the statuses for asking at the wrong time, which the
// platform decides itself. A real NVRTC's resolution awaits a GPU machine
// (conformance's name expressions).
func TestNameExpressionsOnTheFakeNVRTC(t *testing.T) {
	oldAdd, oldLowered := swapNameEntries(rawdriver.FakeAddNameEntry(), rawdriver.FakeLoweredNameEntry())
	defer swapNameEntries(oldAdd, oldLowered)
	defer rawdriver.FakeNamesReset()
	p := &Platform{}
	const h = hipsys.Program(0x7000)
	pr := &program{}
	p.programs.put(uintptr(h), pr)

	_, err := p.RTCGetLoweredName(h, "k<int>")
	requireRTC(t, err, "hiprtcGetLoweredName", hipsys.RTCErrorNoLoweredNamesBeforeCompile)
	require.NoError(t, p.RTCAddNameExpression(h, "k<int>"))
	require.NoError(t, p.RTCAddNameExpression(h, "k<int>"), "twice is once")
	require.NoError(t, p.RTCAddNameExpression(h, "(void(*)(float*))k"))
	requireRTC(t, p.RTCAddNameExpression(h, " "), "hiprtcAddNameExpression", hipsys.RTCErrorInvalidInput)
	requireRTC(t, p.RTCAddNameExpression(0x7001, "k<int>"), "hiprtcAddNameExpression", hipsys.RTCErrorInvalidProgram)

	pr.tried, pr.compiled = true, true // as RTCCompileProgram leaves a compiled program
	requireRTC(t, p.RTCAddNameExpression(h, "k<long>"), "hiprtcAddNameExpression", hipsys.RTCErrorNoNameExpressionsAfterCompile)
	got, err := p.RTCGetLoweredName(h, "k<int>")
	require.NoError(t, err)
	assert.Equal(t, "lowered:k<int>", got)
	got, err = p.RTCGetLoweredName(h, "(void(*)(float*))k")
	require.NoError(t, err)
	assert.Equal(t, "lowered:(void(*)(float*))k", got)
	_, err = p.RTCGetLoweredName(h, "k<long>")
	requireRTC(t, err, "hiprtcGetLoweredName", hipsys.RTCErrorNameExpressionNotValid)

	// A library without the calls says so, rather than crashing.
	swapNameEntries(nil, nil)
	_, err = p.RTCGetLoweredName(h, "k<int>")
	requireRTC(t, err, "hiprtcGetLoweredName", hipsys.RTCErrorInternalError)
	assert.ErrorContains(t, err, "nvrtcGetLoweredName")
	pr.tried = false
	err = p.RTCAddNameExpression(h, "k<short>")
	requireRTC(t, err, "hiprtcAddNameExpression", hipsys.RTCErrorInternalError)
	assert.ErrorContains(t, err, "nvrtcAddNameExpression")
}
