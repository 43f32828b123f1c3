// SPDX-License-Identifier: GPL-2.0
/*
 * The sysfs tree matches its documentation, both ways: every file under
 * /sys/kernel/lchan (the root, a device directory, a live channel's
 * directory, a live link's if there is one) has a What: entry in
 * Documentation/ABI/testing/sysfs-kernel-lchan, and every documented
 * attribute exists.  Each is read-only, documented as (RO), and holds one
 * value on one line.
 *
 * The selftests build copies the document to data/ beside the test
 * programs; LCHAN_SYSFS_DOC names another copy.
 */
#include <dirent.h>
#include <libgen.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define ROOT "/sys/kernel/lchan"
#define MAX_NAMES 128

struct names {
	unsigned n;
	char v[MAX_NAMES][64];
};

/* What the document says, split by directory. */
struct doc {
	struct names root, dev, chan, link;	/* attribute files */
	struct names dirs;		/* directories: "", "devices", ... */
	struct names ro;		/* "<kind>/<name>" documented (RO) */
	char path[PATH_MAX];
};

static void names_add(struct names *s, const char *name)
{
	if (s->n < MAX_NAMES)
		snprintf(s->v[s->n++], sizeof(s->v[0]), "%.63s", name);
}

static int names_has(const struct names *s, const char *name)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 1;
	return 0;
}

static void doc_path(char *buf, size_t len)
{
	const char *env = getenv("LCHAN_SYSFS_DOC");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "%s/data/sysfs-kernel-lchan", dirname(exe));
}

/*
 * Sort one What: path into @d.  Returns the "<kind>/<name>" key of an
 * attribute in @key (kind root, dev, chan or link), "" for a directory,
 * or -1 for a path outside /sys/kernel/lchan or of an unknown shape.
 */
static int doc_what(struct doc *d, const char *what, char *key, size_t len)
{
	const char *rest;
	char name[64];

	*key = 0;
	if (strncmp(what, ROOT "/", strlen(ROOT) + 1) && strcmp(what, ROOT))
		return -1;
	rest = what + strlen(ROOT);
	if (*rest == '/')
		rest++;
	if (!*rest) {
		names_add(&d->dirs, "");
		return 0;
	}
	if (!strcmp(rest, "devices/") || !strcmp(rest, "channels/") ||
	    !strcmp(rest, "links/")) {
		snprintf(name, sizeof(name), "%.*s", (int)strlen(rest) - 1,
			 rest);
		names_add(&d->dirs, name);
		return 0;
	}
	if (!strchr(rest, '/')) {
		names_add(&d->root, rest);
		snprintf(key, len, "root/%s", rest);
		return 0;
	}
	if (!strncmp(rest, "devices/<dev>/", 14) && !strchr(rest + 14, '/') &&
	    rest[14]) {
		names_add(&d->dev, rest + 14);
		snprintf(key, len, "dev/%s", rest + 14);
		return 0;
	}
	if (!strncmp(rest, "channels/<id>/", 14) && !strchr(rest + 14, '/') &&
	    rest[14]) {
		names_add(&d->chan, rest + 14);
		snprintf(key, len, "chan/%s", rest + 14);
		return 0;
	}
	if (!strncmp(rest, "links/<n>/", 10) && !strchr(rest + 10, '/') &&
	    rest[10]) {
		names_add(&d->link, rest + 10);
		snprintf(key, len, "link/%s", rest + 10);
		return 0;
	}
	return -1;
}

struct doc_entry {
	char keys[8][80];	/* attribute keys of the What: lines */
	unsigned nkeys;
	unsigned fields;	/* Date, KernelVersion, Contact, Description */
	int in_desc;
	int ro;
};

/* The entry in @e is complete: check it and keep its (RO) keys. */
static int doc_flush(struct doc *d, struct doc_entry *e, char *err,
		     size_t errlen)
{
	unsigned i;

	if (e->fields != 0xf) {
		snprintf(err, errlen,
			 "entry %s lacks Date, KernelVersion, Contact or Description",
			 e->keys[0]);
		return -1;
	}
	for (i = 0; i < e->nkeys; i++)
		if (*e->keys[i] && e->ro)
			names_add(&d->ro, e->keys[i]);
	memset(e, 0, sizeof(*e));
	return 0;
}

