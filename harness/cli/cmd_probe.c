/* residctl probe: the kernel manifest, and whether the pager can run. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/cli.h"
#include "cli/probe.h"
#include "rev.h"
#include "seam.h"

static const char about[] =
	"  Prints the kernel release, userfaultfd features and ioctls, the\n"
	"  memory cgroup (version, directory, limits), swap, THP settings, and\n"
	"  says whether the pager can run here and, if not, why: it makes and\n"
	"  removes a child memory cgroup as the gate's scenarios do, and reports\n"
	"  the condition that forbids swap in it (I-3).\n"
	"  Exit 0 when it can, 1 when it cannot.\n";

/* Huge folios in B: which source this machine offers a region whose
 * chunks all start on a multiple of the folio, and how to enable one. */
static void huge_folios(const struct probe *p)
{
	const char *memfd = strcmp(p->shmem_pmd, "inherit") && p->shmem_pmd[0] ?
				    p->shmem_pmd :
				    p->shmem_thp;
	int by_memfd = !strcmp(memfd, "always") ||
		       !strcmp(memfd, "within_size") ||
		       !strcmp(memfd, "advise") || !strcmp(memfd, "force");

	if (!p->pmd) {
		printf("huge folios in B  no: the kernel has no transparent huge "
		       "pages (4 KiB pages, as always)\n");
		return;
	}
	printf("huge folios in B  for regions whose chunks start on multiples "
	       "of %" PRIu64 " KiB:\n",
	       p->pmd >> 10);
	printf("  memfd           %s (shmem_enabled [%s], its %" PRIu64
	       " KiB size [%s])\n",
	       by_memfd ? "yes" : "no", p->shmem_thp, p->pmd >> 10,
	       p->shmem_pmd[0] ? p->shmem_pmd : "-");
	printf("  tmpfs huge=     %s\n", p->huge_tmpfs ?
						 "yes: a tmpfs with "
						 "huge= can be mounted here" :
						 p->huge_why);
	if (by_memfd)
		return;
	printf("  to enable       mkdir -p /mnt/resid-huge && mount -t tmpfs -o "
	       "huge=within_size,size=<budget> none /mnt/resid-huge, then\n"
	       "                  resid_config.huge_dir = \"/mnt/resid-huge\" "
	       "(residctl bench fetch --huge-dir /mnt/resid-huge);\n"
	       "                  or, for every memfd of the machine: echo "
	       "advise > /sys/kernel/mm/transparent_hugepage/shmem_enabled\n");
}

int cmd_probe(int argc, char **argv)
{
	struct probe p;
	char line[512];
	int json = 0;
	struct cli_opt opts[] = {
		{ "json", CLI_FLAG, &json,
		  .help = "print the manifest as JSON" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "probe",
				       .about = about,
				       .opts = opts };
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	probe_run(&p);
	if (json) {
		char buf[2048];

		if (probe_json(&p, buf, sizeof(buf)) < 0)
			return 1;
		puts(buf);
		return p.can_run ? 0 : 1;
	}
	printf("kernel            %s\n", p.release);
	if (p.uffd_ok) {
		char names[512];

		probe_feature_names(&p, names, sizeof(names));
		printf("userfaultfd       features %#" PRIx64 ": %s\n",
		       p.features, names);
		probe_ioctl_names(&p, names, sizeof(names));
		printf("                  ioctls %#" PRIx64 ": %s\n", p.ioctls,
		       names);
	} else
		printf("userfaultfd       unavailable: %s\n", p.uffd_error);
	printf("  missing_shmem   %s\n  minor_shmem     %s\n",
	       p.features & UFFD_FEATURE_MISSING_SHMEM ? "yes" : "no",
	       p.features & UFFD_FEATURE_MINOR_SHMEM ? "yes" : "no");
	printf("  poison          %s\n",
	       p.features & UFFD_FEATURE_POISON ?
		       "yes: a failed chunk is poisoned, the kernel raises SIGBUS" :
		       "no: a failed chunk's faulting thread gets tgkill(SIGBUS)");
	printf("/dev/userfaultfd  %s\n",
	       p.dev_userfaultfd ? "present" : "absent");
	printf("vm.unprivileged_userfaultfd %s\n", p.unprivileged);
	if (cg_describe(&p.cg, line, sizeof(line)) == 0)
		printf("memory cgroup     %s\n", line);
	if (p.swap_cond < 0)
		printf("swap              %s\n",
		       p.swap_why[0] ? p.swap_why : "not checked");
	else
		printf("swap              %s in the scenarios' cgroups\n",
		       cg_swap_cond_name(p.swap_cond));
	printf("THP               enabled [%s], shmem_enabled [%s]\n", p.thp,
	       p.shmem_thp);
	huge_folios(&p);
	printf("revision          %s\n", RESID_REV);
	printf("can the pager run here? %s\n", p.verdict);
	return p.can_run ? 0 : 1;
}
