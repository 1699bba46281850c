/* keep — the version of this build, defined once.
 *
 * The string comes from the file VERSION at the top of the tree, passed
 * by the Makefile as KEEP_VERSION when lib/platform/version.c is compiled (a build
 * without it says "unknown"). Every command's --version, keep-agent's
 * (through lease-status), the `software keep/VERSION` line of nodes/<id>
 * and the man pages show this one string. */
#ifndef KEEP_VERSION_H
#define KEEP_VERSION_H

/* The version, e.g. "0.1" (static storage, never freed). */
const char *keep_version(void);

/* "keep/VERSION": the `software` token lease-write writes into nodes/<id>
 * (docs/formats.md; static storage). */
const char *keep_software(void);

#endif
