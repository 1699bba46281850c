/* keep — libcurl loaded on first use (curlfn_internal.h). */
#define KEEP_CURLFN_IMPL
#include "curlfn_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#ifndef KEEP_LIBCURL_SONAME
#define KEEP_LIBCURL_SONAME "libcurl.so.4"
#endif

/* the forwarders, declared with curl's own types (a signature that drifts
 * from curl.h's is a compile error here) */
#define DECLARE(n) extern __typeof__(curl_##n) keep_curl_##n;
KEEP_CURL_FNS(DECLARE)
#undef DECLARE

/* libcurl's functions, once loaded */
#define POINTER(n) static __typeof__(&curl_##n) p_##n;
KEEP_CURL_FNS(POINTER)
#undef POINTER

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;	   /* 1: every p_ is set */
static char why[256] = ""; /* the failure's reason, when !loaded */

static void load(void)
{
	void *h = dlopen(KEEP_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		snprintf(why, sizeof(why), "cannot load libcurl (%s): %s", KEEP_LIBCURL_SONAME,
			 e ? e : "unknown error");
		return;
	}
	/* POSIX: dlsym's void * converts to a function pointer */
#define LOOKUP(n)                                                                                  \
	p_##n = (__typeof__(p_##n))dlsym(h, "curl_" #n);                                           \
	if (!p_##n) {                                                                              \
		snprintf(why, sizeof(why), "libcurl (%s) has no curl_" #n ": too old",             \
			 KEEP_LIBCURL_SONAME);                                                     \
		return;                                                                            \
	}
	KEEP_CURL_FNS(LOOKUP)
#undef LOOKUP
	loaded = 1; /* h stays open for the life of the process */
}

static int ready(void)
{
	pthread_once(&once, load);
	return loaded;
}

int keep_curl_load(char *err, size_t errlen)
{
	if (ready())
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return -1;
}

CURLcode keep_curl_global_init(long flags)
{
	return ready() ? p_global_init(flags) : CURLE_FAILED_INIT;
}

void keep_curl_global_cleanup(void)
{
	if (ready())
		p_global_cleanup();
}

CURL *keep_curl_easy_init(void)
{
	return ready() ? p_easy_init() : NULL;
}

/* The one argument after the option is read as libcurl reads it: by the
 * option's type range (curl.h's CURLOPTTYPE_*). */
CURLcode keep_curl_easy_setopt(CURL *e, CURLoption o, ...)
{
	va_list ap;
	CURLcode rc;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, o);
	if (o < CURLOPTTYPE_OBJECTPOINT)
		rc = p_easy_setopt(e, o, va_arg(ap, long));
	else if (o < CURLOPTTYPE_FUNCTIONPOINT)
		rc = p_easy_setopt(e, o, va_arg(ap, void *));
	else if (o < CURLOPTTYPE_OFF_T)
		rc = p_easy_setopt(e, o, va_arg(ap, void (*)(void)));
	else if (o < CURLOPTTYPE_BLOB)
		rc = p_easy_setopt(e, o, va_arg(ap, curl_off_t));
	else
		rc = p_easy_setopt(e, o, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode keep_curl_easy_perform(CURL *e)
{
	return ready() ? p_easy_perform(e) : CURLE_FAILED_INIT;
}

/* every CURLINFO's argument is a pointer */
CURLcode keep_curl_easy_getinfo(CURL *e, CURLINFO i, ...)
{
	va_list ap;
	CURLcode rc;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, i);
	rc = p_easy_getinfo(e, i, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

void keep_curl_easy_reset(CURL *e)
{
	if (ready())
		p_easy_reset(e);
}

void keep_curl_easy_cleanup(CURL *e)
{
	if (ready())
		p_easy_cleanup(e);
}

const char *keep_curl_easy_strerror(CURLcode c)
{
	return ready() ? p_easy_strerror(c) : why;
}

CURLHcode keep_curl_easy_header(CURL *e, const char *name, size_t index, unsigned int origin,
				int request, struct curl_header **hout)
{
	return ready() ? p_easy_header(e, name, index, origin, request, hout) : CURLHE_BAD_ARGUMENT;
}

struct curl_header *keep_curl_easy_nextheader(CURL *e, unsigned int origin, int request,
					      struct curl_header *prev)
{
	return ready() ? p_easy_nextheader(e, origin, request, prev) : NULL;
}

void keep_curl_free(void *p)
{
	if (ready())
		p_free(p);
}

struct curl_slist *keep_curl_slist_append(struct curl_slist *l, const char *s)
{
	return ready() ? p_slist_append(l, s) : NULL;
}

void keep_curl_slist_free_all(struct curl_slist *l)
{
	if (ready())
		p_slist_free_all(l);
}

CURLU *keep_curl_url(void)
{
	return ready() ? p_url() : NULL;
}

void keep_curl_url_cleanup(CURLU *u)
{
	if (ready())
		p_url_cleanup(u);
}

CURLUcode keep_curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
	return ready() ? p_url_get(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

CURLUcode keep_curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
	return ready() ? p_url_set(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
