module github.com/cubehip/cubehip/modules/server

go 1.26.0

require (
	github.com/cubehip/cubehip/modules/hipsys v0.1.0
	github.com/cubehip/cubehip/modules/memory v0.1.0
	github.com/cubehip/cubehip/modules/stream v0.1.0
	github.com/stretchr/testify v1.12.1
	pgregory.net/rapid v1.3.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
