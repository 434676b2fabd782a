// SPDX-License-Identifier: MIT
/*
 * JfrProfile criu DIR - Java's JFR CPU-time sampler (JEP 509, JDK 25): with
 * the event jdk.CPUTimeSample on, the JVM gives each Java thread a timer on
 * that thread's CPU clock (pthread_getcpuclockid(), a clock ID that names
 * the tid) sending SIGPROF to that thread (SIGEV_THREAD_ID), every 10 ms of
 * its CPU time here.  Three burner threads burn CPU until the first
 * samples arrive, sleep while the JVM is checkpointed, and burn again once
 * DIR/restored appears (criu dumped and restored the JVM): each must then
 * get samples at the rate its CPU time gives (>= 50 per CPU second of
 * 100), counted from JFR's own events.  The criu role protocol of test/lib/driver.sh: DIR/criu.pid
 * (the pid as /proc sees it), DIR/criu.ready, then DIR/criu.result and
 * DIR/criu.done; exit 4 before ready when this JVM lacks the event.
 * Run through build/test/jfr_profile (a wrapper that execs java).
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.consumer.RecordingStream;

public class JfrProfile {
	static final int BURNERS = 3;
	static final ConcurrentHashMap<Long, AtomicLong> samples = new ConcurrentHashMap<>();
	// every sample: the sampled thread's ID and when it was taken (ns since the epoch)
	static final java.util.concurrent.ConcurrentLinkedQueue<long[]> taken =
		new java.util.concurrent.ConcurrentLinkedQueue<>();
	static volatile long sink;
	// false while the JVM waits to be checkpointed: the burners sleep, so no
	// CPU-time timer fires while criu seizes the threads (criu 4.2.1 and
	// criu-dev failed now and then to dump a thread seized as SIGPROF was
	// being delivered to it: "Unexpected task interruption" in its
	// parasite, with or without the plugin)
	static volatile boolean burn = true;

	static void put(Path dir, String name, String text) throws Exception {
		Path tmp = dir.resolve(name + ".tmp");
		Files.writeString(tmp, text);
		Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
	}

	static long now() {
		var t = java.time.Instant.now();
		return t.getEpochSecond() * 1000000000L + t.getNano();
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 2 || !args[0].equals("criu")) {
			System.err.println("usage: jfr_profile criu DIR");
			System.exit(2);
		}
		Path dir = Path.of(args[1]);
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		Thread[] burners = new Thread[BURNERS];
		RecordingStream rs = new RecordingStream();

		try {
			rs.enable("jdk.CPUTimeSample").with("throttle", "10ms");
		} catch (Exception e) {
			System.err.println("jfr_profile: this JVM has no jdk.CPUTimeSample (JEP 509, JDK 25): " + e);
			System.exit(4);
		}
		rs.setMaxAge(Duration.ofSeconds(5));
		rs.onEvent("jdk.CPUTimeSample", ev -> {
			var t = ev.hasField("sampledThread") ? ev.getThread("sampledThread") : ev.getThread();
			if (t == null)
				return;
			samples.computeIfAbsent(t.getJavaThreadId(), k -> new AtomicLong()).incrementAndGet();
			var at = ev.getStartTime();
			taken.add(new long[] { t.getJavaThreadId(), at.getEpochSecond() * 1000000000L + at.getNano() });
		});
		rs.startAsync();
		for (int i = 0; i < BURNERS; i++) {
			burners[i] = new Thread(() -> {
				long x = 0;
				for (;;) {
					if (!burn) {
						try {
							Thread.sleep(5);
						} catch (InterruptedException e) {
						}
						continue;
					}
					for (int k = 0; k < 1000000; k++)
						x += (x ^ 0x9e3779b97f4a7c15L) >>> 3;
					sink = x;
				}
			}, "burner" + i);
			burners[i].setDaemon(true);
			burners[i].start();
		}
		// let the sampler arm each thread's timer and deliver a first batch
		for (int waited = 0; waited < 200 && samples.size() < BURNERS; waited++)
			Thread.sleep(50);
		if (samples.size() < BURNERS) {
			System.err.println("jfr_profile: no CPU-time samples of the burners in 10 s: " + samples);
			System.exit(4);
		}
		// idle while checkpointed, burning again once restored
		burn = false;
		Thread.sleep(100);
		put(dir, "criu.pid", Files.readSymbolicLink(Path.of("/proc/self")).toString() + "\n");
		put(dir, "criu.ready", "1\n");
		while (!Files.exists(dir.resolve("restored")))
			Thread.sleep(10);
		burn = true;
		// a window of 3 s: each burner's CPU time in it and the samples JFR
		// took in it, counted once delivered (JFR hands events over about
		// once a second)
		Thread.sleep(500);
		long[] c0 = new long[BURNERS];
		long w0 = now();
		for (int i = 0; i < BURNERS; i++)
			c0[i] = mx.getThreadCpuTime(burners[i].threadId());
		Thread.sleep(3000);
		double[] cpu = new double[BURNERS];
		for (int i = 0; i < BURNERS; i++)
			cpu[i] = (mx.getThreadCpuTime(burners[i].threadId()) - c0[i]) / 1e9;
		long w1 = now();
		Thread.sleep(3000);
		StringBuilder out = new StringBuilder();
		int bad = 0;
		for (int i = 0; i < BURNERS; i++) {
			long id = burners[i].threadId(), got = 0;

			for (long[] t : taken)
				got += t[0] == id && t[1] >= w0 && t[1] < w1 ? 1 : 0;
			boolean ok = cpu[i] >= 0.2 && got >= cpu[i] * 50;
			bad += ok ? 0 : 1;
			out.append(String.format("%s jfr-profile/burner%d-sampled: %d CPU-time samples for %.3f s of its CPU "
						 + "time (want >= %.0f%s)\n", ok ? "PASS" : "FAIL", i, got, cpu[i],
						 cpu[i] * 50, cpu[i] >= 0.2 ? "" : "; starved: under 0.2 s"));
		}
		put(dir, "criu.result", out.toString());
		put(dir, "criu.done", "1\n");
		rs.close();
		System.exit(bad > 0 ? 1 : 0);
	}
}
