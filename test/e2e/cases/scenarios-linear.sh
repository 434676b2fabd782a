#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/scenarios-linear.sh BUILD - scenarios restored with --mode
# linear, the create/delete loop of kernels without the exact-ID prctl
# (run_scenario, test/e2e/lib.sh; sparse.linear also checks the announced cost
# and progress).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

for sc in mix sparse stride threads; do
	run_scenario "$sc" linear
done
totals
