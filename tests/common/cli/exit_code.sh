#!/usr/bin/env bash
# Runs a command and prints its exit code after its output, so that one CTest
# PASS_REGULAR_EXPRESSION checks both (on its own it ignores the exit code).
# Usage: exit_code.sh PROGRAM [ARGS...]
"$@" 2>&1
echo "[exit code $?]"
