/* clocks — print this host's monotonic and wall clocks, as keep reads them
 * (lib/clock.h), on one line: `mono_ms=N wall_ms=N`. Bats tests use it to
 * turn a monotonic time from a lease state file (live_since_mono_ms) into
 * wall time, to compare it with a fence's fenced_at_ms. Exit 0. */
#include <inttypes.h>
#include <stdio.h>

#include "../../lib/clock.h"

int main(void)
{
	int64_t mono = keep_mono_ms();
	int64_t wall = keep_wall_ms();

	printf("mono_ms=%" PRId64 " wall_ms=%" PRId64 "\n", mono, wall);
	return 0;
}
