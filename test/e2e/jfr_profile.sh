#!/bin/sh
# SPDX-License-Identifier: MIT
# jfr_profile ROLE DIR: test/e2e/JfrProfile.java in the JVM, as the case
# driver starts a test program (exec: the pid stays the program's).  No
# perf data file (criu would have to carry /tmp/hsperfdata_*), no class
# data sharing archive mapped from outside the root, and a fixed set of
# threads: a JIT compiler or GC thread that the JVM starts or ends while
# criu seizes the process fails criu's dump ("Can't init thread in
# parasite"), with or without ptimer.
exec java -XX:-UsePerfData -Xshare:off -XX:-UseDynamicNumberOfCompilerThreads \
	-XX:-UseDynamicNumberOfGCThreads -XX:+UseSerialGC -cp "$(dirname "$0")" JfrProfile "$@"
