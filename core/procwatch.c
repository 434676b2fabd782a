// SPDX-License-Identifier: MIT
/*
 * Watching a process for exits and exec while it is dumped, with the proc
 * connector: a NETLINK_CONNECTOR socket in multicast group CN_IDX_PROC that
 * has sent PROC_CN_MCAST_LISTEN receives one struct proc_event per fork,
 * exec, exit... of every task on the system (uapi/linux/connector.h
 * struct cn_msg, uapi/linux/cn_proc.h struct proc_event; kernel
 * drivers/connector/cn_proc.c).  Joining the group needs CAP_NET_ADMIN, and
 * the kernel only sends events to listeners in the initial user and pid
 * namespaces.  Pids in events are as the initial pid namespace sees them.
 *
 * The socket is libnl-3's (nl_socket_alloc, nl_connect, nl_send_simple,
 * nl_recvmsgs with an NL_CB_MSG_IN callback: connector messages are
 * NLMSG_DONE, which libnl would otherwise take as the end of a dump).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "core/procwatch.h"
#include "core/util.h"

#define WATCH_RCVBUF	(4 << 20)	/* bytes: a burst of exits elsewhere must not overflow it */

struct ptimer_procwatch {
	struct nl_sock *sk;
	pid_t pid;			/* watched process (tgid) */
	struct ptimer_proc_event *ev;	/* its events, in arrival order */
	size_t n_ev, cap_ev;
	bool lost;			/* the kernel dropped events (ENOBUFS) */
	uint32_t tag;			/* cn_msg.ack of our LISTEN: the kernel's ack has tag + 1 */
	bool acked;
	int ack_err;			/* event_data.ack.err of that ack */
	int listens;			/* LISTENs sent: kernels before 6.6 count each */
};

#define ACK_WAIT_MS	1000	/* the ack comes at once, or never (other namespace) */
#define LISTEN_TRIES	3	/* an overflowing socket can drop the ack: ask again */

/* PROC_CN_MCAST_LISTEN or _IGNORE to the connector: a struct cn_msg
 * followed by the op (uapi/linux/cn_proc.h enum proc_cn_mcast_op). */
static int send_op(struct nl_sock *sk, enum proc_cn_mcast_op op, uint32_t tag)
{
	uint32_t buf[(sizeof(struct cn_msg) + sizeof(op) + 3) / 4];
	struct cn_msg cn;

	memset(&cn, 0, sizeof(cn));
	cn.id.idx = CN_IDX_PROC;
	cn.id.val = CN_VAL_PROC;
	cn.ack = tag;
	cn.len = sizeof(op);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &cn, sizeof(cn));
	memcpy((char *)buf + sizeof(cn), &op, sizeof(op));
	return nl_send_simple(sk, NLMSG_DONE, 0, buf, sizeof(cn) + sizeof(op));
}

static void record(struct ptimer_procwatch *w, uint32_t what, pid_t tid, uint64_t ns)
{
	if (w->n_ev == w->cap_ev) {
		size_t cap = w->cap_ev ? 2 * w->cap_ev : 64;
		struct ptimer_proc_event *ev = realloc(w->ev, cap * sizeof(*ev));

		if (!ev) {
			w->lost = true;	/* cannot keep it: as if the kernel dropped it */
			return;
		}
		w->ev = ev;
		w->cap_ev = cap;
	}
	w->ev[w->n_ev].what = what;
	w->ev[w->n_ev].tid = tid;
	w->ev[w->n_ev].ns = ns;
	w->n_ev++;
}

