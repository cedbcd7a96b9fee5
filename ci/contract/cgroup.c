/* resid.h, "Memory": the room is the smallest limit - usage over the
 * process's cgroup and its ancestors, siblings' usage included.
 * ci/contract.sh runs this in an unlimited cgroup under a limited one (a
 * container's or a systemd slice's shape) while a sibling uses memory.
 *
 *	cgroup FILE ANCESTOR_DIR make|refuse|fits
 * make: writes FILE (run outside the tree: its page cache would count
 * against the ancestor); refuse: a budget the ancestor cannot hold must be
 * refused with a line naming ANCESTOR_DIR; fits: a budget it can hold reads
 * every byte. */
#include "client.h"

#define LEN (24 * MiB)
#define CHUNK MiB

int main(int argc, char **argv)
{
	char err[RESID_ERRLEN] = "";
	int refuse = argc == 4 && !strcmp(argv[3], "refuse");
	int make = argc == 4 && !strcmp(argv[3], "make");

	if (argc != 4 || (!refuse && !make && strcmp(argv[3], "fits")) ||
	    (make && make_file(argv[1], LEN, 5) < 0)) {
		fprintf(stderr,
			"usage: cgroup FILE ANCESTOR_DIR make|refuse|fits\n");
		return 2;
	}
	if (make)
		return 0;
	long long usage = cgroup_usage();
	struct resid_region *r = open_file(argv[1], LEN, CHUNK,
					   refuse ? 14 * MiB : 4 * MiB, err);

	if (refuse) {
		verdict(!r && strstr(err, argv[2]) &&
				strstr(err, "an ancestor") &&
				strstr(err, "budget_bytes"),
			"ancestor limit: resid_open refuses a budget the ancestor "
			"cannot hold, naming it and the numbers",
			"%s", r ? "it opened" : err);
		resid_close(r);
		return finish();
	}
	verdict(r != NULL, "ancestor limit: a budget the ancestor holds opens",
		"%s", err);
	if (!r)
		return finish();
	uint64_t bad = 0;

	for (int pass = 0; pass < 2; pass++)
		bad += wrong_bytes(resid_base(r), LEN, 5);
	verdict(bad == 0 && resid_failure(r, NULL) == 0,
		"ancestor limit: a region that fits reads every byte right "
		"under it",
		"%llu wrong bytes (cgroup usage before: %lld)",
		(unsigned long long)bad, usage);
	resid_close(r);
	return finish();
}
