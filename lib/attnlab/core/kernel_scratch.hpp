// The attention kernel's memory of its own on each thread, kept from one call to the next: a
// call that took fresh pages would fault every one of them in again (glibc gives a large block
// back to the system when it is freed), and on a virtual machine a fault costs microseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace attnlab::kernel {

// One thread's key tiles of one (sequence, key head), transposed and scaled for the kernel's own
// q k^T, kept across that head's query blocks: [tiles][d, nk], each made when first needed.
struct KeyTiles {
    std::size_t b = SIZE_MAX, hk = SIZE_MAX;  // whose tiles these are; SIZE_MAX: nobody's
    std::unique_ptr<float[]> kt;
    std::size_t capacity = 0;  // floats in kt
    std::vector<char> ready;
    // Room for n floats, keeping the storage when it is big enough (its contents are not kept).
    float* reserve(std::size_t n);
};

// What a thread keeps from one query block to the next: its key tiles, the score tile and the
// output accumulator.
template <class T>
struct Worker {
    KeyTiles keys;
    std::unique_ptr<T[]> s;
    std::vector<T> o;
};

// `n` workers for one call, taken from the process's pool (made there when it has too few)
// and given back when the lease ends. Their key tiles belong to nobody when taken, so no call
// reads another's keys; the pool keeps at most a tile, an accumulator and one key head's keys
// for each thread any call has used (kernel_scratch_bytes).
template <class T>
class WorkerLease {
public:
    explicit WorkerLease(unsigned n);
    ~WorkerLease();
    WorkerLease(const WorkerLease&) = delete;
    WorkerLease& operator=(const WorkerLease&) = delete;
    Worker<T>& operator[](unsigned i) { return workers_[i]; }

private:
    std::vector<Worker<T>> workers_;
};

}  // namespace attnlab::kernel
