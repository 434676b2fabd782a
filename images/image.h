/* SPDX-License-Identifier: MIT */
/*
 * ptimer image files: DIR/ptimers-<pid>.img, pid as seen inside the dumped
 * process's own pid namespace.
 *
 * Framing (CRIU style, see criu/include/magic.h and images/): a 32-bit
 * little-endian magic PTIMER_IMG_MAGIC, then entries, each a 32-bit
 * little-endian length followed by that many bytes of protobuf:
 *   one PtimerHead (proto/ptimer.proto), then head.n_timers PtimerEntry.
 * Fields added later are optional protobuf fields; readers ignore what they
 * do not know.
 */
#ifndef PTIMER_IMAGES_IMAGE_H
#define PTIMER_IMAGES_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/err.h"
#include "lib/timer.h"

#define PTIMER_IMG_MAGIC	0x54494d52u	/* "RMIT" on disk, LE */
#define PTIMER_IMG_VERSION	1u
#define PTIMER_IMG_MAX_ENTRY	4096u		/* bytes, one protobuf entry */
#define PTIMER_IMG_MAX_TIMERS	(1u << 22)	/* far above RLIMIT_SIGPENDING */
#define PTIMER_IMG_MAX_HEAD	(4u << 20)	/* bytes, the head entry (threads[]) */
#define PTIMER_IMG_MAX_THREADS	(1u << 16)	/* ~40 bytes each in the head */

/*
 * rseq time-slice extension of one thread, as prctl(PR_RSEQ_SLICE_EXTENSION,
 * PR_RSEQ_SLICE_EXTENSION_GET) answered in it (uapi/linux/prctl.h, Linux 7.0+).
 */
enum ptimer_slice_ext {
	PTIMER_SLICE_EXT_UNAVAILABLE = 0,	/* EINVAL, ENOTSUPP (524), ENXIO, no rseq */
	PTIMER_SLICE_EXT_DISABLED = 1,		/* GET returned 0 */
	PTIMER_SLICE_EXT_ENABLED = 2,		/* GET returned PR_RSEQ_SLICE_EXT_ENABLE */
};

/* struct rseq (uapi/linux/rseq.h): the part ptimer reads and edits. */
#define PTIMER_RSEQ_MIN_SIZE		20u	/* cpu_id_start..rseq_cs..flags */
#define PTIMER_RSEQ_SLICE_CTRL_OFF	28u	/* u32 slice_ctrl */
#define PTIMER_RSEQ_SLICE_CTRL_END	32u	/* registrations this long cover it */
#define PTIMER_RSEQ_MAX_SIZE		4096u	/* sanity bound for images */

/* One thread's rseq state (PtimerThread in proto/ptimer.proto). */
struct ptimer_thread {
	int32_t tid;			/* own-namespace tid, > 0 */
	uint32_t rseq_abi_size;		/* 0: no rseq registration */
	uint64_t rseq_abi_pointer;	/* struct rseq address in the process */
	uint32_t rseq_signature;	/* rseq(2) sig */
	uint32_t slice_ext;		/* enum ptimer_slice_ext */
	uint32_t slice_ctrl;		/* struct rseq.slice_ctrl; 0 when size < 32 */
	uint32_t pad;
};

/*
 * struct ptimer_image.criu_mode: who wrote the image.  PTIMER_IMG_STANDALONE:
 * ptimer dump; PTIMER_IMG_CRIU_FIRST..PTIMER_IMG_CRIU_LAST: the CRIU plugin,
 * the value being its criu-mode setting then (enum ptimer_criu_mode,
 * plugin/conf.h: 1 takeover, 2 native, 3 auto).
 */
#define PTIMER_IMG_STANDALONE	0u
#define PTIMER_IMG_CRIU_FIRST	1u
#define PTIMER_IMG_CRIU_LAST	3u

struct ptimer_image {
	uint32_t version;	/* PTIMER_IMG_VERSION of the writer */
	int32_t pid;		/* the process, in its own pid namespace */
	uint32_t criu_mode;	/* PTIMER_IMG_STANDALONE, or the plugin's mode */
	uint32_t state_in_core;	/* 1: the timers' it_value, it_interval and
				   overrun are criu's, in core-<pid>.img
				   (written by the CRIU plugin); 0: here */
	uint32_t n_timers;
	struct ptimer_timer *timers;	/* malloc'ed, n_timers */
	/* read from the head (written from timers[]): timers with pending set,
	   on a thread CPU clock with clock_tid set, SIGEV_THREAD_ID timers
	   aimed at the leader (notify_tid == pid).  counts_known 0 (and the
	   counts 0) when ptimer_image_read_head read a head that lacks one of
	   them (an older image); ptimer_image_read then counts the timers */
	uint32_t n_pending, n_clock_tid, counts_known;
	uint32_t n_leader_aimed;
	/* 1: no timer listed here (n_timers 0): criu's core-<pid>.img holds
	   every one whole, and none needs the dump's look (the CRIU plugin's
	   image of a task with one thread, which never had another) */
	uint32_t timers_in_core;
	uint32_t n_threads;		/* 0: image without per-thread state */
	struct ptimer_thread *threads;	/* malloc'ed, n_threads */
};

