/* keep — which bodies a listing pass reads (listing.h; ADR 0020 §2). */
#include "listing.h"

#include <string.h>

bool keep_listing_need_read(const char *body_version, const char *listed_version, bool wanted)
{
	if (!wanted)
		return false;
	if (!body_version || !*body_version || !listed_version)
		return true;
	return strcmp(body_version, listed_version) != 0;
}

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
	return keep_listing_need_read(prev->body_version, listed, true);
}
