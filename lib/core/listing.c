/* keep — which node bodies a listing pass reads (listing.h; ADR 0020 §2). */
#include "listing.h"

#include <string.h>

bool keep_listing_need_body(const struct keep_listed *prev, const char *listed, bool every,
			    bool *wrote)
{
	*wrote = false;
	if (every || !prev || !prev->decoded || !prev->obj)
		return true;
	if (strcmp(prev->listed ? prev->listed : "", listed) != 0) {
		*wrote = true;
		return false;
	}
	if (prev->obj->format == 3 && prev->obj->state == KEEP_NODE_LIVE)
		return true;
	return strcmp(prev->body_version ? prev->body_version : "", listed) != 0;
}
