// Random valid command lines, drawn by the registry's samplers, for the scripts that run the
// program on them (tests/python/no_false_alarms.py): the registry is the one list of
// experiments, so no script keeps its own.
//   draw_commands SEED COUNT   COUNT lines, each a JSON object: "args" (the command, then its
//                              options) and "params" (as the run's report holds them)
//   draw_commands --each SEED  one such line for each experiment with a sampler, in order
//   draw_commands --names      the experiments with a sampler, one per line
#include "attnlab/core/params_json.hpp"
#include "attnlab/registry/registry.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::vector<const attnlab::Registered*> sampled()
{
    std::vector<const attnlab::Registered*> out;
    for (const auto& r : attnlab::registered_experiments())
        if (r.draw) out.push_back(&r);
    return out;
}

void print(const attnlab::Registered& r, attnlab::Rng& rng)
{
    const auto drawn = r.draw(rng);
    std::cout << nlohmann::ordered_json{{"args", drawn.args}, {"params", attnlab::params_json(drawn.params)}}.dump() << '\n';
}

}  // namespace

int main(int argc, char** argv)
{
    const auto sampled_experiments = sampled();
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 1 && args[0] == "--names") {
        for (const auto* r : sampled_experiments) std::cout << r->name << '\n';
        return std::cout.flush() ? 0 : 2;
    }
    const bool each = !args.empty() && args[0] == "--each";
    long count = 0;
    unsigned long seed = 0;
    try {
        if (args.size() != 2) throw std::invalid_argument("two arguments");
        seed = std::stoul(args[each ? 1 : 0]), count = each ? 0 : std::stol(args[1]);
    } catch (const std::exception&) {
        std::cerr << "usage: draw_commands SEED COUNT | draw_commands --each SEED | draw_commands --names\n";
        return 2;
    }
    attnlab::Rng rng(seed, 0);
    if (each)
        for (const auto* r : sampled_experiments) print(*r, rng);
    for (long i = 0; i < count; ++i) print(*sampled_experiments[rng.below(static_cast<std::uint32_t>(sampled_experiments.size()))], rng);
    return std::cout.flush() ? 0 : 2;
}
