#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/scenarios-exact.sh BUILD - the mix scenario restored with
# --mode exact (run_scenario, test/e2e/lib.sh).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

run_scenario mix exact
totals
