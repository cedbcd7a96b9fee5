/* resid.h, "Errors" and fetch_workers: NULL pointers get an error or a
 * neutral value, never a crash; fetch_workers 0 lets the budget choose,
 * and resid_stats and the manifest say what it chose.
 *
 *	api FILE */
#include "client.h"

#define LEN (8 * MiB)

static int nulls_refused(void)
{
	struct resid_config c;
	struct resid_stats s;
	enum resid_policy p;
	char err[RESID_ERRLEN] = "", buf[32];
	uint64_t off, len;
	uint32_t chunk;

	resid_config_init(&c);
	resid_config_init(NULL);
	resid_close(NULL);
	return resid_open(&c, NULL) == NULL && resid_open(NULL, err) == NULL &&
	       strstr(err, "cfg") && resid_headroom(NULL) == 0 &&
	       resid_base(NULL) == NULL && resid_len(NULL) == 0 &&
	       resid_nchunks(NULL) == 0 &&
	       resid_chunk_of(NULL, 0) == RESID_NO_CHUNK &&
	       resid_chunk_range(NULL, 0, &off, &len) == -EINVAL &&
	       resid_notify_access(NULL, 0) == -EINVAL &&
	       resid_failure(NULL, &chunk) == -EINVAL &&
	       resid_get_stats(NULL, &s) == -EINVAL &&
	       resid_manifest_json(NULL, buf, sizeof(buf)) == -EINVAL &&
	       resid_policy_parse(NULL, &p) == -1;
}

/* The workers the budget chose, as the stats and the manifest say. */
static void workers_chosen(const char *path, uint64_t budget, unsigned want)
{
	char err[RESID_ERRLEN], json[4096], key[64];
	struct resid_stats s = { 0 };
	struct resid_region *r = open_file(path, LEN, 64 << 10, budget, err);

	if (!r) {
		verdict(0,
			"fetch_workers 0: the budget chooses, and the stats "
			"and manifest say it",
			"%s", err);
		return;
	}
	resid_get_stats(r, &s);
	snprintf(key, sizeof(key), "\"fetch_workers\":%u,", want);
	int ok = resid_manifest_json(r, json, sizeof(json)) == 0 &&
		 strstr(json, key) &&
		 strstr(json, "\"fetch_workers_chosen_by\":\"budget\"") &&
		 s.fetch_workers == want;

	verdict(ok,
		want == 1 ?
			"fetch_workers 0: a small budget gets one "
			"worker, said in the stats and manifest" :
			"fetch_workers 0: "
			"a large budget gets four workers, said in the stats and "
			"manifest",
		"stats say %llu, manifest %s",
		(unsigned long long)s.fetch_workers, json);
	resid_close(r);
}

int main(int argc, char **argv)
{
	if (argc != 2 || make_file(argv[1], LEN, 19) < 0) {
		fprintf(stderr, "usage: api FILE\n");
		return 2;
	}
	verdict(nulls_refused(),
		"errors: NULL pointers get an error or a "
		"neutral value, never a crash",
		"a call answered as if valid");
	workers_chosen(argv[1], 2 * MiB, 1);
	workers_chosen(argv[1], 64 * MiB, 4);
	return finish();
}
