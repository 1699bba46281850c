/* keep — libcurl, loaded when the first S3 store opens (docs/performance.md
 * "Exec cost", docs/s3.md).
 *
 * Linking libcurl costs every command about 14 ms at exec (the dynamic
 * loader maps and relocates libcurl and the 30 libraries Debian's build
 * of it needs: GnuTLS, Kerberos, LDAP, SSH, ...) even where the store is
 * a directory and curl is never called. So no keep binary links libcurl:
 * the S3 backend loads it with dlopen(3) on first use (keep_curl_load),
 * and this header, included right after <curl/curl.h> in the S3 backend's
 * files only, makes each curl function the backend calls resolve to a
 * forwarder in curlfn.c (an assembler name, so curl's own declarations,
 * macros and compile-time type checks of curl_easy_setopt stay as they
 * are). A function called before keep_curl_load succeeded fails as libcurl
 * documents for that function (NULL, CURLE_FAILED_INIT, ...) and never
 * crashes. */
#ifndef KEEP_STORE_CURLFN_INTERNAL_H
#define KEEP_STORE_CURLFN_INTERNAL_H

#include <curl/curl.h>
#include <stddef.h>

/* Every libcurl function keep calls (lib/store/s3.c, lib/store/awscreds.c).
 * Calling another one is a link error ("undefined reference to curl_..."):
 * add it here and a forwarder in curlfn.c. */
#define KEEP_CURL_FNS(X)                                                                           \
	X(global_init)                                                                             \
	X(global_cleanup)                                                                          \
	X(easy_init)                                                                               \
	X(easy_setopt)                                                                             \
	X(easy_perform)                                                                            \
	X(easy_getinfo)                                                                            \
	X(easy_reset)                                                                              \
	X(easy_cleanup)                                                                            \
	X(easy_strerror)                                                                           \
	X(easy_header)                                                                             \
	X(easy_nextheader)                                                                         \
	X(free)                                                                                    \
	X(slist_append)                                                                            \
	X(slist_free_all)                                                                          \
	X(url)                                                                                     \
	X(url_cleanup)                                                                             \
	X(url_get)                                                                                 \
	X(url_set)

#ifndef KEEP_CURLFN_IMPL
/* curl_NAME is keep_curl_NAME at link time (the parentheses keep curl's
 * function-like macros, such as its curl_easy_setopt type check, out). */
#define KEEP_CURL_REDIRECT(n) extern __typeof__(curl_##n)(curl_##n) __asm__("keep_curl_" #n);
KEEP_CURL_FNS(KEEP_CURL_REDIRECT)
#undef KEEP_CURL_REDIRECT
#endif

/* keep_curl_load: load libcurl (KEEP_LIBCURL_SONAME, "libcurl.so.4") and
 * every function of KEEP_CURL_FNS, once per process (thread-safe; later
 * calls return the first call's result at once). Returns 0, or -1 with a
 * one-line reason in err (errlen bytes, NUL-terminated; err may be NULL):
 * the library is missing or lacks a function (too old a libcurl). Call it
 * before curl_global_init. No ADR section: packaging. */
int keep_curl_load(char *err, size_t errlen);

#endif
