// The one Catch2 runner (main) that every test program links: Catch2 2's runner is a large
// template-heavy body, so it is compiled once here instead of once per test program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