/*
 * ptimer_image_path - "DIR/ptimers-PID.img" into buf (len bytes, NUL
 * included).  Returns 0, or -ENAMETOOLONG when it does not fit.
 */
int ptimer_image_path(char *buf, size_t len, const char *dir, int pid);

/*
 * ptimer_image_validate - check every field of an in-memory image as restore
 * needs it: pid > 0; timer_id 0..INT_MAX and unique; clock_id one the kernel
 * can have a timer on (CLOCK_REALTIME 0, MONOTONIC 1, PROCESS/THREAD_CPUTIME
 * 2/3, BOOTTIME 7, REALTIME/BOOTTIME_ALARM 8/9, TAI 11, or a CPU clock:
 * negative with (id & 3) != 3, include/linux/posix-timers.h CPUCLOCK_*);
 * sigev_notify one of SIGNAL, NONE, THREAD, SIGNAL|THREAD_ID
 * (kernel/time/posix-timers.c good_sigevent()); signo 1..64 unless NONE
 * (then any: the kernel keeps it verbatim); notify_tid > 0 for THREAD_ID;
 * it_value/it_interval sec >= 0, nsec in 0..999,999,999 (timespec64_valid())
 * and at most KTIME_MAX ns; no it_interval when it_value is 0 (the kernel
 * keeps none then); overrun >= 0; n_timers <= PTIMER_IMG_MAX_TIMERS;
 * threads: n_threads <= PTIMER_IMG_MAX_THREADS, tid > 0 and unique,
 * rseq_abi_size 0 (then pointer, signature and slice_ctrl 0) or
 * PTIMER_RSEQ_MIN_SIZE..PTIMER_RSEQ_MAX_SIZE, slice_ext a known value and
 * not ENABLED without a registration, slice_ctrl 0 unless the size covers it.
 * @what names the source in messages (a path, "JSON FILE").
 * Returns 0, or -EINVAL with err->msg set.
 */
int ptimer_image_validate(const struct ptimer_image *img, const char *what, struct ptimer_err *err);

/*
 * ptimer_image_write - validate, then write img to path atomically: a
 * temporary file "DIR/.ptimers-PID.img.*" (ptimer_file_create_temp, mode
 * 0644 less the umask, as criu creates its own images) in the same
 * directory, fsync, rename(2) over path, then a best-effort fsync of
 * the directory.  Writes version PTIMER_IMG_VERSION whatever img->version.
 * Nothing is left behind on failure (the temporary file is unlinked, an
 * existing image at path is untouched).  Returns 0, -EINVAL (validation),
 * or -errno of open/write/fsync/close/rename (-ENOENT, -EACCES,
 * -ENOSPC, -EISDIR...), -ENOMEM; err->msg names path, the errno text and
 * what to do.
 */
