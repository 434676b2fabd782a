// SPDX-License-Identifier: MIT
/*
 * ptimer images as JSON (json-c 0.14+ for 64-bit unsigned integers), for
 * people and scripts: `ptimer show --json`, hand-written test images.
 *
 * The reader is strict because a JSON image is restored like a binary one:
 * every key known and present, every value an integer of the field's C type,
 * then ptimer_image_validate().  Keys are described by tables (top_keys[],
 * timer_keys[], ts_keys[], rseq_keys[]); the top-level "threads" array
 * (per-thread rseq state, optional) is one row and one parse function.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "images/image.h"
#include "lib/file.h"

#define JSON_MAX_FILE	(1u << 31)	/* bytes; ~8x a PTIMER_IMG_MAX_TIMERS image */
#define JSON_FIX	"fix the JSON file"

/* ---- to JSON ------------------------------------------------------------- */

static json_object *ts_to_json(const struct ptimer_ts *ts)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "sec", json_object_new_int64(ts->sec));
	json_object_object_add(o, "nsec", json_object_new_int64(ts->nsec));
	return o;
}

static json_object *timer_to_json(const struct ptimer_timer *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int(t->timer_id));
	json_object_object_add(o, "clock_id", json_object_new_int(t->clock_id));
	json_object_object_add(o, "sigev_notify", json_object_new_int(t->sigev_notify));
	json_object_object_add(o, "signo", json_object_new_int(t->signo));
	json_object_object_add(o, "sival", json_object_new_uint64(t->sival));
	json_object_object_add(o, "notify_tid", json_object_new_int(t->notify_tid));
	json_object_object_add(o, "it_value", ts_to_json(&t->it_value));
	json_object_object_add(o, "it_interval", ts_to_json(&t->it_interval));
	json_object_object_add(o, "overrun", json_object_new_int(t->overrun));
	if (t->clock_tid)
		json_object_object_add(o, "clock_tid", json_object_new_int(t->clock_tid));
	if (t->pending) {
		json_object_object_add(o, "pending", json_object_new_int(t->pending));
		json_object_object_add(o, "pending_overrun", json_object_new_int(t->pending_overrun));
	}
	return o;
}

static json_object *thread_to_json(const struct ptimer_thread *t)
{
	json_object *o = json_object_new_object(), *r = json_object_new_object();

	json_object_object_add(o, "tid", json_object_new_int(t->tid));
	json_object_object_add(r, "abi_pointer", json_object_new_uint64(t->rseq_abi_pointer));
	json_object_object_add(r, "abi_size", json_object_new_int64(t->rseq_abi_size));
	json_object_object_add(r, "signature", json_object_new_int64(t->rseq_signature));
	json_object_object_add(o, "rseq", r);
	json_object_object_add(o, "slice_ext", json_object_new_string(ptimer_slice_ext_name(t->slice_ext)));
	json_object_object_add(o, "slice_ctrl", json_object_new_int64(t->slice_ctrl));
	return o;
}

