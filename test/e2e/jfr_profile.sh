#!/bin/sh
# SPDX-License-Identifier: MIT
# jfr_profile ROLE DIR: test/e2e/JfrProfile.java in the JVM, as the case
# driver starts a test program (exec: the pid stays the program's).  No
# perf data file (criu would have to carry /tmp/hsperfdata_*), no class
# data sharing archive mapped from outside the root.
exec java -XX:-UsePerfData -Xshare:off -cp "$(dirname "$0")" JfrProfile "$@"
