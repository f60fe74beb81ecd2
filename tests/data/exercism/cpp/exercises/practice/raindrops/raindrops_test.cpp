#include "raindrops.h"
#ifdef EXERCISM_TEST_SUITE
#include <catch2/catch.hpp>
#else
#include "test/catch.hpp"
#endif

TEST_CASE("the sound for 1 is 1") {
    REQUIRE("1" == raindrops::convert(1));
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("the sound for 3 is Pling") {
    REQUIRE("Pling" == raindrops::convert(3));
}

TEST_CASE("the sound for 35 is PlangPlong") {
    REQUIRE("PlangPlong" == raindrops::convert(35));
}

TEST_CASE("the sound for 105 is PlingPlangPlong") {
    REQUIRE("PlingPlangPlong" == raindrops::convert(105));
}
#endif
