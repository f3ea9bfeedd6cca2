// Work items spread over threads, taken in order from one counter: which thread runs an item
// never changes what it computes, so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlab {

// The threads a kernel uses: `requested`, or every core when 0.
inline unsigned thread_count(unsigned requested)
{
    if (requested > 0) return requested;
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());  // glibc reads /sys for it
    return cores;
}

// Calls item(i, worker) for i in 0..n-1 on up to `threads` threads, worker in 0..threads-1
// naming the thread (for scratch space of its own); the first exception is rethrown.
template <class Item>
void parallel_for_workers(std::size_t n, unsigned threads, const Item& item)
{
    const unsigned used = static_cast<unsigned>(std::min<std::size_t>(threads, n));
    if (used <= 1) {
        for (std::size_t i = 0; i < n; ++i) item(i, 0u);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_lock;
    auto worker = [&](unsigned w) {
        for (std::size_t i = next++; i < n; i = next++) {
            try {
                item(i, w);
            } catch (...) {
                const std::lock_guard<std::mutex> hold(error_lock);
                if (!error) error = std::current_exception();
                next = n;
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < used; ++t) pool.emplace_back(worker, t);
    worker(0u);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

// Calls item(i) for i in 0..n-1 on up to `threads` threads; the first exception is rethrown.
template <class Item>
void parallel_for(std::size_t n, unsigned threads, const Item& item)
{
    parallel_for_workers(n, threads, [&](std::size_t i, unsigned) { item(i); });
}

}  // namespace attnlab
