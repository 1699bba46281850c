/* keep — error codes shared by every part of libkeep.
 *
 * Actions return 0 or a negative enum keep_err; predicates return bool.
 * These are library errors (what went wrong locally); the outcome of a
 * store request is a separate value (enum keep_outcome, store/store.h),
 * and process exit codes are a third table (exitcode.h). */
#ifndef KEEP_ERR_H
#define KEEP_ERR_H

enum keep_err {
	KEEP_OK = 0,
	KEEP_ERR_NOMEM = -1,   /* allocation failed */
	KEEP_ERR_INVAL = -2,   /* bad argument or input (key, flag, line) */
	KEEP_ERR_PARSE = -3,   /* bytes that do not parse (object, config) */
	KEEP_ERR_TOOBIG = -4,  /* input over its documented bound: refused */
	KEEP_ERR_IO = -5,      /* local file or system call failed */
	KEEP_ERR_CONFIG = -6,  /* configuration invalid */
	KEEP_ERR_NOTOURS = -7, /* an object in a format that is not ours */
	KEEP_ERR_STORE = -8,   /* store could not be opened or used */
	KEEP_ERR_PERM = -9,    /* permission problem (e.g. credentials file mode) */
};

/* A static, lowercase description of err (never NULL). */
const char *keep_strerror(int err);

#endif
