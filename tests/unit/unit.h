/* keep — a tiny TAP unit-test harness (header only).
 *
 *   TEST(name) { CHECK(expr); CHECK_EQ_INT(a, b); CHECK_EQ_STR(a, b); }
 *   int main(void) { RUN(name); ...; return unit_done(); }
 *
 * Prints "ok N - name" / "not ok N - name" per test (TAP), and the plan
 * "1..N" at the end; exit status 1 if any failed. */
#ifndef KEEP_UNIT_H
#define KEEP_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_n, unit_failed, unit_cur_failed;

#define TEST(name) static void name(void)
#define CHECK(e)                                                                                   \
	do {                                                                                       \
		if (!(e)) {                                                                        \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #e);           \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)
#define CHECK_EQ_INT(a, b)                                                                         \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			printf("#   %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
			       #a, a_, #b, b_);                                                    \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)
#define CHECK_EQ_STR(a, b)                                                                         \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                           \
			printf("#   %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__,   \
			       #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                        \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)
#define RUN(name)                                                                                  \
	do {                                                                                       \
		unit_cur_failed = 0;                                                               \
		name();                                                                            \
		unit_n++;                                                                          \
		if (unit_cur_failed)                                                               \
			unit_failed++;                                                             \
		printf("%sok %d - %s\n", unit_cur_failed ? "not " : "", unit_n, #name);            \
		fflush(stdout);                                                                    \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif
