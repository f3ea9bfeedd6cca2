// fmt's compiled part, built into the program from fmt's own header (format-inl.h, which
// Debian's libfmt-dev ships), so that no run loads libfmt.so, nor the libstdc++ it would pull
// in: every other file includes fmt's headers as usual and calls these definitions.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The templates format.h declares `extern template`, instantiated here once for the program.
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
