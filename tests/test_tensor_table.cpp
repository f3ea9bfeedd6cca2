// The README's table of tensors is generated from the declared tensor lists, and this test
// holds the two together: a tensor added, renamed or given other axes must reach the README.
#include "attnlab/experiments/alibi_params.hpp"
#include "attnlab/experiments/attend_params.hpp"
#include "attnlab/experiments/mask_params.hpp"
#include "attnlab/experiments/pe_params.hpp"
#include "attnlab/experiments/permute_params.hpp"
#include "attnlab/experiments/rope_params.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace attnlab;

TEST_CASE("the README's tensor table is the declared tensor lists")
{
    const std::string expected = tensors_markdown({{"permute-test", permute_tensor_infos()},
                                                   {"pe", pe_tensor_infos()},
                                                   {"rope", rope_tensor_infos()},
                                                   {"alibi", alibi_tensor_infos()},
                                                   {"mask", mask_tensor_infos()},
                                                   {"attend", attend_tensor_infos()}});
    std::ifstream in(std::string(ATTNLAB_DATA_DIR) + "/../README.md");
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string readme = ss.str();
    const std::string begin = "<!-- tensors:begin -->\n", end = "<!-- tensors:end -->";
    const auto a = readme.find(begin), b = readme.find(end);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    const std::string table = readme.substr(a + begin.size(), b - a - begin.size());
    INFO("the table the README should hold:\n" << expected);
    CHECK(table == expected);
}
