/* keep — libFuzzer harness: the YAML configuration loader
 * (lib/local/config.h, keep_config_load).
 *
 * keep_config_load reads a path, so each input is written to a memfd and
 * loaded through /proc/self/fd/N (lib/local/config.c unchanged). Properties: no
 * crash, leak or overread; on error the config is unchanged and the reason
 * names the file; on success the result passes the documented bounds
 * (strings NUL-terminated within their fields). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lib/base/err.h"
#include "../lib/local/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static int put_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (memfd < 0) {
		memfd = memfd_create("keep-fuzz-config", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) != 0)
		abort();
	while (off < size) {
		ssize_t w = pwrite(memfd, data + off, size - off, (off_t)off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_config c, before;
	char err[512];
	int rc;

	put_input(data, size);
	keep_config_defaults(&c);
	memcpy(&before, &c, sizeof(c));
	err[0] = '\0';
	rc = keep_config_load(&c, path, err, sizeof(err));
	if (rc != 0) {
		if (rc != KEEP_ERR_CONFIG && rc != KEEP_ERR_IO && rc != KEEP_ERR_NOMEM)
			abort();
		if (memcmp(&before, &c, sizeof(c)) != 0)
			abort(); /* c is unchanged on error */
		if (strnlen(err, sizeof(err)) >= sizeof(err) || !err[0])
			abort();
		return 0;
	}
	if (strnlen(c.node_id, sizeof(c.node_id)) >= sizeof(c.node_id) ||
	    strnlen(c.store, sizeof(c.store)) >= sizeof(c.store) ||
	    strnlen(c.state_dir, sizeof(c.state_dir)) >= sizeof(c.state_dir) ||
	    strnlen(c.s3_endpoint, sizeof(c.s3_endpoint)) >= sizeof(c.s3_endpoint) ||
	    strnlen(c.s3_credentials_file, sizeof(c.s3_credentials_file)) >=
		sizeof(c.s3_credentials_file) ||
	    strnlen(c.metrics_textfile, sizeof(c.metrics_textfile)) >= sizeof(c.metrics_textfile))
		abort();
	if (keep_config_check(&c, err, sizeof(err)) == 0 && c.node_id[0] &&
	    !keep_node_id_valid(c.node_id))
		abort(); /* a checked config has a valid node id */
	return 0;
}
