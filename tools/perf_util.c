// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Measuring helpers shared by lchan_perf and lchan_msg_perf. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "perf_util.h"

double calibrate(void)
{
	struct timespec ten_ms = { 0, 10000000 };
	uint64_t t0 = ticks(), n0 = now_ns(), t1, n1;

	nanosleep(&ten_ms, NULL);
	t1 = ticks();
	n1 = now_ns();
	if (n1 <= n0 || t1 <= t0)
		return 1000.0;
	return (double)(t1 - t0) * 1000.0 / (double)(n1 - n0);
}

double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/*
 * The context's kernel poller thread is not part of this process; its CPU
 * time comes from /proc.  It is called "lchan-poll/<our pid>" (comm keeps
 * 15 characters).
 */
int find_poller(void)
{
	char want[16], path[300], comm[32];
	struct dirent *de;
	int found = -1;
	DIR *d;

	snprintf(want, sizeof(want), "lchan-poll/%d", (int)getpid());
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		int pid;
		FILE *f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			/* Ours was made after us: take the lowest such pid. */
			if (!strcmp(comm, want) && pid > getpid() &&
			    (found < 0 || pid < found))
				found = pid;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

double task_cpu_secs(int pid)
{
	unsigned long utime, stime;
	char path[64], buf[1024], *s;
	size_t n;
	FILE *f;

	if (pid < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* utime and stime are fields 14 and 15; comm (2) may hold blanks. */
	s = strrchr(buf, ')');
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double pct(const uint64_t *v, unsigned long n, double q, double scale)
{
	unsigned long i = (unsigned long)ceil(q * (double)n);

	if (i)
		i--;
	if (i >= n)
		i = n - 1;
	return (double)v[i] * scale;
}

void json_num(const char *key, double v, bool comma)
{
	if (isfinite(v))
		printf("\"%s\": %.6g%s", key, v, comma ? ", " : "");
	else
		printf("\"%s\": null%s", key, comma ? ", " : "");
}

uint8_t pattern(size_t size, size_t j)
{
	return (uint8_t)(j * 131u + size * 7u + 11u);
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || !v || v > (1ULL << 30))
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

int parse_sizes(const char *arg, size_t *sizes, unsigned max, unsigned *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			ret = -E2BIG;
		else
			ret = parse_size(tok, &sizes[(*n)++]);
	}
	free(copy);
	return ret || !*n ? -EINVAL : 0;
}

unsigned long parse_ulong(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s || *end || v > max) {
		fprintf(stderr, "%s: bad number '%s'\n",
			program_invocation_short_name, s);
		exit(2);
	}
	return v;
}