/*
 * Read the document.  Each entry: one or more What: lines, then Date,
 * KernelVersion, Contact and Description; an attribute's description
 * says (RO).
 */
static int doc_load(struct doc *d, char *err, size_t errlen)
{
	struct doc_entry e = { 0 };
	unsigned entries = 0;
	char line[512];
	int ret = 0;
	FILE *f;

	memset(d, 0, sizeof(*d));
	doc_path(d->path, sizeof(d->path));
	f = fopen(d->path, "r");
	if (!f) {
		snprintf(err, errlen, "%.200s: %s", d->path, strerror(errno));
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "What:", 5)) {
			char *what = line + 5 + strspn(line + 5, " \t");

			if (e.in_desc)
				ret = doc_flush(d, &e, err, errlen);
			if (ret)
				break;
			if (e.nkeys == 8 || doc_what(d, what, e.keys[e.nkeys],
						     sizeof(e.keys[0]))) {
				snprintf(err, errlen, "unexpected What: %s",
					 what);
				ret = -1;
				break;
			}
			e.nkeys++;
			entries++;
		} else if (!strncmp(line, "Date:", 5)) {
			e.fields |= 1;
		} else if (!strncmp(line, "KernelVersion:", 14)) {
			e.fields |= 2;
		} else if (!strncmp(line, "Contact:", 8)) {
			e.fields |= 4;
		} else if (!strncmp(line, "Description:", 12)) {
			e.fields |= 8;
			e.in_desc = 1;
		}
		if (e.in_desc && strstr(line, "(RO)"))
			e.ro = 1;
	}
	fclose(f);
	if (!ret && e.nkeys)
		ret = doc_flush(d, &e, err, errlen);
	if (!ret && !entries) {
		snprintf(err, errlen, "%.200s has no What: entries", d->path);
		ret = -1;
	}
	return ret;
}

FIXTURE(sysfs_doc) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
	struct doc doc;
	char err[256];
	int doc_ok;
};

LCHAN_T_VARIANTS(sysfs_doc);

FIXTURE_SETUP(sysfs_doc)
{
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	self->doc_ok = !doc_load(&self->doc, self->err, sizeof(self->err));
	lchan_t_raise_memlock();
	self->srv.slot = self->cli.slot = 256;
	self->srv.nrecv = self->cli.nrecv = 4;
	self->srv.nsend = self->cli.nsend = 4;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(sysfs_doc)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

/*
 * Compare directory @dir with the documented @files (and @subdirs, the
 * documented subdirectories).  Returns the number of differences, each
 * logged.  @kind names the kind in (RO) keys.
 */
static int compare_dir(struct __test_metadata *_metadata, const char *dir,
		       const struct names *files, const char *const *subdirs,
		       const struct doc *doc, const char *kind)
{
	struct names live = { 0 };
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX], key[320], val[512];
	unsigned i;
	int diffs = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		TH_LOG("%s: %s", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		int j, is_sub = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			TH_LOG("%s: %s", path, strerror(errno));
			diffs++;
			continue;
		}
		for (j = 0; subdirs && subdirs[j]; j++)
			if (!strcmp(subdirs[j], de->d_name))
				is_sub = 1;
		if (S_ISDIR(st.st_mode)) {
			if (!is_sub) {
				TH_LOG("%s/ is not documented", path);
				diffs++;
			}
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			TH_LOG("%s is neither a file nor a directory", path);
			diffs++;
			continue;
		}
		names_add(&live, de->d_name);
		if (!names_has(files, de->d_name)) {
			TH_LOG("%s is not documented in %s", path, doc->path);
			diffs++;
			continue;
		}
		/* Documented: read-only both in fact and on paper. */
		snprintf(key, sizeof(key), "%s/%s", kind, de->d_name);
		if (st.st_mode & 0222) {
			TH_LOG("%s is writable (mode %o)", path,
			       st.st_mode & 0777);
			diffs++;
		}
		if (!names_has(&doc->ro, key)) {
			TH_LOG("%s: the document does not say (RO)", path);
			diffs++;
		}
		/* One value: one line, no blanks inside. */
		if (lchan_t_read_sysfs(path, val, sizeof(val)) || !*val ||
		    strpbrk(val, " \t\n")) {
			TH_LOG("%s: not one value on one line: '%s'", path,
			       val);
			diffs++;
		}
	}
	closedir(d);
	for (i = 0; i < files->n; i++) {
		if (!names_has(&live, files->v[i])) {
			TH_LOG("%s/%s is documented but missing", dir,
			       files->v[i]);
			diffs++;
		}
	}
	return diffs;
}

