/* keep — the version of this build (version.h). */
#include "version.h"

#ifndef KEEP_VERSION
#define KEEP_VERSION "unknown"
#endif

const char *keep_version(void)
{
	return KEEP_VERSION;
}

const char *keep_software(void)
{
	return "keep/" KEEP_VERSION;
}
