/* The throttle of a scope: v1 blkio.throttle.* in a blkio cgroup of its
 * own, v2 io.max in the memory cgroup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup_io.h"
#include "cgroup/cgroup_procs.h"
#include "seam.h"

#define BUSY_TRIES 200

static int fits(int w, size_t n)
{
	return w >= 0 && (size_t)w < n;
}

typedef void (*rule_text)(const struct devclass *dc, unsigned maj, unsigned min,
			  int iops, char *buf, size_t n);

static void v2_text(const struct devclass *dc, unsigned maj, unsigned min,
		    int iops, char *buf, size_t n)
{
	(void)iops;
	devclass_v2_text(dc, maj, min, buf, n);
}

/* Writes the rule for the device, its disk when the kernel refuses the
 * partition. 0, or -errno of the last try. */
static int write_rule(const char *path, rule_text text, int iops,
		      const struct devclass *dc, const struct devclass_dev *dev)
{
	char rule[96];
	int rc;

	text(dc, dev->maj, dev->min, iops, rule, sizeof(rule));
	rc = cg_write_str(path, rule);
	if (rc && (dev->alt_maj != dev->maj || dev->alt_min != dev->min)) {
		text(dc, dev->alt_maj, dev->alt_min, iops, rule, sizeof(rule));
		rc = cg_write_str(path, rule);
	}
	return rc;
}

static int has_io(const char *file, char *err, size_t n)
{
	char text[512];
	long got = resid_seam_linux.read_text(resid_seam_linux.ctx, file, text,
					      sizeof(text));

	if (got < 0) {
		snprintf(err, n, "device class: %s: %s", file,
			 strerror((int)-got));
		return -1;
	}
	for (char *save = NULL, *w = strtok_r(text, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, "io"))
			return 1;
	return 0;
}

static int enter_v2(struct cg_io_slot *io, const struct cg_memory *mem,
		    const char *parent_dir, const struct devclass *dc,
		    const struct devclass_dev *dev, char *err, size_t n)
{
	char ctl[CG_PATH_MAX + 32], max[CG_PATH_MAX + 16];
	int rc;

	snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", parent_dir);
	rc = has_io(ctl, err, n);
	if (rc <= 0) {
		if (!rc)
			snprintf(err, n,
				 "device class: no io controller in %s: enable io in its parent's cgroup.subtree_control, or use --device-class host",
				 ctl);
		return -1;
	}
	if (!fits(snprintf(io->subtree_ctl, sizeof(io->subtree_ctl),
			   "%s/cgroup.subtree_control", parent_dir),
		  sizeof(io->subtree_ctl)) ||
	    !fits(snprintf(max, sizeof(max), "%s/io.max", mem->dir),
		  sizeof(max))) {
		snprintf(err, n, "device class: path below %s too long",
			 parent_dir);
		return -1;
	}
	rc = has_io(io->subtree_ctl, err, n);
	if (rc < 0)
		return -1;
	if (!rc) {
		io->subtree = 1;
		rc = cg_write_str(io->subtree_ctl, "+io");
		if (rc) {
			io->subtree = 0;
			snprintf(err, n, "device class: writing +io to %s: %s",
				 io->subtree_ctl, strerror(-rc));
			return -1;
		}
	}
	rc = write_rule(max, v2_text, 0, dc, dev);
	if (rc) {
		snprintf(err, n,
			 "device class: writing %u:%u to %s: %s: the kernel refuses to throttle this device",
			 dev->alt_maj, dev->alt_min, max, strerror(-rc));
		return -1;
	}
	return 0;
}

static int enter_v1(struct cg_io_slot *io, pid_t pid, const char *tag,
		    const struct devclass *dc, const struct devclass_dev *dev,
		    char *err, size_t n)
{
	static const char *const file[2] = { "blkio.throttle.read_bps_device",
					     "blkio.throttle.read_iops_device" };
	struct cg_memory *blk = malloc(sizeof(*blk));
	struct cg_env env;
	char path[CG_PATH_MAX + 48], pidstr[16];
	int rc = -1;

	cg_env_init(&env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	if (!blk) {
		snprintf(err, n, "device class: out of memory");
		return -1;
	}
	rc = cg_find_v1(&env, "blkio", blk, err, n);
	if (rc == 1)
		snprintf(err, n,
			 "device class: no blkio controller mounted (%s): mount -t cgroup -o blkio blkio /sys/fs/cgroup/blkio, or use --device-class host",
			 env.mountinfo);
	if (rc)
		goto out;
	rc = -1;
	if (!fits(snprintf(io->dir, sizeof(io->dir), "%s/residctl-%d-%s",
			   blk->dir, (int)pid, tag),
		  sizeof(io->dir)) ||
	    !fits(snprintf(io->procs, sizeof(io->procs), "%s/cgroup.procs",
			   io->dir),
		  sizeof(io->procs)) ||
	    !fits(snprintf(io->back, sizeof(io->back), "%s/cgroup.procs",
			   blk->dir),
		  sizeof(io->back))) {
		snprintf(err, n, "device class: path below %s too long",
			 blk->dir);
		goto out;
	}
	if (mkdir(io->dir, 0755)) {
		snprintf(err, n, "device class: mkdir %s: %s%s", io->dir,
			 strerror(errno),
			 errno == EACCES || errno == EPERM ? ": run as root" :
							     "");
		goto out;
	}
	io->made = 1;
	for (int k = 0; k < 2; k++) {
		int e;

		if (!(k ? dc->riops : dc->rbps))
			continue;
		snprintf(path, sizeof(path), "%s/%s", io->dir, file[k]);
		e = write_rule(path, devclass_v1_text, k, dc, dev);
		if (e) {
			snprintf(err, n,
				 "device class: writing %u:%u to %s: %s: the kernel refuses to throttle this device",
				 dev->alt_maj, dev->alt_min, path,
				 strerror(-e));
			goto out;
		}
	}
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	io->moved = 1;
	rc = cg_write_str(io->procs, pidstr);
	if (rc)
		snprintf(err, n, "device class: moving the process into %s: %s",
			 io->dir, strerror(-rc));
out:
	free(blk);
	return rc ? -1 : 0;
}

int cg_io_enter(struct cg_io_slot *io, const struct cg_memory *mem,
		const char *parent_dir, pid_t pid, const char *tag,
		const struct devclass *dc, const struct devclass_dev *dev,
		char *err, size_t n)
{
	io->version = mem->version;
	if (mem->version == CG_V2)
		return enter_v2(io, mem, parent_dir, dc, dev, err, n);
	return enter_v1(io, pid, tag, dc, dev, err, n);
}

int cg_io_release_subtree(struct cg_io_slot *io)
{
	int rc;

	if (!io->subtree)
		return 0;
	rc = cg_write_str(io->subtree_ctl, "-io");
	if (!rc)
		io->subtree = 0;
	return rc;
}

int cg_io_remove(struct cg_io_slot *io)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int rc;

	if (io->moved) {
		rc = cg_empty_into(io->procs, io->back);
		if (rc && rc != -ENOENT)
			return rc;
		io->moved = 0;
	}
	for (int i = 0; io->made && i < BUSY_TRIES; i++) {
		if (rmdir(io->dir) == 0 || errno == ENOENT) {
			io->made = 0;
			return 0;
		}
		if (errno != EBUSY)
			return -errno;
		nanosleep(&pause, NULL); /* a reaped child's reference */
	}
	return io->made ? -EBUSY : 0;
}