int ptimer_image_to_json(const struct ptimer_image *img, FILE *out, struct ptimer_err *err)
{
	json_object *root = json_object_new_object();
	json_object *timers = json_object_new_array_ext(img->n_timers);
	json_object *threads = json_object_new_array_ext(img->n_threads ? (int)img->n_threads : 1);
	const char *s;
	uint32_t i;
	int ret = 0;

	if (!root || !timers || !threads) {
		json_object_put(root);
		json_object_put(timers);
		json_object_put(threads);
		return ptimer_errf(err, ENOMEM, "cannot build JSON for pid %" PRId32 ": out of memory; %s",
				   img->pid, ptimer_errno_hint(ENOMEM));
	}
	json_object_object_add(root, "version",
			       json_object_new_int64(img->version ? img->version : PTIMER_IMG_VERSION));
	json_object_object_add(root, "pid", json_object_new_int(img->pid));
	/* the CRIU plugin's: who restores the timers, where their state is */
	if (img->criu_mode != PTIMER_IMG_STANDALONE)
		json_object_object_add(root, "criu_mode", json_object_new_int64(img->criu_mode));
	if (img->state_in_core)
		json_object_object_add(root, "state_in_core", json_object_new_int64(img->state_in_core));
	if (img->timers_in_core)
		json_object_object_add(root, "timers_in_core", json_object_new_int64(img->timers_in_core));
	for (i = 0; i < img->n_timers; i++)
		json_object_array_add(timers, timer_to_json(&img->timers[i]));
	json_object_object_add(root, "timers", timers);
	for (i = 0; i < img->n_threads; i++)
		json_object_array_add(threads, thread_to_json(&img->threads[i]));
	json_object_object_add(root, "threads", threads);

	errno = 0;
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s) {
		ret = ptimer_errf(err, ENOMEM, "cannot format JSON for pid %" PRId32 ": out of memory; %s",
				  img->pid, ptimer_errno_hint(ENOMEM));
	} else if (fputs(s, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF) {
		int e = errno ? errno : EIO;

		ret = ptimer_errf(err, e, "cannot write JSON for pid %" PRId32 ": %s; %s",
				  img->pid, strerror(e), ptimer_errno_hint(e));
	}
	json_object_put(root);
	return ret;
}

/* ---- from JSON: reading and lexical checks --------------------------------- */

struct jctx {
	const char *path;
	const char *buf;	/* whole file, NUL-terminated */
	size_t len;
	struct ptimer_err *err;
};

static unsigned line_of(const struct jctx *c, size_t off)
{
	unsigned line = 1;
	size_t i;

	for (i = 0; i < off && i < c->len; i++)
		line += c->buf[i] == '\n';
	return line;
}

/*
 * What json-c's parser does not report (checked on the raw text before it):
 * it clamps integers beyond 64 bits to INT64_MIN/UINT64_MAX silently, and
 * it keeps the last of two equal keys in one object.  Both would turn a
 * typo into a different timer, so both are refused here with the line.
 * Keys are compared as written; keys with escapes are refused (none of
 * ours needs one).  Only the first LEX_KEYS keys of an object are kept:
 * an object with more distinct keys has unknown ones and is refused later.
 */
#define LEX_DEPTH	64
#define LEX_KEYS	64

struct lex_frame {
	bool object;		/* '{' else '[' */
	bool expect_key;
	unsigned nkeys;
	size_t key_off[LEX_KEYS], key_len[LEX_KEYS];
};

static int check_int_literal(const struct jctx *c, size_t start, size_t end)
{
	char tmp[32];
	size_t n = end - start;
	bool bad = n >= sizeof(tmp);

	if (!bad) {
		memcpy(tmp, c->buf + start, n);
		tmp[n] = '\0';
		errno = 0;
		if (tmp[0] == '-')
			(void)strtoll(tmp, NULL, 10);
		else
			(void)strtoull(tmp, NULL, 10);
		bad = errno == ERANGE;
	}
	if (bad) {
		return ptimer_errf(c->err, EINVAL, "%s: line %u: integer %.*s%s does not fit in 64 bits; " JSON_FIX,
				   c->path, line_of(c, start), n > 40 ? 40 : (int)n, c->buf + start,
				   n > 40 ? "..." : "");
	}
	return 0;
}

static int check_key(const struct jctx *c, struct lex_frame *f, size_t off, size_t len)
{
	unsigned i;

	if (memchr(c->buf + off, '\\', len)) {
		return ptimer_errf(c->err, EINVAL, "%s: line %u: key \"%.*s\" contains an escape; write keys "
				   "plainly; " JSON_FIX, c->path, line_of(c, off), (int)len, c->buf + off);
	}
	for (i = 0; i < f->nkeys; i++) {
		if (f->key_len[i] == len && !memcmp(c->buf + f->key_off[i], c->buf + off, len)) {
			return ptimer_errf(c->err, EINVAL, "%s: line %u: key \"%.*s\" appears twice in one object "
					   "(first on line %u); " JSON_FIX, c->path, line_of(c, off),
					   (int)len, c->buf + off, line_of(c, f->key_off[i]));
		}
	}
	if (f->nkeys < LEX_KEYS) {
		f->key_off[f->nkeys] = off;
		f->key_len[f->nkeys] = len;
		f->nkeys++;
	}
	return 0;
}

