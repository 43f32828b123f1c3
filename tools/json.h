/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The tools' JSON writer, to standard output.  JSON_LINE is what the rig
 * reads with sed (the benchmarks): an object on one line, members apart by
 * ", ", each element of an array on a line of its own.  JSON_COMPACT and
 * JSON_PRETTY are lchanctl's --json and --json --pretty.
 */
#ifndef LCHAN_JSON_H
#define LCHAN_JSON_H

#include <stdbool.h>

enum json_layout { JSON_LINE, JSON_COMPACT, JSON_PRETTY };

#define JSON_DEPTH	4	/* nesting, at the most */

struct json_level {
	bool array;
	unsigned n;		/* members or elements so far */
};

struct json {
	enum json_layout layout;
	unsigned depth;
	struct json_level level[JSON_DEPTH];
};

/* An object or array ('{' or '['), under @key (NULL: an array element). */
void json_open(struct json *j, const char *key, char c);
/* The innermost one; the outermost ends the line and is flushed. */
void json_close(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
void json_uint(struct json *j, const char *key, unsigned long long v);
/* %.6g, and null for what is not a finite number. */
void json_num(struct json *j, const char *key, double v);
/* @v as a number when it is a plain decimal integer, else as a string. */
void json_text(struct json *j, const char *key, const char *v);

#endif /* LCHAN_JSON_H */
