/* Device classes: the backing file's block device held to the read rate of
 * a class of drive by the run's cgroup (v1 blkio.throttle.read_bps_device
 * and read_iops_device, v2 io.max), so a benchmark or `residctl run` on a
 * fast host disk shows what a SATA or NVMe drive would give. */
#ifndef HARNESS_CGROUP_DEVCLASS_H
#define HARNESS_CGROUP_DEVCLASS_H

#include <stddef.h>
#include <stdint.h>

struct devclass {
	char name[32];  /* "host", "sata", ..., or the RATE[,IOPS] given */
	uint64_t rbps;  /* bytes/s; 0: no limit */
	uint64_t riops; /* reads/s; 0: no limit */
};

/* The forms accepted, for help text and errors. */
#define DEVCLASS_FORMS                             \
	"host, sata, nvme3, nvme4 or RATE[,IOPS] " \
	"(RATE bytes/s with K, M, G = 1024^n; IOPS with K, M = 1000^n)"

/* host (no limit), a named class, or RATE[,IOPS]. 0, or -1 with one line
 * in err naming s and the accepted forms. */
int devclass_parse(const char *s, struct devclass *dc, char *err, size_t n);

static inline int devclass_throttles(const struct devclass *dc)
{
	return dc->rbps || dc->riops;
}

/* --device-class for cli_parse (a CLI_CALL into a struct devclass). */
int devclass_cli(void *dst, const char *where, const char *v, char *err,
		 size_t n);
#define DEVCLASS_OPT(dc)                                                                         \
	{                                                                                        \
		"device-class", CLI_CALL, (dc),                                                  \
			.arg = "CLASS", .parse = devclass_cli,                                   \
			.help = "hold reads to host|sata|nvme3|nvme4|RATE[,IOPS] (default host)" \
	}

/* The block device a throttle for path's reads is written for: the disk
 * holding st_dev (a partition's own MAJ:MIN first, its whole disk as
 * fallback in alt; alt equals dev when st_dev is a whole disk). -1 with one
 * line in err when the file has no block device (tmpfs, overlay, a btrfs
 * subvolume's anonymous device). */
struct devclass_dev {
	unsigned maj, min;         /* st_dev */
	unsigned alt_maj, alt_min; /* its whole disk */
};
int devclass_device(const char *path, struct devclass_dev *d, char *err,
		    size_t n);

/* The throttle's file texts for MAJ:MIN: v1 "MAJ:MIN N" for each of
 * read_bps_device and read_iops_device (the value 0 removes a rule), v2
 * io.max "MAJ:MIN rbps=N riops=N" ("max" where dc sets none). */
void devclass_v1_text(const struct devclass *dc, unsigned maj, unsigned min,
		      int iops, char *buf, size_t n);
void devclass_v2_text(const struct devclass *dc, unsigned maj, unsigned min,
		      char *buf, size_t n);

/* The class as one word for tables and CSV columns. */
const char *devclass_label(const struct devclass *dc);

#endif