TEST_F(sysfs_doc, document_is_well_formed)
{
	static const char *const dirs[] = { "", "devices", "channels", "links" };
	unsigned i;

	ASSERT_TRUE(self->doc_ok) TH_LOG("%s", self->err);
	for (i = 0; i < 4; i++) {
		int found = names_has(&self->doc.dirs, dirs[i]);

		if (!found)
			TH_LOG("no entry for %s/%s", ROOT, dirs[i]);
		EXPECT_TRUE(found);
	}
	EXPECT_GE(self->doc.root.n, 1);
	EXPECT_GE(self->doc.dev.n, 1);
	EXPECT_GE(self->doc.chan.n, 1);
	EXPECT_GE(self->doc.link.n, 1);
}

TEST_F(sysfs_doc, root_matches)
{
	static const char *const subdirs[] = { "devices", "channels", "links",
					       NULL };

	ASSERT_TRUE(self->doc_ok) TH_LOG("%s", self->err);
	EXPECT_EQ(0, compare_dir(_metadata, ROOT, &self->doc.root, subdirs,
				 &self->doc, "root"));
}

TEST_F(sysfs_doc, device_dir_matches)
{
	char dir[PATH_MAX];

	ASSERT_TRUE(self->doc_ok) TH_LOG("%s", self->err);
	snprintf(dir, sizeof(dir), ROOT "/devices/%s", self->d.dev);
	EXPECT_EQ(0, compare_dir(_metadata, dir, &self->doc.dev, NULL,
				 &self->doc, "dev"));
}

TEST_F(sysfs_doc, channel_dirs_match)
{
	struct lchan_t_ep *eps[] = { &self->srv, &self->cli };
	char dir[PATH_MAX], path[PATH_MAX + 16], state[32];
	unsigned i;

	ASSERT_TRUE(self->doc_ok) TH_LOG("%s", self->err);
	for (i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), ROOT "/channels/%u",
			 eps[i]->chan.info.id);
		/* A live, connected channel. */
		snprintf(path, sizeof(path), "%s/state", dir);
		ASSERT_EQ(0, lchan_t_read_sysfs(path, state, sizeof(state)))
			TH_LOG("%s", path);
		EXPECT_STREQ("connected", state);
		EXPECT_EQ(0, compare_dir(_metadata, dir, &self->doc.chan, NULL,
					 &self->doc, "chan"));
	}
}

/*
 * Every link's directory, when links are on and one exists (the suite
 * runs with links off; lchan_link_test makes them): the directory
 * itself is always there and documented.
 */
TEST_F(sysfs_doc, link_dirs_match)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int diffs = 0;
	DIR *d;

	ASSERT_TRUE(self->doc_ok) TH_LOG("%s", self->err);
	d = opendir(ROOT "/links");
	ASSERT_NE(NULL, d) TH_LOG(ROOT "/links: %s", strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), ROOT "/links/%s", de->d_name);
		diffs += compare_dir(_metadata, dir, &self->doc.link, NULL,
				     &self->doc, "link");
	}
	closedir(d);
	EXPECT_EQ(0, diffs);
}

TEST_HARNESS_MAIN
