// SPDX-License-Identifier: MIT
/* Human-readable names and the `ptimer show` table. */
#include <inttypes.h>
#include <stdio.h>

#include "images/image.h"

/* uapi/linux/time.h */
static const char *const clock_names[] = {
	[0] = "CLOCK_REALTIME",
	[1] = "CLOCK_MONOTONIC",
	[2] = "CLOCK_PROCESS_CPUTIME_ID",
	[3] = "CLOCK_THREAD_CPUTIME_ID",
	[4] = "CLOCK_MONOTONIC_RAW",
	[5] = "CLOCK_REALTIME_COARSE",
	[6] = "CLOCK_MONOTONIC_COARSE",
	[7] = "CLOCK_BOOTTIME",
	[8] = "CLOCK_REALTIME_ALARM",
	[9] = "CLOCK_BOOTTIME_ALARM",
	[11] = "CLOCK_TAI",
};

/*
 * Negative ids encode a CPU clock (include/linux/posix-timers.h):
 * ~pid << 3 | PERTHREAD 4 | PROF 0 / VIRT 1 / SCHED 2, or 3 = CLOCKFD with
 * ~fd << 3.  pid 0 is the caller itself.  The shift is arithmetic (gcc).
 */
const char *ptimer_clock_name(int32_t clock_id, char *buf, size_t len)
{
	static const char *const which[] = { "prof", "virt", "sched" };
	int32_t pid;

	if (clock_id >= 0) {
		if ((size_t)clock_id < sizeof(clock_names) / sizeof(clock_names[0]) &&
		    clock_names[clock_id])
			snprintf(buf, len, "%s", clock_names[clock_id]);
		else
			snprintf(buf, len, "clock %" PRId32, clock_id);
		return buf;
	}
	pid = ~(clock_id >> 3);
	if ((clock_id & 3) == 3) {
		snprintf(buf, len, "CLOCKFD(fd %" PRId32 ")", pid);
		return buf;
	}
	if (pid == 0)
		snprintf(buf, len, "CPU(self, %s, %s)", (clock_id & 4) ? "thread" : "process",
			 which[clock_id & 3]);
	else
		snprintf(buf, len, "CPU(%s %" PRId32 ", %s, %s)", (clock_id & 4) ? "tid" : "pid",
			 pid, (clock_id & 4) ? "thread" : "process", which[clock_id & 3]);
	return buf;
}

const char *ptimer_notify_name(int32_t sigev_notify)
{
	switch (sigev_notify) {
	case PTIMER_SIGEV_SIGNAL:
		return "signal";
	case PTIMER_SIGEV_NONE:
		return "none";
	case PTIMER_SIGEV_THREAD:
		return "thread";
	case PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID:
		return "thread_id";
	}
	return "unknown";
}

/* "signal 14 -> pid 123", "thread_id signal 32 -> tid 124", "none". */
static const char *notify_desc(const struct ptimer_timer *t, char *buf, size_t len)
{
	const char *name = ptimer_notify_name(t->sigev_notify);

	switch (t->sigev_notify) {
	case PTIMER_SIGEV_NONE:
		/* the kernel keeps whatever sigev_signo was given: show it */
		if (t->signo)
			snprintf(buf, len, "none (signo %" PRId32 ")", t->signo);
		else
			snprintf(buf, len, "none");
		break;
	case PTIMER_SIGEV_SIGNAL:
	case PTIMER_SIGEV_THREAD:
	case PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID: {
		const char *to = t->sigev_notify & PTIMER_SIGEV_THREAD_ID ? "tid" : "pid";
		const char *prefix = t->sigev_notify == PTIMER_SIGEV_SIGNAL ? "" : name;

		if (t->notify_tid > 0)
			snprintf(buf, len, "%s%ssignal %" PRId32 " -> %s %" PRId32, prefix,
				 *prefix ? " " : "", t->signo, to, t->notify_tid);
		else
			snprintf(buf, len, "%s%ssignal %" PRId32, prefix, *prefix ? " " : "",
				 t->signo);
		break;
	}
	default:
		snprintf(buf, len, "unknown(%" PRId32 ") signal %" PRId32, t->sigev_notify,
			 t->signo);
	}
	return buf;
}

