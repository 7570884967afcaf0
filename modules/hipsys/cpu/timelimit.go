package cpu

import (
	"fmt"
	"os"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// openTimeLimit applies $CUBEHIP_CPU_TIME_LIMIT, read when the platform opens: the time
// a kernel launch may run before it ends with hipErrorLaunchTimeOut (a Go duration,
// "10s"; unset, "0" or "off" for none, the default). A value that does not parse leaves
// the limit as it was, with a warning.
func openTimeLimit() {
	v, ok := os.LookupEnv("CUBEHIP_CPU_TIME_LIMIT")
	if !ok {
		return
	}
	d, err := jit.ParseTimeLimit(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cubehip: CUBEHIP_CPU_TIME_LIMIT=%q: %v; the time limit stays %v\n", v, err, jit.TimeLimit())
		return
	}
	jit.SetTimeLimit(d)
}

// SetTimeLimit sets the time a kernel launch may run before it ends with
// hipErrorLaunchTimeOut, delivered as every failed launch is (0: none). It is the
// process's, for every cpu device, and applies to launches that start after it
// (jit.SetTimeLimit).
func (p *Platform) SetTimeLimit(d time.Duration) { jit.SetTimeLimit(d) }

// TimeLimit is the limit in force (0: none).
func (p *Platform) TimeLimit() time.Duration { return jit.TimeLimit() }