/* NL_CB_MSG_IN: every message, before libnl looks at its type. */
static int on_msg(struct nl_msg *msg, void *arg)
{
	struct ptimer_procwatch *w = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct proc_event pe;
	struct cn_msg cn;
	size_t need = offsetof(struct proc_event, event_data) + sizeof(pe.event_data.exit);

	/* cn_msg.data is only 4-byte aligned, struct proc_event wants 8: copy */
	if (nlmsg_datalen(h) < (int)sizeof(cn))
		return NL_SKIP;
	memcpy(&cn, nlmsg_data(h), sizeof(cn));
	if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC || cn.len < need ||
	    (size_t)nlmsg_datalen(h) < sizeof(cn) + need)
		return NL_SKIP;
	memset(&pe, 0, sizeof(pe));
	memcpy(&pe, (const char *)nlmsg_data(h) + sizeof(cn), cn.len < sizeof(pe) ? cn.len : sizeof(pe));
	/* cn_proc_ack(): PROC_EVENT_NONE, our ack + 1, the error in ack.err
	 * (seq is the kernel's event counter, not ours) */
	if (pe.what == PROC_EVENT_NONE && cn.ack == w->tag + 1) {
		w->acked = true;
		w->ack_err = (int)pe.event_data.ack.err;
		return NL_SKIP;
	}
	if (pe.what == PROC_EVENT_EXEC && pe.event_data.exec.process_tgid == w->pid)
		record(w, PTIMER_PROC_EXEC, pe.event_data.exec.process_pid, pe.timestamp_ns);
	else if (pe.what == PROC_EVENT_EXIT && pe.event_data.exit.process_tgid == w->pid)
		record(w, PTIMER_PROC_EXIT, pe.event_data.exit.process_pid, pe.timestamp_ns);
	return NL_SKIP;
}

