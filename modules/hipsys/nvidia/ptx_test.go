package nvidia

// emptyPTX is a kernel that does nothing, as PTX: the benchmarks launch it (the same
// text the raw driver-API anchor in bench/anchor.c loads, so both measure the same
// kernel), and the tests use it to exercise the PTX load path. PTX 7.0 for sm_75 is the
// oldest pair every supported driver (CUDA 11.4 on) still JIT-compiles.
const emptyPTX = `.version 7.0
.target sm_75
.address_size 64

.visible .entry empty()
{
	ret;
}
`
