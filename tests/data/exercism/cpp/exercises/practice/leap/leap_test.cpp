#include "leap.h"
#ifdef EXERCISM_TEST_SUITE
#include <catch2/catch.hpp>
#else
#include "test/catch.hpp"
#endif

TEST_CASE("year not divisible by 4 in common year") {
    REQUIRE_FALSE(leap::is_leap_year(2015));
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("year divisible by 4, not divisible by 100 in leap year") {
    REQUIRE(leap::is_leap_year(1996));
}

TEST_CASE("year divisible by 100, not divisible by 400 in common year") {
    REQUIRE_FALSE(leap::is_leap_year(2100));
}

TEST_CASE("year divisible by 400 is leap year") {
    REQUIRE(leap::is_leap_year(2000));
}
#endif
