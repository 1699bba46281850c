/* keep — diagnostic lines on stderr: one shape for every command
 * (docs/operations.md "Logs").
 *
 *   [<N>][TIME ]PROG: LEVEL: message
 *
 * LEVEL is `fatal` (the command exits, with the code the line explains),
 * `error` (something is wrong and needs a person; the command goes on),
 * `warning` or `info`. The same line goes to stderr in one write(2), so
 * threads never interleave parts of two lines.
 *
 * <N> is the syslog priority (3 fatal and error, 4 warning, 6 info), written only
 * when stderr is the systemd journal (JOURNAL_STREAM names stderr's device
 * and inode, as systemd sets it for StandardError=journal): journald
 * takes it off the line and files the line under that priority
 * (SyslogLevelPrefix=, on by default), so `journalctl -p err` finds the
 * fatal lines.
 *
 * TIME is the wall clock, RFC 3339 in UTC with milliseconds
 * (2025-06-01T12:00:00.123Z), written per log.timestamps: `auto` (the
 * default) when stderr is neither a terminal nor the journal (a file, a
 * pipe: whoever reads it later needs the time; journald and a person at a
 * terminal do not), `always`, `never`. $KEEP_LOG_TIMESTAMPS sets the
 * default before the configuration is read (usage errors included).
 *
 * Event lines on stdout (lib/platform/line.h) get a last field ts=TIME only when
 * asked (log.event_timestamps: true, or --timestamps): their format is a
 * promise. */
#ifndef KEEP_LOG_H
#define KEEP_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Levels; the syslog priority of each in parentheses. */
enum keep_log_level {
	KEEP_LOG_FATAL = 0, /* "fatal" (3, err): the command ends */
	KEEP_LOG_ERROR,	    /* "error" (3, err): something is wrong, the command goes on */
	KEEP_LOG_WARNING,   /* "warning" (4) */
	KEEP_LOG_INFO,	    /* "info" (6): what it does, what it waits for */
};

/* log.timestamps */
enum keep_log_ts {
	KEEP_LOG_TS_AUTO = 0, /* when stderr is neither a terminal nor the journal */
	KEEP_LOG_TS_ALWAYS,
	KEEP_LOG_TS_NEVER,
};

#define KEEP_LOG_TS_ENV "KEEP_LOG_TIMESTAMPS" /* auto | always | never */
#define KEEP_LOG_LINE_MAX 4096		      /* bytes of one line; longer is cut with "..." */

/* "auto", "always", "never" -> *out; false for anything else. */
bool keep_log_ts_parse(const char *s, enum keep_log_ts *out);
/* The name of v ("auto", "always", "never"). */
const char *keep_log_ts_name(enum keep_log_ts v);

/* Set log.timestamps (after the configuration was read; before that the
 * default is $KEEP_LOG_TIMESTAMPS, else auto). */
void keep_log_set_timestamps(enum keep_log_ts v);
/* Whether stdout's lines get ts= (log.event_timestamps, --timestamps). */
void keep_log_set_event_timestamps(bool on);
bool keep_log_event_timestamps(void);

/* Is stderr the systemd journal (JOURNAL_STREAM=DEV:INO matches fstat of
 * fd 2)? Decided once, at the first call. */
bool keep_log_journal(void);

/* TIME (above) of wall_ms into out (at least 25 bytes); out. */
const char *keep_log_time(int64_t wall_ms, char *out, size_t n);

/* One diagnostic line (above) for prog ("keep" when NULL); fmt without a
 * trailing newline. stdout is flushed first, so the two streams keep
 * their order on a shared terminal. Never fails (a line that does not fit
 * is cut). */
void keep_log(enum keep_log_level level, const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void keep_vlog(enum keep_log_level level, const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
