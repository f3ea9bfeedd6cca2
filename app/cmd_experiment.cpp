// Every registered experiment as a subcommand: its options bound from its rows, then the
// options every run shares.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/registry/registry.hpp"

#include <map>

namespace attnlab::app {

namespace {

CLI::Option* limited(CLI::Option* opt, const Limits& limits)
{
    if (limits.kind == Limits::Kind::whole_range) return opt->check(whole_in(limits.lo, limits.hi));
    if (limits.kind == Limits::Kind::positive) return opt->check(finite_positive);
    return opt;
}

CLI::Option* add_choice(CLI::App& sub, const BoundOption& o, const ChoiceRef& c)
{
    auto* opt = sub.add_option_function<std::string>(o.flag, c.set, o.help)
                    ->check(CLI::IsMember(o.only.empty() ? c.names : o.only))
                    ->type_name("");
    if (!o.aliases.empty()) {  // an old spelling becomes its name before the check, and is noted
        opt->transform(CLI::Validator(
            [aliases = o.aliases, given = o.old_spelling_given](std::string& value) {
                for (const auto& [alias, name] : aliases)
                    if (value == alias) {
                        if (given) given(alias, name);
                        value = name;
                    }
                return std::string();
            },
            ""));
    }
    return c.optional ? opt : opt->default_str(c.get());
}

template <class V>
CLI::Option* add_optional_value(CLI::App& sub, const BoundOption& o, std::optional<V>* v)
{
    return limited(add_optional(sub, o.flag, *v, o.help), o.limits);
}

CLI::Option* add_list(CLI::App& sub, const BoundOption& o, std::vector<long>* v)
{
    auto* opt = sub.add_option(o.flag, *v, o.help)->delimiter(',');
    return o.limits.kind == Limits::Kind::none ? opt->check(non_empty)->check(whole_number) : limited(opt, o.limits);
}

CLI::Option* bind(CLI::App& sub, const BoundOption& o)
{
    return std::visit(Overloaded{[&](long* v) { return limited(sub.add_option(o.flag, *v, o.help), o.limits); },
                                 [&](double* v) { return limited(sub.add_option(o.flag, *v, o.help), o.limits); },
                                 [&](unsigned* v) { return limited(sub.add_option(o.flag, *v, o.help), o.limits); },
                                 [&](bool* v) { return sub.add_flag(o.flag, *v, o.help); },
                                 [&](std::string* v) { return sub.add_option(o.flag, *v, o.help)->check(non_empty_path); },  // a path
                                 [&](std::optional<long>* v) { return add_optional_value(sub, o, v); },
                                 [&](std::optional<double>* v) { return add_optional_value(sub, o, v); },
                                 [&](std::vector<long>* v) { return add_list(sub, o, v); },
                                 [&](const ChoiceRef& c) { return add_choice(sub, o, c); }},
                      o.ref);
}

// A list that sets a length (--positions 0,3,7 alone means --len 3).
void apply_implied_lengths(const CLI::App& sub, const std::vector<BoundOption>& options)
{
    for (const auto& o : options) {
        if (o.sets_length_of.empty() || sub.count(o.flag) == 0 || sub.count(o.sets_length_of) > 0) continue;
        for (const auto& target : options)
            if (target.flag == o.sets_length_of) *std::get<long*>(target.ref) = static_cast<long>(std::get<std::vector<long>*>(o.ref)->size());
    }
}

void setup_experiment(CLI::App& app, const Registered& r, Runners& runners)
{
    std::shared_ptr<Invocation> invocation = r.invoke();
    auto common = std::make_shared<CommonOpts>();
    auto* sub = app.add_subcommand(r.name, r.summary);
    const auto options = std::make_shared<std::vector<BoundOption>>(bind_options(*sub, *invocation));
    if (r.measurements_help.empty()) {
        add_common_options(*sub, *common);
        sub->footer(tensors_help(r.tensors) + "\nExample: " + r.example);
    } else {
        add_run_options(*sub, *common);
        add_enum_subset_option(*sub, "--format", common->format, {Format::text, Format::json}, "Output format");
        sub->footer(r.measurements_help + "\nExample: " + r.example);
    }
    runners.emplace_back(sub, [invocation, common, options, sub] {
        apply_implied_lengths(*sub, *options);
        common->given_flags.clear();
        for (const auto& o : *options) {
            if (sub->count(o.flag) == 0) continue;
            common->given_flags.push_back(o.flag);
            if (!o.sets_length_of.empty()) common->given_flags.push_back(o.sets_length_of);  // --positions 0,3,7 gives --len
        }
        return execute(*common, [&](const RunContext& ctx) { return invocation->run(ctx); });
    });
}

}  // namespace

std::vector<BoundOption> bind_options(CLI::App& sub, Invocation& invocation)
{
    std::vector<BoundOption> options = invocation.options();
    std::map<std::string, CLI::Option*> by_flag;
    for (const auto& o : options) by_flag[o.flag] = bind(sub, o);
    for (const auto& o : options)
        for (const auto& other : o.excludes) by_flag.at(o.flag)->excludes(by_flag.at(other));
    return options;
}

void setup_experiments(CLI::App& app, const std::string& bound, Runners& runners)
{
    for (const auto& r : registered_experiments()) {
        if (r.name == bound) setup_experiment(app, r, runners);
        else app.add_subcommand(r.name, r.summary);
    }
}

}  // namespace attnlab::app
