// `train`'s checkpoints: what --save writes of a single-scheme run, and what --resume reads back.
// The state is the flat parameters in the layout's order (run.json's "layout" says where each
// named weight sits), AdamW's two moments and its step count. The step count is also the data
// position, since step s trains on batch s of the seeded stream. With the losses of the steps
// taken (loss.npy), it is all a run needs to go on as if it had never stopped.
#include "attnlab/experiments/train_internal.hpp"

#include "attnlab/core/params_json.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/read.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace attnlab::train_detail {

using namespace train;

namespace {

// The options a checkpoint must share with the run that resumes it (--steps, --eval-lens and
// --threads may differ), as run.json's params name them.
constexpr const char* kSameParams[] = {"seed", "dtype", "task", "pe", "vocab", "d_model", "layers", "heads", "train_len", "batch", "lr", "k"};

std::string shown(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::string flag_of(std::string key)
{
    for (char& c : key)
        if (c == '_') c = '-';
    return "--" + key;
}

nlohmann::json checkpoint_params(const std::string& dir, std::vector<std::string>& read)
{
    const std::string path = dir + "/run.json";
    const auto bytes = read_input_file(path, [](std::string_view) { return ReadLimit{1 << 20, "a run.json"}; });
    read.push_back(path);
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    const auto params = j.is_object() ? j.find("params") : j.end();
    if (j.is_discarded() || !j.is_object() || params == j.end() || !params->is_object() || j.value("command", "") != "train") {
        throw InputError(fmt::format("--resume {}: {} is not the run.json of an `attnlab train --save`", dir, path));
    }
    return *params;
}

// The checkpoint was made with this run's options.
void require_same_params(const TrainParams& p, const Plan& plan, const std::string& dir, const nlohmann::json& saved)
{
    nlohmann::json mine = params_json(params_of(train_experiment(), p));
    mine["seed"] = plan.seed;
    mine["dtype"] = std::string(name_of(plan.dtype));
    for (const char* key : kSameParams) {
        const auto it = saved.find(key);
        if (it == saved.end() || *it != mine[key]) {
            throw InputError(fmt::format("--resume {}: the checkpoint was trained with {} {}, this run has {}; only --steps, --eval-lens and "
                                         "--threads may differ",
                                         dir, flag_of(key), it == saved.end() ? "(none)" : shown(*it), shown(mine[key])));
        }
    }
}

// DIR/NAME.npy, holding `size` numbers.
Tensor checkpoint_tensor(const std::string& dir, const std::string& name, std::size_t size, std::vector<std::string>& read)
{
    const std::string path = dir + "/" + name + ".npy";
    Tensor t = read_tensor_file(path, "", 80.0 * static_cast<double>(size) + 1e6);  // an NPY costs about 9 bytes a byte
    read.push_back(path);
    if (t.shape.size() != 1 || t.shape[0] != size) {
        throw InputError(fmt::format("--resume {}: {} holds shape [{}], the model has {} numbers", dir, path, fmt::join(t.shape, ", "), size));
    }
    return t;
}

template <class T>
std::vector<T> as(const Tensor& t)
{
    return std::vector<T>(t.values.begin(), t.values.end());
}

}  // namespace

template <class T>
TrainState<T> fresh_state(const TrainParams& p, Scheme pe, std::uint64_t seed)
{
    return {init_model<T>(model_config(p, pe), seed), {}, {}};
}

template <class T>
TrainState<T> load_checkpoint(const TrainParams& p, const Plan& plan, std::vector<std::string>& read)
{
    const std::string& dir = p.resume;
    require_same_params(p, plan, dir, checkpoint_params(dir, read));
    TrainState<T> s = fresh_state<T>(p, p.pe, plan.seed);
    const std::size_t n = s.model.params.size();
    const Tensor done = checkpoint_tensor(dir, "steps_done", 1, read);
    const double steps = done.values[0];
    if (!(steps >= 1.0 && steps <= static_cast<double>(p.steps) && steps == std::floor(steps))) {
        throw InputError(fmt::format("--resume {}: the checkpoint has taken {} steps; --steps {} must be at least that (it is the total)", dir, steps, p.steps));
    }
    s.model.params = as<T>(checkpoint_tensor(dir, "model_params", n, read));
    s.opt.m = as<T>(checkpoint_tensor(dir, "adam_m", n, read));
    s.opt.v = as<T>(checkpoint_tensor(dir, "adam_v", n, read));
    s.opt.step = static_cast<long>(steps);
    const Tensor loss = checkpoint_tensor(dir, "loss", static_cast<std::size_t>(steps), read);
    s.loss.assign(loss.values.begin(), loss.values.end());
    return s;
}

template <class T>
void add_checkpoint(const TrainState<T>& s, Elem elem, Run& run)
{
    auto flat = [&](const char* name, const std::vector<T>& v) {  // every run takes a step: the moments exist
        run.add(Tensor{name, {"parameter"}, elem, {v.size()}, std::vector<double>(v.begin(), v.end())});
    };
    flat("model_params", s.model.params);
    flat("adam_m", s.opt.m);
    flat("adam_v", s.opt.v);
    run.add(Tensor{"steps_done", {"value"}, Elem::index, {1}, {static_cast<double>(s.opt.step)}});
    nlohmann::ordered_json layout = nlohmann::ordered_json::array();
    for (const auto& e : s.model.layout.entries) layout.push_back({{"name", e.name}, {"shape", e.shape}, {"offset", e.offset}});
    run.save_info = nlohmann::ordered_json{{"layout", layout}}.dump();
}

template TrainState<float> fresh_state(const TrainParams&, Scheme, std::uint64_t);
template TrainState<double> fresh_state(const TrainParams&, Scheme, std::uint64_t);
template TrainState<float> load_checkpoint(const TrainParams&, const Plan&, std::vector<std::string>&);
template TrainState<double> load_checkpoint(const TrainParams&, const Plan&, std::vector<std::string>&);
template void add_checkpoint(const TrainState<float>&, Elem, Run&);
template void add_checkpoint(const TrainState<double>&, Elem, Run&);

}  // namespace attnlab::train_detail
