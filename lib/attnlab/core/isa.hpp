// The instruction sets the kernel's hot loops are compiled for, and the one a run uses.
//
// The float32 panel product, the key tile's transposition and the softmax's row steps are
// each written once (microkernel.cpp, fast_exp.cpp) and compiled for every target below; a
// run takes the best one its CPU has, or the one ATTNLAB_ISA names:
//   scalar  one element at a time, no instruction-set extension: the body any CPU runs (on
//           x86-64 the compiler still puts floats through SSE2, the ABI's own registers);
//   sse4    four-lane vectors, SSE4.2 (x86-64-v2); no fused multiply-add;
//   avx2    eight-lane vectors, AVX2 with FMA (x86-64-v3);
//   avx512  sixteen-lane vectors, AVX-512F (with its FMA).
// Bits: avx2 and avx512 give the same bits (the same sums in the same order, each product
// fused); scalar and sse4 give the same bits (the same sums, unfused) as each other. For each
// target, the result does not depend on the thread count (tests/test_kernel.cpp).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

enum class Isa { scalar, sse4, avx2, avx512 };
constexpr auto enum_names(Isa)
{
    return std::array<std::pair<Isa, std::string_view>, 4>{
        {{Isa::scalar, "scalar"}, {Isa::sse4, "sse4"}, {Isa::avx2, "avx2"}, {Isa::avx512, "avx512"}}};
}

// Whether this CPU can run the target's body (scalar: always).
bool cpu_has(Isa isa);
// The targets this CPU can run, best first; the last is scalar.
std::vector<Isa> cpu_isas();

// ATTNLAB_ISA's value (nullptr: unset) checked against the targets a CPU has: empty when it
// may be used, else the one line that refuses it. The program refuses a run with it (exit 2).
std::string isa_request_problem(const char* requested, const std::vector<Isa>& cpu);

// The target the kernels run: ATTNLAB_ISA's when it passes isa_request_problem, else the
// CPU's best. Read once.
Isa active_isa();

// For the tests: the kernels run `isa` (which the CPU must have) until the scope ends.
class IsaScope {
public:
    explicit IsaScope(Isa isa);
    ~IsaScope();
    IsaScope(const IsaScope&) = delete;
    IsaScope& operator=(const IsaScope&) = delete;

private:
    Isa before_;
};

}  // namespace attnlab
