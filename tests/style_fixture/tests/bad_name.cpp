// A test name the name check must refuse: CMake would split it at the semicolon.
TEST_CASE("first half; second half")
{
}
