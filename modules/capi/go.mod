module github.com/cubehip/cubehip/modules/capi

go 1.26.0

require (
	github.com/cubehip/cubehip/modules/hipsys v0.0.0
	github.com/cubehip/cubehip/modules/memory v0.0.0
	github.com/cubehip/cubehip/modules/server v0.0.0
	github.com/cubehip/cubehip/modules/stream v0.0.0
)

require github.com/stretchr/testify v1.12.1 // indirect

replace (
	github.com/cubehip/cubehip/modules/hipsys => ../hipsys
	github.com/cubehip/cubehip/modules/memory => ../memory
	github.com/cubehip/cubehip/modules/server => ../server
	github.com/cubehip/cubehip/modules/stream => ../stream
)
