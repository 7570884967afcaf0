// Package platforms registers every hipsys platform — amd, nvidia and cpu — so that
// hipsys.Open("auto") can choose among them. Import it for its side effect:
//
//	import _ "github.com/cubehip/cubehip/modules/hipsys/platforms"
//
// A program that wants fewer platforms imports only those platform packages instead.
package platforms

import (
	_ "github.com/cubehip/cubehip/modules/hipsys/amd"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	_ "github.com/cubehip/cubehip/modules/hipsys/nvidia"
)
