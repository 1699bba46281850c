/* keep — throttled store replies and the backoff they earn, sans I/O
 * (issue 28 item 4; docs/s3.md "Throttling", docs/store.md).
 *
 * Throttling is a state of the store, not an answer about the request:
 * S3's `503 SlowDown` (and any 503), R2's and others' `429`. The reply's
 * outcome for the protocol stays what the classification says (a 503 or
 * a 429 is AMBIGUOUS: a write answered so may have been applied on some
 * stores, so no decision may take it for "not done"); `throttled` is a
 * separate flag, used for the backoff and the metric
 * keep_store_throttled_total{op}.
 *
 * The backoff is full jitter (the delay drawn uniformly from 0 to a
 * ceiling that doubles with every throttled reply in a row, capped): the
 * decision is here, the driver sleeps (lib/store/counted.c, before the
 * next request of the handle). The node lease's own writes never back off:
 * lease-write keeps its schedule, bounded by the validity left. */
#ifndef KEEP_CORE_THROTTLE_H
#define KEEP_CORE_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#define KEEP_BACKOFF_BASE_MS 100  /* ceiling after the first throttled reply (ms) */
#define KEEP_BACKOFF_CAP_MS 10000 /* the ceiling never grows past this (ms) */

/* Is an HTTP reply (status; code: the S3 error <Code>, "" or NULL when
 * none) a throttle? Any 503 (S3 `SlowDown`, `ServiceUnavailable`: both
 * ask the client to slow down), any 429 (R2 and gateways: `TooManyRequests`),
 * and the throttling codes S3-compatible stores send with other statuses
 * (`SlowDown`, `TooManyRequests`, `Throttling`, `ThrottlingException`,
 * `RequestLimitExceeded`, `RequestThrottled`). Pure. */
bool keep_throttle_reply(long status, const char *code);

/* The full-jitter delay (ms) before the next request after `throttled`
 * throttled replies in a row (0: none, delay 0): uniform in
 * [0, min(cap_ms, base_ms * 2^(throttled - 1))], drawn from rnd (any 64
 * random bits, passed in: the core reads no random source). base_ms and
 * cap_ms > 0 (KEEP_BACKOFF_BASE_MS, KEEP_BACKOFF_CAP_MS in the drivers). */
int64_t keep_backoff_ms(int64_t throttled, uint64_t rnd, int64_t base_ms, int64_t cap_ms);

/* The ceiling of that draw (ms): min(cap_ms, base_ms * 2^(throttled - 1)),
 * 0 when throttled <= 0. */
int64_t keep_backoff_ceiling_ms(int64_t throttled, int64_t base_ms, int64_t cap_ms);

/* The rule every request but the node lease's own writes follows after
 * throttled replies (issue 28 item 4; docs/s3.md "Throttling"): the delay
 * (ms) before the next request of a handle after `throttled` throttled
 * replies in a row (0: none, delay 0), full jitter with
 * KEEP_BACKOFF_BASE_MS and KEEP_BACKOFF_CAP_MS (keep_backoff_ms, rnd any
 * 64 random bits), and never more than half of bound_ms, the request's own
 * bound (ms; <= 0: none), which the request keeps the rest of. Pure; the
 * driver sleeps (lib/driver/counted.c). */
int64_t keep_throttle_backoff_ms(int64_t throttled, uint64_t rnd, int64_t bound_ms);

#endif
