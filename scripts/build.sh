#!/usr/bin/env bash
# Configures and builds rewind into build/ (or $BUILD_DIR), with extra CMake arguments passed on;
# $BUILD_TARGETS, when set, names the targets to build (all of them otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
