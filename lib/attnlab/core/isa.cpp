#include "attnlab/core/isa.hpp"

#include "attnlab/core/enums.hpp"

#include <algorithm>
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

// Every target, in enum_names' order (scalar first).
std::vector<Isa> all_isas()
{
    std::vector<Isa> out;
    for (const auto& [isa, name] : enum_names(Isa{})) out.push_back(isa);
    return out;
}

// ATTNLAB_ISA's value read against the CPU's targets: the target it names, or the line that
// refuses it (problem non-empty; isa then the CPU's best).
struct IsaRequest {
    Isa isa;
    std::string problem;
};
IsaRequest read_request(const char* requested, const std::vector<Isa>& cpu)
{
    if (requested == nullptr) return {cpu.front(), {}};
    const std::map<std::string, Isa> known = enum_map<Isa>();
    const auto it = known.find(requested);
    if (it == known.end())
        return {cpu.front(), "ATTNLAB_ISA: '" + std::string(requested) + "' is no target; targets: " + names_of(all_isas()) +
                                 " (this CPU has " + names_of(cpu) + ")"};
    if (std::find(cpu.begin(), cpu.end(), it->second) == cpu.end())
        return {cpu.front(), "ATTNLAB_ISA: this CPU cannot run " + it->first + "; it has " + names_of(cpu)};
    return {it->second, {}};
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
    for (const Isa isa : all_isas())
        if (cpu_has(isa)) out.insert(out.begin(), isa);  // best first
    return out;
}

std::string isa_request_problem(const char* requested, const std::vector<Isa>& cpu) { return read_request(requested, cpu).problem; }

Isa active_isa()
{
    const int now = g_active.load(std::memory_order_relaxed);
    if (now != kUnread) return static_cast<Isa>(now);
    const Isa chosen = read_request(std::getenv("ATTNLAB_ISA"), cpu_isas()).isa;
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