const char *ptimer_slice_ext_name(uint32_t slice_ext)
{
	switch (slice_ext) {
	case PTIMER_SLICE_EXT_UNAVAILABLE:
		return "unavailable";
	case PTIMER_SLICE_EXT_DISABLED:
		return "disabled";
	case PTIMER_SLICE_EXT_ENABLED:
		return "enabled";
	}
	return "unknown";
}

static void show_threads(const struct ptimer_image *img, FILE *out)
{
	uint32_t i;

	fprintf(out, "%" PRIu32 " thread%s:\n%10s  %-18s  %8s  %-10s  %-11s  %s\n", img->n_threads,
		img->n_threads == 1 ? "" : "s", "TID", "RSEQ", "SIZE", "SIGNATURE", "SLICE_EXT",
		"SLICE_CTRL");
	for (i = 0; i < img->n_threads; i++) {
		const struct ptimer_thread *t = &img->threads[i];

		fprintf(out, "%10" PRId32 "  0x%016" PRIx64 "  %8" PRIu32 "  0x%08" PRIx32 "  %-11s  0x%08"
			PRIx32 "\n", t->tid, t->rseq_abi_pointer, t->rseq_abi_size, t->rseq_signature,
			ptimer_slice_ext_name(t->slice_ext), t->slice_ctrl);
	}
}

static const char *ts_str(const struct ptimer_ts *ts, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64 ".%09" PRId64, ts->sec, ts->nsec);
	return buf;
}

void ptimer_image_show(const struct ptimer_image *img, FILE *out)
{
	uint32_t i;

	fprintf(out, "pid %" PRId32 ": %" PRIu32 " timer%s (image version %" PRIu32 ")\n",
		img->pid, img->n_timers, img->n_timers == 1 ? "" : "s", img->version);
	if (img->state_in_core && !img->timers_in_core)
		fprintf(out, "their value, interval and overrun: criu's, in core-%" PRId32 ".img (the CRIU plugin's "
			"image; the columns below show 0)\n", img->pid);
	if (img->timers_in_core)
		fprintf(out, "its timers: criu's, all of them, in core-%" PRId32 ".img (one thread that never had "
			"another: nothing of them needed the plugin's look)\n", img->pid);
	if (img->n_threads)
		show_threads(img, out);
	if (!img->n_timers)
		return;
	fprintf(out, "%10s  %-30s  %-32s  %-18s  %-21s  %-21s  %s\n", "ID", "CLOCK", "NOTIFY",
		"SIVAL", "IT_VALUE", "IT_INTERVAL", "OVERRUN");
	for (i = 0; i < img->n_timers; i++) {
		const struct ptimer_timer *t = &img->timers[i];
		char clk[48], notify[80], val[32], ival[32];

		fprintf(out, "%10" PRId32 "  %-30s  %-32s  0x%016" PRIx64 "  %-21s  %-21s  %" PRId32 "%s",
			t->timer_id, ptimer_clock_name(t->clock_id, clk, sizeof(clk)),
			notify_desc(t, notify, sizeof(notify)), t->sival,
			ts_str(&t->it_value, val, sizeof(val)),
			ts_str(&t->it_interval, ival, sizeof(ival)), t->overrun,
			t->pending || t->clock_tid ? "" : "\n");
		if (t->clock_tid)
			fprintf(out, "  measures the CPU time of thread %" PRId32 "%s", t->clock_tid,
				t->pending ? "" : "\n");
		if (t->pending)
			fprintf(out, "  pending expiry (signal queued, si_overrun %" PRId32 ")\n", t->pending_overrun);
	}
}