/* Syntax errors are left to json-c, which reports them with an offset. */
static int lex_check(const struct jctx *c)
{
	struct lex_frame *st = malloc(sizeof(*st) * LEX_DEPTH);
	struct lex_frame *top = NULL;
	int depth = 0, ret = 0;
	size_t i = 0;

	if (!st) {
		return ptimer_errf(c->err, ENOMEM, "%s: out of memory; %s", c->path, ptimer_errno_hint(ENOMEM));
	}
	while (i < c->len && !ret) {
		char ch = c->buf[i];

		if (ch == '"') {
			size_t s = ++i;

			while (i < c->len && c->buf[i] != '"')
				i += c->buf[i] == '\\' ? 2 : 1;
			if (i >= c->len)
				break;
			if (top && top->object && top->expect_key) {
				ret = check_key(c, top, s, i - s);
				top->expect_key = false;
			}
			i++;
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			size_t s = i;
			bool integer = true;

			i++;
			while (i < c->len && strchr("0123456789.eE+-", c->buf[i])) {
				if (!(c->buf[i] >= '0' && c->buf[i] <= '9'))
					integer = false;
				i++;
			}
			if (integer)
				ret = check_int_literal(c, s, i);
		} else if (ch == '{' || ch == '[') {
			if (depth == LEX_DEPTH)
				break;		/* json-c refuses this depth itself */
			top = &st[depth++];
			top->object = ch == '{';
			top->expect_key = top->object;
			top->nkeys = 0;
			i++;
		} else if (ch == '}' || ch == ']') {
			if (depth)
				depth--;
			top = depth ? &st[depth - 1] : NULL;
			i++;
		} else {
			if (ch == ',' && top && top->object)
				top->expect_key = true;
			i++;
		}
	}
	free(st);
	return ret;
}

/* ---- from JSON: values ------------------------------------------------------ */

/* Where a value is, for messages: "key \"pid\"", "timer 3: key \"it_value.nsec\"". */
struct jwhere {
	long timer;		/* index in "timers" (or "threads"), or -1 */
	const char *parent;	/* "it_value" for the keys inside it, or NULL */
	const char *item;	/* "thread" for "threads", NULL: "timer" */
};

static void where_str(char *buf, size_t len, const struct jwhere *w, const char *key)
{
	char t[32] = "";

	if (w->timer >= 0)
		snprintf(t, sizeof(t), "%s %ld: ", w->item ? w->item : "timer", w->timer);
	snprintf(buf, len, "%skey \"%s%s%s\"", t, w->parent ? w->parent : "",
		 w->parent ? "." : "", key);
}

