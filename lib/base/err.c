#include "err.h"

const char *keep_strerror(int err)
{
	switch (err) {
	case KEEP_OK:
		return "success";
	case KEEP_ERR_NOMEM:
		return "out of memory";
	case KEEP_ERR_INVAL:
		return "invalid input";
	case KEEP_ERR_PARSE:
		return "malformed";
	case KEEP_ERR_TOOBIG:
		return "over the size limit";
	case KEEP_ERR_IO:
		return "i/o error";
	case KEEP_ERR_CONFIG:
		return "invalid configuration";
	case KEEP_ERR_NOTOURS:
		return "not a keep object";
	case KEEP_ERR_STORE:
		return "store error";
	case KEEP_ERR_PERM:
		return "permission refused";
	}
	return "unknown error";
}
