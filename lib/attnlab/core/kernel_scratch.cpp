#include "attnlab/core/kernel_scratch.hpp"

#include <mutex>
#include <new>

namespace attnlab::kernel {

float* KeyTiles::reserve(std::size_t n)
{
    if (capacity < n) {
        kt.reset();  // the old storage goes first, so that both are never held at once
        kt.reset(new float[n]);
        capacity = n;
    }
    return kt.get();
}

namespace {

template <class T>
struct Pool {
    std::mutex lock;
    std::vector<Worker<T>> idle;
};

template <class T>
Pool<T>& pool()
{
    static Pool<T> p;
    return p;
}

}  // namespace

template <class T>
WorkerLease<T>::WorkerLease(unsigned n)
{
    Pool<T>& p = pool<T>();
    {
        const std::lock_guard<std::mutex> hold(p.lock);
        while (workers_.size() < n && !p.idle.empty()) {
            workers_.push_back(std::move(p.idle.back()));
            p.idle.pop_back();
        }
    }
    workers_.resize(n);
    for (Worker<T>& w : workers_) w.keys.b = SIZE_MAX, w.keys.hk = SIZE_MAX;
}

template <class T>
WorkerLease<T>::~WorkerLease()
{
    Pool<T>& p = pool<T>();
    const std::lock_guard<std::mutex> hold(p.lock);
    try {
        for (Worker<T>& w : workers_) p.idle.push_back(std::move(w));
    } catch (const std::bad_alloc&) {  // the rest are freed instead of kept
    }
}

template class WorkerLease<float>;
template class WorkerLease<double>;

}  // namespace attnlab::kernel