int ptimer_image_write(const char *path, const struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_image_write_flags - ptimer_image_write with flags:
 * PTIMER_IMG_NOSYNC leaves out both fsyncs (file and directory).  The
 * plugin writes so inside criu's dump: criu does not fsync its own images
 * one by one (there is no fsync in criu/), whoever needs the dump durable
 * syncs the directory as a whole.  The rename stays: a crash leaves the
 * old image or the new one, never half of one.  Returns as
 * ptimer_image_write.
 */
#define PTIMER_IMG_NOSYNC	0x1u
int ptimer_image_write_flags(const char *path, const struct ptimer_image *img, unsigned int flags,
			     struct ptimer_err *err);

/*
 * ptimer_image_read - read and fully validate path into img (caller frees
 * with ptimer_image_free; on failure img is empty and need not be freed).
 * Refuses a bad magic, a truncated or oversized (> PTIMER_IMG_MAX_ENTRY)
 * entry, an entry protobuf-c cannot unpack, trailing bytes, a count that
 * does not match head.n_timers, version 0, and everything
 * ptimer_image_validate refuses.  Any version >= 1 is read: later versions
 * only add optional fields, which protobuf-c skips.  Returns 0, -EINVAL
 * (content), -errno of open/read (-ENOENT, -EACCES...), -EISDIR (a
 * directory), -EFBIG, -ENOMEM; err->msg set.
 */
int ptimer_image_read(const char *path, struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_image_read_head - the head of path alone: pid, criu_mode,
 * state_in_core, threads, the counts (n_pending, n_clock_tid,
 * counts_known), and in *n_timers how many timers follow, their framing
 * checked but none unpacked: img->n_timers is 0 and img->timers NULL.
 * For a reader that needs no timer when the counts say so (the CRIU
 * plugin where criu restores them: 20,000 entries unpack in about 15 ms).
 * Returns as ptimer_image_read.
 */
int ptimer_image_read_head(const char *path, struct ptimer_image *img, uint32_t *n_timers, struct ptimer_err *err);

/*
 * ptimer_image_file - the bytes of image file path, as ptimer_image_read
 * reads them (*buf malloc'd, *size bytes).  ptimer_image_parse - those
 * bytes (path names them in errors) parsed and checked as
 * ptimer_image_read does, or as ptimer_image_read_head does where
 * n_timers is not NULL: a reader that wants the head first and maybe the
 * rest later reads the file once.  Both return as ptimer_image_read.
 */
int ptimer_image_file(const char *path, char **buf, size_t *size, struct ptimer_err *err);
int ptimer_image_parse(const char *path, const void *buf, size_t size, struct ptimer_image *img,
		       uint32_t *n_timers, struct ptimer_err *err);

/*
 * ptimer_image_find - the image in dir: the one for pid when pid > 0 (it
 * must exist as a regular file), else the only ptimers-<pid>.img there
 * (digits without a leading zero; temporary files and other names are
 * ignored).  Writes its path into buf (len bytes).  Returns 0, -ENOENT
 * (none), -EEXIST (several and no pid given), -ENAMETOOLONG, or -errno of
 * opendir; err->msg set.
 */
int ptimer_image_find(const char *dir, int pid, char *buf, size_t len, struct ptimer_err *err);

/* ptimer_timer_cmp_id - qsort(3)/bsearch(3) order of struct ptimer_timer by
 * timer_id, ascending. */
int ptimer_timer_cmp_id(const void *a, const void *b);

/* ptimer_image_free - free img->timers, img->threads and zero *img; NULL or
 * empty is fine. */
void ptimer_image_free(struct ptimer_image *img);

/*
 * ptimer_image_to_json - write img as pretty JSON (json-c) to out:
 * {"version":V,"pid":N,"timers":[{"id","clock_id","sigev_notify","signo",
 * "sival","notify_tid","it_value":{"sec","nsec"},"it_interval":{...},
 * "overrun"}], "threads":[{"tid","rseq":{"abi_pointer","abi_size",
 * "signature"},"slice_ext":"enabled"|"disabled"|"unavailable","slice_ctrl"}]},
 * integers but slice_ext; sival and abi_pointer unsigned 64-bit, sec/nsec
 * in s/ns.
 * Returns 0, -ENOMEM, or -errno of the write (out is flushed); err->msg set.
 */
int ptimer_image_to_json(const struct ptimer_image *img, FILE *out, struct ptimer_err *err);

/*
 * ptimer_image_from_json - the inverse: parse the JSON file at path, which
 * must have exactly those keys ("version" optional, default
 * PTIMER_IMG_VERSION; "threads" optional, default none) with integer values of the field's C type (unknown,
 * missing and repeated keys refused, as are integers beyond 64 bits and
 * content after the object), and validate as ptimer_image_read does.
 * Messages name path, the timer index and the key.  Caller frees img with
 * ptimer_image_free.  Returns 0, -EINVAL, -errno of open/read, -ENOMEM.
 */
int ptimer_image_from_json(const char *path, struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_image_show - human-readable table of img to out: a header line
 * "pid P: N timers (image version V)", a table of the threads' rseq state
 * when the image has threads, then per timer id, clock name,
 * notification ("signal 14 -> pid 123", "thread_id signal 32 -> tid 124",
 * "none", "none (signo 65)"), sival in hex, it_value and it_interval as sec.nsec, overrun.
 */
void ptimer_image_show(const struct ptimer_image *img, FILE *out);

/*
 * ptimer_clock_name - "CLOCK_MONOTONIC", "CPU(pid 12, process, sched)",
 * "CPU(self, thread, sched)", "CPU(tid 7, thread, virt)", "CLOCKFD(fd 3)",
 * "clock 12" into buf (len bytes, truncated to fit); returns buf.  CPU
 * clocks decoded as include/linux/posix-timers.h builds them: pid/tid
 * ~(id >> 3), 0 = self; bit 2 per-thread; low bits prof/virt/sched.
 */
const char *ptimer_clock_name(int32_t clock_id, char *buf, size_t len);

/* ptimer_notify_name - "signal", "none", "thread", "thread_id", else "unknown". */
const char *ptimer_notify_name(int32_t sigev_notify);

/* ptimer_slice_ext_name - "unavailable", "disabled", "enabled" (enum
 * ptimer_slice_ext), else "unknown". */
const char *ptimer_slice_ext_name(uint32_t slice_ext);

#endif
