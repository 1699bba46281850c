/* keep — diagnostic lines on stderr (log.h). */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/parse.h"
#include "clock.h"

static int ts_mode = -1; /* enum keep_log_ts; -1: not decided (environment) */
static bool event_ts;
static int journal = -1; /* -1 unknown, 0 no, 1 stderr is the journal */

bool keep_log_ts_parse(const char *s, enum keep_log_ts *out)
{
	if (!s)
		return false;
	if (strcmp(s, "auto") == 0)
		*out = KEEP_LOG_TS_AUTO;
	else if (strcmp(s, "always") == 0)
		*out = KEEP_LOG_TS_ALWAYS;
	else if (strcmp(s, "never") == 0)
		*out = KEEP_LOG_TS_NEVER;
	else
		return false;
	return true;
}

const char *keep_log_ts_name(enum keep_log_ts v)
{
	return v == KEEP_LOG_TS_ALWAYS ? "always" : v == KEEP_LOG_TS_NEVER ? "never" : "auto";
}

void keep_log_set_timestamps(enum keep_log_ts v)
{
	ts_mode = (int)v;
}

void keep_log_set_event_timestamps(bool on)
{
	event_ts = on;
}

bool keep_log_event_timestamps(void)
{
	return event_ts;
}

bool keep_log_journal(void)
{
	const char *env, *colon;
	int64_t dev, ino;
	struct stat st;
	char devs[32];

	if (journal >= 0)
		return journal == 1;
	journal = 0;
	env = getenv("JOURNAL_STREAM");
	if (!env || !(colon = strchr(env, ':')) || (size_t)(colon - env) >= sizeof(devs))
		return false;
	memcpy(devs, env, (size_t)(colon - env));
	devs[colon - env] = '\0';
	if (!keep_dec_parse_str(devs, INT64_MAX, &dev) ||
	    !keep_dec_parse_str(colon + 1, INT64_MAX, &ino) || fstat(2, &st) != 0)
		return false;
	journal = (uint64_t)st.st_dev == (uint64_t)dev && (uint64_t)st.st_ino == (uint64_t)ino;
	return journal == 1;
}

/* Should this line carry TIME? */
static bool want_time(void)
{
	enum keep_log_ts m;

	if (ts_mode < 0) {
		m = KEEP_LOG_TS_AUTO;
		keep_log_ts_parse(getenv(KEEP_LOG_TS_ENV), &m);
		ts_mode = (int)m;
	}
	if (ts_mode == KEEP_LOG_TS_ALWAYS)
		return true;
	if (ts_mode == KEEP_LOG_TS_NEVER)
		return false;
	return !keep_log_journal() && !isatty(2);
}

const char *keep_log_time(int64_t wall_ms, char *out, size_t n)
{
	time_t secs = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (n == 0)
		return out;
	if (!gmtime_r(&secs, &tm) ||
	    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     (int)(wall_ms % 1000)) < 0)
		out[0] = '\0';
	return out;
}

static const char *level_name(enum keep_log_level level)
{
	switch (level) {
	case KEEP_LOG_FATAL:
		return "fatal";
	case KEEP_LOG_ERROR:
		return "error";
	case KEEP_LOG_WARNING:
		return "warning";
	case KEEP_LOG_INFO:
		break;
	}
	return "info";
}

/* The syslog priority of a level (journald's <N>). */
static int priority(enum keep_log_level level)
{
	return level == KEEP_LOG_WARNING ? 4 : level == KEEP_LOG_INFO ? 6 : 3;
}

void keep_vlog(enum keep_log_level level, const char *prog, const char *fmt, va_list ap)
{
	char line[KEEP_LOG_LINE_MAX], ts[32];
	size_t n = 0;
	int w, saved = errno;

	if (keep_log_journal())
		n += (size_t)snprintf(line, sizeof(line), "<%d>", priority(level));
	if (want_time())
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s ",
				      keep_log_time(keep_wall_ms(), ts, sizeof(ts)));
	w = snprintf(line + n, sizeof(line) - n, "%s: %s: ", prog ? prog : "keep",
		     level_name(level));
	if (w > 0)
		n += (size_t)w < sizeof(line) - n ? (size_t)w : sizeof(line) - n - 1;
	w = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (w > 0)
		n += (size_t)w < sizeof(line) - n ? (size_t)w : sizeof(line) - n - 1;
	if (n >= sizeof(line) - 2) { /* cut: say so */
		n = sizeof(line) - 5;
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n++] = '\n';
	fflush(stdout);
	fflush(stderr);
	/* one write(2): a line is never split between threads or processes */
	for (size_t off = 0; off < n;) {
		ssize_t r = write(2, line + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* nowhere left to say it */
		off += (size_t)r;
	}
	errno = saved;
}

void keep_log(enum keep_log_level level, const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	keep_vlog(level, prog, fmt, ap);
	va_end(ap);
}