static int value_error(const struct jctx *c, const struct jwhere *w, const char *key,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int value_error(const struct jctx *c, const struct jwhere *w, const char *key,
		       const char *fmt, ...)
{
	char where[128], what[160];
	va_list ap;

	where_str(where, sizeof(where), w, key);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ptimer_errf(c->err, EINVAL, "%s: %s: %s; " JSON_FIX, c->path, where, what);
}

static int get_integer(const struct jctx *c, const struct jwhere *w, const char *key,
		       json_object *v, int64_t min, int64_t max, int64_t *out)
{
	int64_t i;

	if (!json_object_is_type(v, json_type_int))
		return value_error(c, w, key, "expected an integer, got %s",
				   json_type_to_name(json_object_get_type(v)));
	i = json_object_get_int64(v);
	/* json-c holds 2^63.. as unsigned and returns INT64_MAX for them here. */
	if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return value_error(c, w, key, "%" PRIu64 " out of range %" PRId64 "..%" PRId64,
				   json_object_get_uint64(v), min, max);
	if (i < min || i > max)
		return value_error(c, w, key, "%" PRId64 " out of range %" PRId64 "..%" PRId64,
				   i, min, max);
	*out = i;
	return 0;
}

static int get_u64(const struct jctx *c, const struct jwhere *w, const char *key,
		   json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int))
		return value_error(c, w, key, "expected an integer, got %s",
				   json_type_to_name(json_object_get_type(v)));
	/* Negative values come back as 0 from json_object_get_uint64(). */
	if (json_object_get_int64(v) < 0)
		return value_error(c, w, key, "%" PRId64 " out of range 0..%" PRIu64,
				   json_object_get_int64(v), UINT64_MAX);
	*out = json_object_get_uint64(v);
	return 0;
}

/* ---- from JSON: key tables ---------------------------------------------------- */

enum jkind {
	J_I32,		/* int32_t */
	J_I64,		/* int64_t */
	J_U64,		/* uint64_t, full range */
	J_TS,		/* struct ptimer_ts as {"sec","nsec"} */
};

struct jfield {
	const char *key;
	enum jkind kind;
	size_t off;	/* in the struct being filled */
	bool optional;	/* may be absent: then 0 */
};

static const struct jfield ts_keys[] = {
	{ "sec", J_I64, offsetof(struct ptimer_ts, sec), false },
	{ "nsec", J_I64, offsetof(struct ptimer_ts, nsec), false },
};

static const struct jfield timer_keys[] = {
	{ "id", J_I32, offsetof(struct ptimer_timer, timer_id), false },
	{ "clock_id", J_I32, offsetof(struct ptimer_timer, clock_id), false },
	{ "sigev_notify", J_I32, offsetof(struct ptimer_timer, sigev_notify), false },
	{ "signo", J_I32, offsetof(struct ptimer_timer, signo), false },
	{ "sival", J_U64, offsetof(struct ptimer_timer, sival), false },
	{ "notify_tid", J_I32, offsetof(struct ptimer_timer, notify_tid), false },
	{ "it_value", J_TS, offsetof(struct ptimer_timer, it_value), false },
	{ "it_interval", J_TS, offsetof(struct ptimer_timer, it_interval), false },
	{ "overrun", J_I32, offsetof(struct ptimer_timer, overrun), false },
	{ "pending", J_I32, offsetof(struct ptimer_timer, pending), true },
	{ "pending_overrun", J_I32, offsetof(struct ptimer_timer, pending_overrun), true },
	{ "clock_tid", J_I32, offsetof(struct ptimer_timer, clock_tid), true },
};

/*
 * Every key of obj must be in names[0..n) (stride bytes apart), and every
 * name with required set must be present.  req may be NULL: all required.
 */
static int check_keys(const struct jctx *c, const struct jwhere *w, json_object *obj,
		      const char *const *names, size_t stride, const bool *req, size_t n)
{
	size_t i;

	json_object_object_foreach(obj, key, val) {
		(void)val;
		for (i = 0; i < n; i++)
			if (!strcmp(key, *(const char *const *)((const char *)names + i * stride)))
				break;
		if (i == n)
			return value_error(c, w, key, "unknown key");
	}
	for (i = 0; i < n; i++) {
		const char *name = *(const char *const *)((const char *)names + i * stride);

		if ((!req || req[i]) && !json_object_object_get_ex(obj, name, NULL))
			return value_error(c, w, name, "missing");
	}
	return 0;
}

static int expect_object(const struct jctx *c, const struct jwhere *w, const char *key,
			 json_object *v)
{
	if (!json_object_is_type(v, json_type_object))
		return value_error(c, w, key, "expected an object, got %s",
				   json_type_to_name(json_object_get_type(v)));
	return 0;
}

