// Angles of the position schemes: pi to long double precision, for the exact references.
#pragma once

namespace attnlab {

inline constexpr long double kPi = 3.141592653589793238462643383279502884L;

}  // namespace attnlab
