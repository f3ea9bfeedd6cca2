// A check: one claim, the figure measured for it, and the bound it is held against.
// Checks are built with the small builders below, so every check states in its builder what
// kind of bound it has: a numeric tolerance (--tol may replace it), a bound that is part of
// the claim, a bit-for-bit identity, or an article's wording that never decides the exit
// status.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace attnlab {

// How the measured figure is held against the tolerance.
enum class Compare { le, lt, ge, gt };
constexpr auto enum_names(Compare)
{
    return std::array{std::pair{Compare::le, std::string_view("<=")},
                      std::pair{Compare::lt, std::string_view("<")},
                      std::pair{Compare::ge, std::string_view(">=")},
                      std::pair{Compare::gt, std::string_view(">")}};
}

// invariant:     the program's own mathematics; a failure makes the exit status 1.
// article:       a claim as an article words it; its verdict is reported, never the exit status.
// demonstration: something a run shows for the usual inputs but that no theorem guarantees
//                for every input (a rule of thumb); reported, never the exit status.
enum class Role { invariant, article, demonstration };
constexpr auto enum_names(Role)
{
    return std::array{std::pair{Role::invariant, std::string_view("invariant")},
                      std::pair{Role::article, std::string_view("article")},
                      std::pair{Role::demonstration, std::string_view("demonstration")}};
}

// An article's claim judged: the wording holds; it does not; or it is literally false while
// the statement its context means (Check::intended, measured in the same run) holds.
enum class Verdict { holds, wrong, imprecise };
constexpr auto enum_names(Verdict)
{
    return std::array{std::pair{Verdict::holds, std::string_view("holds")},
                      std::pair{Verdict::wrong, std::string_view("wrong")},
                      std::pair{Verdict::imprecise, std::string_view("imprecise")}};
}


// The figure of what an article means where its words say more: the verdict is IMPRECISE,
// not WRONG, when the words fail and this holds.
struct Intended {
    std::string metric;
    double measured = 0.0;
    double tolerance = 0.0;
    Compare cmp = Compare::le;
    bool holds() const;  // NaN never holds
};

// numeric: a floating-point tolerance, replaced by --tol when given.
// fixed:   a bound that is part of the claim itself (|PE| <= 1, a count that must be 0,
//          two results that must be bit-identical); --tol never touches it.
enum class TolKind { numeric, fixed };

struct Check {
    std::string name;    // identifier for scripts, e.g. "relative_shift_linear"
    std::string claim;   // the sentence being checked
    std::string metric;  // what the measured figure is, e.g. "max |PE(p+k) - M(k)PE(p)|"
    double measured = 0.0;
    double tolerance = 0.0;
    Compare cmp = Compare::le;
    Role role = Role::invariant;
    TolKind tol_kind = TolKind::numeric;
    // A rounding tolerance's yardstick: the natural size of what the metric measures (|PE| is
    // at most 1, a score at most |q||k|/sqrt(d)). A tolerance that reaches
    // kMaxToleranceFraction of it cannot tell a right figure from a wrong one, so the check
    // is not shown (see untestable()). 0: no yardstick (fixed bounds).
    double scale = 0.0;
    // An article's claim: the article's own words (at most 40 characters; the section is in the
    // claim or the tour's source) and one sentence on what a fair reader takes them to mean.
    std::string quote;
    std::string reading;
    std::optional<Intended> intended;

    bool passed() const;  // NaN never passes
    Verdict verdict() const;  // an article's claim: holds, wrong or imprecise
};

// An article's claim with its words and their reading (both in the run's language but the
// quote, which stays as the article wrote it).
Check quoting(Check c, std::string quote, std::string reading);
// The same claim, IMPRECISE rather than WRONG when the intended statement's figure holds.
Check meaning(Check c, std::string metric, double measured, double tolerance, Compare cmp = Compare::le);

// Whether a rounding tolerance reaches kMaxToleranceFraction (core/error_model.hpp) of the
// check's scale: at this precision the check could not fail, or could not hold, for a reason
// other than the claim.
bool untestable(const Check& c);

// measured <= tol, where tol is a rounding bound (--tol replaces it) and scale the natural
// size of the measured quantity.
Check at_most(std::string claim, std::string metric, double measured, double tol, double scale);
// measured <= bound, where the bound is the claim's own (|PE| <= 1).
Check within_bound(std::string claim, std::string metric, double measured, double bound);
// measured == 0 exactly: a count that must be 0, or a difference that must vanish.
Check exact_zero(std::string claim, std::string metric, double measured);
// Two results that must agree bit for bit; --tol never loosens it.
Check bit_identical(std::string claim, std::string metric, double max_difference);
// measured > bound (a difference that must exist).
Check greater_than(std::string claim, std::string metric, double measured, double bound);
// measured < bound, the bound being the claim's own.
Check less_than(std::string claim, std::string metric, double measured, double bound);
// An article's wording against the measurement: reported, never the exit status.
Check article_claim(std::string claim, std::string metric, double measured, double bound,
                    Compare cmp = Compare::le);
// The same, with a rounding tolerance that --tol may replace, and its scale.
Check article_claim_numeric(std::string claim, std::string metric, double measured, double tol, double scale);
// A demonstration: measured against a bound the usual inputs meet, reported, never deciding.
Check demonstration(std::string claim, std::string metric, double measured, double bound, Compare cmp);

}  // namespace attnlab