/* Fill dst from obj according to fields[0..n): all keys required, no others. */
static int parse_fields(const struct jctx *c, const struct jwhere *w, json_object *obj,
			const struct jfield *fields, size_t n, void *dst)
{
	bool req[16];
	size_t i;
	int ret;

	for (i = 0; i < n && i < sizeof(req) / sizeof(req[0]); i++)
		req[i] = !fields[i].optional;
	ret = check_keys(c, w, obj, &fields[0].key, sizeof(fields[0]), req, n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		const struct jfield *f = &fields[i];
		char *p = (char *)dst + f->off;
		json_object *v;
		int64_t x;

		if (!json_object_object_get_ex(obj, f->key, &v))
			continue;	/* optional, absent: stays 0 */
		switch (f->kind) {
		case J_I32:
			ret = get_integer(c, w, f->key, v, INT32_MIN, INT32_MAX, &x);
			if (!ret)
				*(int32_t *)p = x;
			break;
		case J_I64:
			ret = get_integer(c, w, f->key, v, INT64_MIN, INT64_MAX, &x);
			if (!ret)
				*(int64_t *)p = x;
			break;
		case J_U64:
			ret = get_u64(c, w, f->key, v, (uint64_t *)p);
			break;
		case J_TS: {
			struct jwhere in = { .timer = w->timer, .parent = f->key };

			ret = expect_object(c, w, f->key, v);
			if (!ret)
				ret = parse_fields(c, &in, v, ts_keys,
						   sizeof(ts_keys) / sizeof(ts_keys[0]), p);
			break;
		}
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_version(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	int64_t x;
	int ret;

	ret = get_integer(c, &w, "version", v, 1, UINT32_MAX, &x);
	if (!ret)
		img->version = x;
	return ret;
}

static int parse_pid(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	int64_t x;
	int ret;

	ret = get_integer(c, &w, "pid", v, INT32_MIN, INT32_MAX, &x);
	if (!ret)
		img->pid = x;
	return ret;
}

static int parse_criu_mode(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	int64_t x;
	int ret;

	ret = get_integer(c, &w, "criu_mode", v, PTIMER_IMG_STANDALONE, PTIMER_IMG_CRIU_LAST, &x);
	if (!ret)
		img->criu_mode = (uint32_t)x;
	return ret;
}

static int parse_state_in_core(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	int64_t x;
	int ret;

	ret = get_integer(c, &w, "state_in_core", v, 0, 1, &x);
	if (!ret)
		img->state_in_core = (uint32_t)x;
	return ret;
}

static int parse_timers_in_core(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	int64_t x;
	int ret;

	ret = get_integer(c, &w, "timers_in_core", v, 0, 1, &x);
	if (!ret)
		img->timers_in_core = (uint32_t)x;
	return ret;
}

static int parse_timers(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	size_t i, n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return value_error(c, &w, "timers", "expected an array, got %s",
				   json_type_to_name(json_object_get_type(v)));
	n = json_object_array_length(v);
	if (n > PTIMER_IMG_MAX_TIMERS)
		return value_error(c, &w, "timers", "%zu timers exceed the limit %u",
				   n, PTIMER_IMG_MAX_TIMERS);
	img->timers = calloc(n ? n : 1, sizeof(*img->timers));
	if (!img->timers) {
		return ptimer_errf(c->err, ENOMEM, "%s: out of memory for %zu timers; %s",
				   c->path, n, ptimer_errno_hint(ENOMEM));
	}
	img->n_timers = n;
	for (i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(v, i);

		w.timer = i;
		if (!json_object_is_type(t, json_type_object)) {
			return ptimer_errf(c->err, EINVAL, "%s: timer %zu: expected an object, got %s; " JSON_FIX,
					   c->path, i, json_type_to_name(json_object_get_type(t)));
		}
		ret = parse_fields(c, &w, t, timer_keys,
				   sizeof(timer_keys) / sizeof(timer_keys[0]), &img->timers[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static const char *const rseq_keys[] = { "abi_pointer", "abi_size", "signature" };
static const char *const thread_keys[] = { "tid", "rseq", "slice_ext", "slice_ctrl" };

/* {"tid", "rseq": {"abi_pointer", "abi_size", "signature"}, "slice_ext", "slice_ctrl"} */
static int parse_thread(const struct jctx *c, const struct jwhere *w, json_object *o,
			struct ptimer_thread *t)
{
	struct jwhere in = { .timer = w->timer, .item = w->item, .parent = "rseq" };
	json_object *v, *r;
	const char *s;
	uint64_t u;
	int64_t x;
	int ret;

	ret = check_keys(c, w, o, thread_keys, sizeof(thread_keys[0]), NULL, 4);
	if (ret)
		return ret;
	json_object_object_get_ex(o, "tid", &v);
	ret = get_integer(c, w, "tid", v, INT32_MIN, INT32_MAX, &x);
	if (ret)
		return ret;
	t->tid = x;
	json_object_object_get_ex(o, "rseq", &r);
	ret = expect_object(c, w, "rseq", r);
	if (!ret)
		ret = check_keys(c, &in, r, rseq_keys, sizeof(rseq_keys[0]), NULL, 3);
	if (ret)
		return ret;
	json_object_object_get_ex(r, "abi_pointer", &v);
	ret = get_u64(c, &in, "abi_pointer", v, &u);
	if (ret)
		return ret;
	t->rseq_abi_pointer = u;
	json_object_object_get_ex(r, "abi_size", &v);
	ret = get_integer(c, &in, "abi_size", v, 0, UINT32_MAX, &x);
	if (ret)
		return ret;
	t->rseq_abi_size = x;
	json_object_object_get_ex(r, "signature", &v);
	ret = get_integer(c, &in, "signature", v, 0, UINT32_MAX, &x);
	if (ret)
		return ret;
	t->rseq_signature = x;
	json_object_object_get_ex(o, "slice_ext", &v);
	if (!json_object_is_type(v, json_type_string))
		return value_error(c, w, "slice_ext", "expected a string (\"enabled\", \"disabled\" "
				   "or \"unavailable\"), got %s", json_type_to_name(json_object_get_type(v)));
	s = json_object_get_string(v);
	for (t->slice_ext = PTIMER_SLICE_EXT_UNAVAILABLE; t->slice_ext <= PTIMER_SLICE_EXT_ENABLED;
	     t->slice_ext++)
		if (!strcmp(s, ptimer_slice_ext_name(t->slice_ext)))
			break;
	if (t->slice_ext > PTIMER_SLICE_EXT_ENABLED)
		return value_error(c, w, "slice_ext", "\"%.40s\" is not \"enabled\", \"disabled\" or "
				   "\"unavailable\"", s);
	json_object_object_get_ex(o, "slice_ctrl", &v);
	ret = get_integer(c, w, "slice_ctrl", v, 0, UINT32_MAX, &x);
	if (ret)
		return ret;
	t->slice_ctrl = x;
	return 0;
}

static int parse_threads(const struct jctx *c, json_object *v, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1, .item = "thread" };
	size_t i, n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return value_error(c, &w, "threads", "expected an array, got %s",
				   json_type_to_name(json_object_get_type(v)));
	n = json_object_array_length(v);
	if (n > PTIMER_IMG_MAX_THREADS)
		return value_error(c, &w, "threads", "%zu threads exceed the limit %u",
				   n, PTIMER_IMG_MAX_THREADS);
	if (!n)
		return 0;
	img->threads = calloc(n, sizeof(*img->threads));
	if (!img->threads) {
		return ptimer_errf(c->err, ENOMEM, "%s: out of memory for %zu threads; %s",
				   c->path, n, ptimer_errno_hint(ENOMEM));
	}
	img->n_threads = n;
	for (i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(v, i);

		w.timer = i;
		if (!json_object_is_type(t, json_type_object)) {
			return ptimer_errf(c->err, EINVAL, "%s: thread %zu: expected an object, got %s; " JSON_FIX,
					   c->path, i, json_type_to_name(json_object_get_type(t)));
		}
		ret = parse_thread(c, &w, t, &img->threads[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Top-level sections. */
struct jsection {
	const char *key;
	bool required;
	int (*parse)(const struct jctx *c, json_object *v, struct ptimer_image *img);
};

static const struct jsection top_keys[] = {
	{ "version", false, parse_version },
	{ "pid", true, parse_pid },
	{ "criu_mode", false, parse_criu_mode },
	{ "state_in_core", false, parse_state_in_core },
	{ "timers_in_core", false, parse_timers_in_core },
	{ "timers", true, parse_timers },
	{ "threads", false, parse_threads },
};

#define N_TOP_KEYS	(sizeof(top_keys) / sizeof(top_keys[0]))

static int parse_top(const struct jctx *c, json_object *root, struct ptimer_image *img)
{
	struct jwhere w = { .timer = -1 };
	bool req[N_TOP_KEYS];
	size_t i;
	int ret;

	if (!json_object_is_type(root, json_type_object)) {
		return ptimer_errf(c->err, EINVAL, "%s: expected a JSON object at the top, got %s; " JSON_FIX,
				   c->path, json_type_to_name(json_object_get_type(root)));
	}
	for (i = 0; i < N_TOP_KEYS; i++)
		req[i] = top_keys[i].required;
	ret = check_keys(c, &w, root, &top_keys[0].key, sizeof(top_keys[0]), req, N_TOP_KEYS);
	if (ret)
		return ret;
	img->version = PTIMER_IMG_VERSION;
	for (i = 0; i < N_TOP_KEYS; i++) {
		json_object *v;

		if (!json_object_object_get_ex(root, top_keys[i].key, &v))
			continue;
		ret = top_keys[i].parse(c, v, img);
		if (ret)
			return ret;
	}
	return 0;
}

int ptimer_image_from_json(const char *path, struct ptimer_image *img, struct ptimer_err *err)
{
	struct jctx c = { .path = path, .err = err };
	struct json_tokener *tok = NULL;
	json_object *root = NULL;
	char *buf = NULL;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = ptimer_file_read(path, "JSON file", JSON_MAX_FILE, PTIMER_FILE_HINT, &buf, &c.len, err);
	if (ret)
		return ret;
	c.buf = buf;
	ret = lex_check(&c);
	if (ret)
		goto out;

	tok = json_tokener_new();
	if (!tok) {
		ret = ptimer_errf(err, ENOMEM, "%s: out of memory; %s", path, ptimer_errno_hint(ENOMEM));
		goto out;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, buf, c.len);
	if (!root) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		size_t at = json_tokener_get_parse_end(tok);

		if (e == json_tokener_continue || e == json_tokener_success)
			ret = ptimer_errf(err, EINVAL, "%s: line %u: unexpected end of JSON; " JSON_FIX,
					  path, line_of(&c, c.len));
		else
			ret = ptimer_errf(err, EINVAL, "%s: line %u: invalid JSON: %s; " JSON_FIX,
					  path, line_of(&c, at), json_tokener_error_desc(e));
		goto out;
	}
	/* A NUL byte ends json-c's parse early; the rest of the file would be ignored. */
	if (json_tokener_get_parse_end(tok) != c.len) {
		ret = ptimer_errf(err, EINVAL, "%s: line %u: unexpected content after the JSON object; " JSON_FIX,
				  path, line_of(&c, json_tokener_get_parse_end(tok)));
		goto out;
	}
	ret = parse_top(&c, root, img);
	if (!ret)
		ret = ptimer_image_validate(img, path, err);
out:
	if (ret)
		ptimer_image_free(img);
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	free(buf);
	return ret;
}
