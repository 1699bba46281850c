/* keep — the shared words (vocab.h). */
#include "vocab.h"

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
