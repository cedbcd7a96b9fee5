/* Device classes: parsing, the file's block device, the throttle's texts.
 * The named classes are published figures of a typical drive of each kind
 * (sequential read and 4 KiB random read IOPS, the latter at queue depth
 * 32): SATA SSD Samsung 870 EVO 560 MB/s, 98K IOPS (any SATA SSD tops out
 * near 550 MB/s, the link's limit); NVMe Gen3 Samsung 970 EVO Plus 3500
 * MB/s, 600K IOPS; NVMe Gen4 Samsung 980 PRO 7000 MB/s, 1000K IOPS. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/cli.h"
#include "cgroup/devclass.h"

static const struct devclass named[] = {
	{ "host", 0, 0 },
	{ "sata", 550000000, 98000 },
	{ "nvme3", 3500000000ull, 600000 },
	{ "nvme4", 7000000000ull, 1000000 },
};

/* A count with K or M = 1000^n; 0, or -1. */
static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1000, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1000000, end++;
	if (*end || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int devclass_parse(const char *s, struct devclass *dc, char *err, size_t n)
{
	char rate[32];
	const char *comma = strchr(s, ',');
	size_t rl = comma ? (size_t)(comma - s) : strlen(s);

	memset(dc, 0, sizeof(*dc));
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(s, named[i].name)) {
			*dc = named[i];
			return 0;
		}
	if (rl < sizeof(rate) && strlen(s) < sizeof(dc->name)) {
		memcpy(rate, s, rl);
		rate[rl] = '\0';
		if (!cli_bytes(rate, &dc->rbps) && dc->rbps &&
		    (!comma ||
		     (!parse_count(comma + 1, &dc->riops) && dc->riops))) {
			strcpy(dc->name, s);
			return 0;
		}
	}
	snprintf(err, n, "bad device class '%s'; use %s, e.g. sata or 200M,5K",
		 s, DEVCLASS_FORMS);
	memset(dc, 0, sizeof(*dc));
	return -1;
}

int devclass_cli(void *dst, const char *where, const char *v, char *err,
		 size_t n)
{
	(void)where;
	return devclass_parse(v, dst, err, n);
}

/* The MAJ:MIN in a sysfs "dev" file; 0, or -1. */
static int read_dev(const char *path, unsigned *maj, unsigned *min)
{
	FILE *f = fopen(path, "r");
	int got;

	if (!f)
		return -1;
	got = fscanf(f, "%u:%u", maj, min);
	fclose(f);
	return got == 2 ? 0 : -1;
}

int devclass_device(const char *path, struct devclass_dev *d, char *err,
		    size_t n)
{
	struct stat st;
	char sys[96];

	if (stat(path, &st)) {
		snprintf(err, n, "device class: cannot stat %s: %s", path,
			 strerror(errno));
		return -1;
	}
	d->maj = d->alt_maj = major(st.st_dev);
	d->min = d->alt_min = minor(st.st_dev);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", d->maj, d->min);
	if (d->maj == 0 || access(sys, F_OK)) {
		snprintf(err, n,
			 "device class: %s is on device %u:%u, which is no block device (tmpfs, overlay, a btrfs subvolume?): put the file on a disk's file system, or use --device-class host",
			 path, d->maj, d->min);
		return -1;
	}
	/* a partition's parent directory in sysfs is its disk */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/partition", d->maj,
		 d->min);
	if (access(sys, F_OK) == 0) {
		snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/../dev",
			 d->maj, d->min);
		if (read_dev(sys, &d->alt_maj, &d->alt_min)) {
			snprintf(err, n,
				 "device class: cannot read %s, the disk of partition %u:%u holding %s",
				 sys, d->maj, d->min, path);
			return -1;
		}
	}
	return 0;
}

void devclass_v1_text(const struct devclass *dc, unsigned maj, unsigned min,
		      int iops, char *buf, size_t n)
{
	snprintf(buf, n, "%u:%u %" PRIu64, maj, min,
		 iops ? dc->riops : dc->rbps);
}

static void v2_value(char *buf, size_t n, uint64_t v)
{
	if (v)
		snprintf(buf, n, "%" PRIu64, v);
	else
		snprintf(buf, n, "max");
}

void devclass_v2_text(const struct devclass *dc, unsigned maj, unsigned min,
		      char *buf, size_t n)
{
	char bps[24], iops[24];

	v2_value(bps, sizeof(bps), dc->rbps);
	v2_value(iops, sizeof(iops), dc->riops);
	snprintf(buf, n, "%u:%u rbps=%s riops=%s", maj, min, bps, iops);
}

const char *devclass_label(const struct devclass *dc)
{
	return dc->name[0] ? dc->name : "host";
}
