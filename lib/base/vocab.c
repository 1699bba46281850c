/* keep — the shared words (vocab.h). */
#include "vocab.h"

#include <string.h>

#include "exitcode.h"

const char *keep_outcome_name(enum keep_outcome o)
{
	switch (o) {
	case KEEP_STORE_OK:
		return "ok";
	case KEEP_STORE_CONFLICT:
		return "conflict";
	case KEEP_STORE_NOT_FOUND:
		return "not-found";
	case KEEP_STORE_REFUSED:
		return "refused";
	case KEEP_STORE_AMBIGUOUS:
		return "ambiguous";
	}
	return "ambiguous";
}

int keep_exit_of_outcome(enum keep_outcome o, bool not_ours)
{
	switch (o) {
	case KEEP_STORE_OK:
		return KEEP_EXIT_OK;
	case KEEP_STORE_REFUSED:
		return not_ours ? KEEP_EXIT_BAD_OBJECT : KEEP_EXIT_NO;
	case KEEP_STORE_CONFLICT:
	case KEEP_STORE_NOT_FOUND:
		return KEEP_EXIT_NO;
	case KEEP_STORE_AMBIGUOUS:
		break;
	}
	return KEEP_EXIT_TEMP;
}

int keep_exit_rank(int code)
{
	switch (code) {
	case KEEP_EXIT_OK:
		return 0;
	case KEEP_EXIT_NO:
		return 1;
	case KEEP_EXIT_UNKNOWN:
		return 2;
	case KEEP_EXIT_TEMP:
		return 3;
	case KEEP_EXIT_BAD_OBJECT:
		return 5;
	case KEEP_EXIT_USAGE:
		return 6;
	default:
		return 4; /* the lease's codes */
	}
}

void keep_exit_worst(int *worst, int rc)
{
	if (keep_exit_rank(rc) > keep_exit_rank(*worst))
		*worst = rc;
}

bool keep_app_root_valid(const char *root)
{
	size_t i, n;

	if (!root)
		return false;
	n = strnlen(root, KEEP_APP_ROOT_MAX + 1);
	if (n == 0 || n > KEEP_APP_ROOT_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = root[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '-' && c != '_')))
			return false;
	}
	return true;
}
