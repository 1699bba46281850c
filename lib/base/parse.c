/* keep — strict number and token parsers (parse.h). */
#include "parse.h"

#include <string.h>

bool keep_dec_parse(const char *s, size_t n, int64_t max, int64_t *out)
{
	int64_t v = 0;
	size_t i;

	if (!s || n == 0 || n > 19 || (s[0] == '0' && n > 1) || max < 0)
		return false;
	for (i = 0; i < n; i++) {
		int d = s[i] - '0';

		if (d < 0 || d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool keep_dec_parse_str(const char *s, int64_t max, int64_t *out)
{
	return s && keep_dec_parse(s, strlen(s), max, out);
}

bool keep_duration_parse(const char *s, int64_t max_ms, int64_t *out_ms)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = {{"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
	size_t n = 0, i;
	int64_t v;

	if (!s)
		return false;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].unit) != 0)
			continue;
		if (!keep_dec_parse(s, n, max_ms / units[i].ms, &v))
			return false;
		*out_ms = v * units[i].ms;
		return true;
	}
	return false;
}

bool keep_hex_valid(const char *s, size_t n)
{
	size_t i;

	if (!s || n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool keep_instance_valid(const char *s, size_t n)
{
	return n == KEEP_INSTANCE_LEN && keep_hex_valid(s, n);
}

void keep_hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}
