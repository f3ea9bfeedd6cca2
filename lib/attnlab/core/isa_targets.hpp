// One body compiled for every target of isa.hpp, and a call of the active target's copy.
// For the kernel's sources only (microkernel.cpp, fast_exp.cpp).
//
// Body::template run<I>(args...) is the body for target I, written once on the compiler's
// vector types. It and every helper it calls are always_inline, so each copy below is compiled
// for its own instruction set (GCC and Clang inline a function of the default target into one
// that has more).
#pragma once

#include "attnlab/core/isa.hpp"

namespace attnlab::targets {

#if defined(__x86_64__) || defined(__i386__)
#define ATTNLAB_TARGET_AVX512 __attribute__((target("avx512f")))
#define ATTNLAB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define ATTNLAB_TARGET_SSE4 __attribute__((target("sse4.2")))
#else
#define ATTNLAB_TARGET_AVX512
#define ATTNLAB_TARGET_AVX2
#define ATTNLAB_TARGET_SSE4
#endif

template <class Body>
struct Copies {
    template <class... A>
    ATTNLAB_TARGET_AVX512 static auto avx512(A... a)
    {
        return Body::template run<Isa::avx512>(a...);
    }
    template <class... A>
    ATTNLAB_TARGET_AVX2 static auto avx2(A... a)
    {
        return Body::template run<Isa::avx2>(a...);
    }
    template <class... A>
    ATTNLAB_TARGET_SSE4 static auto sse4(A... a)
    {
        return Body::template run<Isa::sse4>(a...);
    }
    template <class... A>
    static auto scalar(A... a)
    {
        return Body::template run<Isa::scalar>(a...);
    }
};

// Body's copy for `isa`, called with a....
template <class Body, class... A>
auto run_on(Isa isa, A... a)
{
    switch (isa) {
        case Isa::avx512: return Copies<Body>::avx512(a...);
        case Isa::avx2: return Copies<Body>::avx2(a...);
        case Isa::sse4: return Copies<Body>::sse4(a...);
        case Isa::scalar: break;
    }
    return Copies<Body>::scalar(a...);
}

// Body's copy for the active target.
template <class Body, class... A>
auto run(A... a)
{
    return run_on<Body>(active_isa(), a...);
}

}  // namespace attnlab::targets