int ptimer_procwatch_start(struct ptimer_procwatch **out, pid_t pid, struct ptimer_err *err)
{
	struct ptimer_procwatch *w = calloc(1, sizeof(*w));
	int r;

	*out = NULL;
	if (!w)
		return ptimer_errf(err, ENOMEM, "out of memory");
	w->pid = pid;
	w->sk = nl_socket_alloc();
	if (!w->sk) {
		free(w);
		return ptimer_errf(err, ENOMEM, "out of memory for a netlink socket");
	}
	nl_socket_disable_seq_check(w->sk);
	nl_socket_disable_auto_ack(w->sk);
	nl_socket_modify_cb(w->sk, NL_CB_MSG_IN, NL_CB_CUSTOM, on_msg, w);
	/* bind with group CN_IDX_PROC (bit CN_IDX_PROC - 1): CAP_NET_ADMIN */
	nl_join_groups(w->sk, 1 << (CN_IDX_PROC - 1));
	r = nl_connect(w->sk, NETLINK_CONNECTOR);
	if (r < 0) {
		ptimer_errf(err, EPERM, "cannot watch process %d for exits and exec: joining the proc connector "
			    "(NETLINK_CONNECTOR, CN_IDX_PROC) failed: %s; it needs CAP_NET_ADMIN and a kernel "
			    "with CONFIG_PROC_EVENTS", pid, nl_geterror(r));
		goto fail;
	}
	/*
	 * SO_RCVBUF is capped at net.core.rmem_max (~200 KiB): a busy system
	 * overflows that during one dump.  SO_RCVBUFFORCE ignores the cap and
	 * needs CAP_NET_ADMIN, which joining the group needed already.
	 */
	{
		int sz = WATCH_RCVBUF;

		if (setsockopt(nl_socket_get_fd(w->sk), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
			nl_socket_set_buffer_size(w->sk, WATCH_RCVBUF, 0);
	}
	r = nl_socket_set_nonblocking(w->sk);
	if (r < 0) {
		ptimer_errf(err, EIO, "cannot watch process %d: non-blocking netlink socket: %s", pid,
			    nl_geterror(r));
		goto fail;
	}
	w->tag = ((uint32_t)getpid() ^ (uint32_t)ptimer_now_ns()) & 0x3fffffff;
	/*
	 * The kernel answers LISTEN with an ack carrying its error (EPERM
	 * without CAP_NET_ADMIN); from another pid namespace, not at all.  The
	 * ack is a multicast like the events: on a busy system the socket can
	 * overflow (ENOBUFS) and drop it, so LISTEN is sent again, with a tag
	 * of its own, LISTEN_TRIES times.
	 */
	for (int try = 0; try < LISTEN_TRIES && !w->acked; try++) {
		w->tag += 4;
		r = send_op(w->sk, PROC_CN_MCAST_LISTEN, w->tag);
		if (r >= 0)
			w->listens++;
		if (r < 0) {
			ptimer_errf(err, EIO, "cannot watch process %d for exits and exec: PROC_CN_MCAST_LISTEN: %s",
				    pid, nl_geterror(r));
			goto fail;
		}
		for (uint64_t end = ptimer_now_ns() + ACK_WAIT_MS * 1000000ull; !w->acked && ptimer_now_ns() < end;) {
			struct pollfd pfd = { .fd = nl_socket_get_fd(w->sk), .events = POLLIN };

			if (poll(&pfd, 1, 50) > 0)
				while (!w->acked && nl_recvmsgs_default(w->sk) != -NLE_AGAIN)
					;
		}
		if (!w->lost)
			break;	/* nothing dropped: the ack will not come */
		w->lost = false;
	}
	/* the watch starts here: what came before it (and was lost) does not count */
	w->lost = false;
	w->n_ev = 0;
	if (!w->acked) {
		ptimer_errf(err, ETIMEDOUT, "cannot watch process %d for exits and exec: the proc connector did "
			    "not answer PROC_CN_MCAST_LISTEN (ptimer outside the initial pid or user namespace?)",
			    pid);
		goto fail;
	}
	if (w->ack_err) {
		ptimer_errf(err, w->ack_err, "cannot watch process %d for exits and exec: the proc connector "
			    "refused PROC_CN_MCAST_LISTEN: %s (it needs CAP_NET_ADMIN)", pid, strerror(w->ack_err));
		goto fail;
	}
	*out = w;
	return 0;
fail:
	for (int i = 0; i < w->listens; i++)	/* a LISTEN taken whose ack was lost */
		send_op(w->sk, PROC_CN_MCAST_IGNORE, w->tag + 2);
	nl_socket_free(w->sk);
	free(w->ev);
	free(w);
	return -EIO;
}

int ptimer_procwatch_poll(struct ptimer_procwatch *w, const struct ptimer_proc_event **ev, size_t *n)
{
	for (;;) {
		int r = nl_recvmsgs_default(w->sk);

		if (r == -NLE_AGAIN)
			break;
		if (r == -NLE_NOMEM) {	/* ENOBUFS: the socket overflowed */
			w->lost = true;
			continue;
		}
		if (r < 0) {
			w->lost = true;
			break;
		}
	}
	*ev = w->ev;
	*n = w->n_ev;
	return w->lost ? -ENOBUFS : 0;
}

/*
 * Only events stamped inside the window count (proc_event.timestamp_ns is
 * ktime_get_ns(), CLOCK_MONOTONIC like ptimer_now_ns(); drivers/connector/
 * cn_proc.c): what a process does after it is released cannot make the
 * image taken while it was stopped stale.
 */
static bool in_window(const struct ptimer_proc_event *ev, uint64_t from_ns, uint64_t to_ns)
{
	return ev->ns >= from_ns && (!to_ns || ev->ns <= to_ns);
}

int ptimer_procwatch_check(struct ptimer_procwatch *w, const pid_t *tids, int n_tids,
			   const struct ptimer_procwatch_window *win, struct ptimer_err *err)
{
	static const struct ptimer_procwatch_window whole;
	const struct ptimer_proc_event *ev;
	size_t n;
	int r = ptimer_procwatch_poll(w, &ev, &n);

	if (!win)
		win = &whole;
	for (size_t i = 0; i < n; i++)
		if (ev[i].what == PTIMER_PROC_EXEC && in_window(&ev[i], 0, win->until_ns))
			return ptimer_errf(err, ESTALE, "process %d called exec (thread %d) while it was being dumped: "
					   "its timers are gone with the old program; nothing written, dump again",
					   w->pid, ev[i].tid);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < n_tids; j++)
			if (ev[i].what == PTIMER_PROC_EXIT && ev[i].tid == tids[j] &&
			    in_window(&ev[i], win->exit_from_ns, win->until_ns))
				return ptimer_errf(err, ESTALE, "process %d: thread %d exited while the process was "
						   "being dumped: the image would not match it (timers aimed at that "
						   "thread); nothing written, dump again", w->pid, tids[j]);
	if (r)
		return ptimer_errf(err, ENOBUFS, "process %d: the kernel dropped process events (proc connector "
				   "socket overflow) while it was being dumped, so an exit or exec may have gone "
				   "unseen; nothing written, dump again", w->pid);
	return 0;
}

void ptimer_procwatch_stop(struct ptimer_procwatch *w)
{
	if (!w)
		return;
	/* one IGNORE per LISTEN: kernels that keep the state per socket
	 * (drivers/connector/cn_proc.c, 6.6+) count only the first */
	for (int i = 0; w->acked && !w->ack_err && i < w->listens; i++)
		send_op(w->sk, PROC_CN_MCAST_IGNORE, w->tag + 2);
	nl_socket_free(w->sk);
	free(w->ev);
	free(w);
}
