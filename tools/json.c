// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* The tools' JSON writer (json.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static void json_indent(unsigned depth)
{
	putchar('\n');
	while (depth--)
		fputs("    ", stdout);
}

static void json_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* What comes before a member or element: its separator, and its key. */
static void json_key(struct json *j, const char *key)
{
	if (j->depth) {
		struct json_level *l = &j->level[j->depth - 1];

		if (j->layout != JSON_LINE)
			fputs(l->n ? "," : "", stdout);
		else if (l->array)
			printf("%s\n  ", l->n ? "," : "");
		else if (l->n)
			fputs(", ", stdout);
		if (j->layout == JSON_PRETTY)
			json_indent(j->depth);
		l->n++;
	}
	if (key) {
		json_quoted(key);
		fputs(j->layout == JSON_COMPACT ? ":" : ": ", stdout);
	}
}

void json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	putchar(c);
	j->level[j->depth].array = c == '[';
	j->level[j->depth].n = 0;
	j->depth++;
}

void json_close(struct json *j)
{
	const struct json_level *l = &j->level[--j->depth];

	if (l->n && j->layout == JSON_PRETTY)
		json_indent(j->depth);
	else if (l->n && l->array && j->layout == JSON_LINE)
		putchar('\n');
	putchar(l->array ? ']' : '}');
	if (!j->depth) {
		putchar('\n');
		fflush(stdout);
	}
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	json_quoted(v);
}

void json_uint(struct json *j, const char *key, unsigned long long v)
{
	json_key(j, key);
	printf("%llu", v);
}

void json_num(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (isfinite(v))
		printf("%.6g", v);
	else
		fputs("null", stdout);
}

void json_text(struct json *j, const char *key, const char *v)
{
	const char *digits = v + (*v == '-');
	size_t n = strspn(digits, "0123456789");

	if (n && !digits[n] && n <= 20 && !(digits[0] == '0' && n > 1)) {
		json_key(j, key);
		fputs(v, stdout);
	} else {
		json_str(j, key, v);
	}
}
