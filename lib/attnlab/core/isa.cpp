#include "attnlab/core/isa.hpp"

#include "attnlab/core/enums.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace attnlab {

namespace {

constexpr int kUnread = -1;
std::atomic<int> g_active{kUnread};

std::string names_of(const std::vector<Isa>& isas)
{
    std::string out;
    for (const Isa isa : isas) out += (out.empty() ? "" : ", ") + name_of(isa);
    return out;
}

}  // namespace

bool cpu_has(Isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::sse4: return __builtin_cpu_supports("sse4.2");
        case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case Isa::avx512: return __builtin_cpu_supports("avx512f");
    }
    return false;
#else
    return isa == Isa::scalar;
#endif
}

std::vector<Isa> cpu_isas()
{
    std::vector<Isa> out;
    for (const Isa isa : {Isa::avx512, Isa::avx2, Isa::sse4, Isa::scalar})
        if (cpu_has(isa)) out.push_back(isa);
    return out;
}

std::string isa_request_problem(const char* requested, const std::vector<Isa>& cpu)
{
    if (requested == nullptr) return {};
    const std::map<std::string, Isa> known = enum_map<Isa>();
    const auto it = known.find(requested);
    if (it == known.end())
        return "ATTNLAB_ISA: '" + std::string(requested) + "' is no target; targets: scalar, sse4, avx2, avx512 (this CPU has " +
               names_of(cpu) + ")";
    for (const Isa isa : cpu)
        if (isa == it->second) return {};
    return "ATTNLAB_ISA: this CPU cannot run " + it->first + "; it has " + names_of(cpu);
}

Isa active_isa()
{
    const int now = g_active.load(std::memory_order_relaxed);
    if (now != kUnread) return static_cast<Isa>(now);
    const std::vector<Isa> cpu = cpu_isas();
    const char* requested = std::getenv("ATTNLAB_ISA");
    Isa chosen = cpu.front();
    if (requested != nullptr && isa_request_problem(requested, cpu).empty()) chosen = enum_map<Isa>().at(requested);
    g_active.store(static_cast<int>(chosen), std::memory_order_relaxed);
    return chosen;
}

IsaScope::IsaScope(Isa isa) : before_(active_isa())
{
    if (!cpu_has(isa)) throw std::invalid_argument("IsaScope: this CPU cannot run " + name_of(isa));
    g_active.store(static_cast<int>(isa), std::memory_order_relaxed);
}

IsaScope::~IsaScope() { g_active.store(static_cast<int>(before_), std::memory_order_relaxed); }

}  // namespace attnlab
