/* cmd_data.c - `hpctrain data convert`: IDX files to hpctrain shards.
 * Shell. */
#include "trainer/cmd.h"   // defines: cmd_data
#include "common/say.h" // defines: say
#include "trainer/data/data.h"  // defines: data_load_idx, data_write_shards
#include "common/exitcode.h"  // defines: enum hpt_exit
#include "common/opt.h"       // defines: struct opt, opt_next, opt_usage, opt_error
#include "common/sbuf.h"      // defines: struct sbuf, SBUF_CLIP

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_SPLIT = 256, OPT_SHARDS };

static const char *const data_usage[] = {
	"hpctrain data convert [--split <name>] [--shards <n>] --output <dir> <images> <labels>",
	NULL,
};

static const struct opt data_opts[] = {
	{ "output", required_argument, NULL, 'o', "DIR", "directory of the shards (created)" },
	{ "split", required_argument, NULL, OPT_SPLIT, "NAME",
	  "train or test: the shards' name prefix (default train)" },
	{ "shards", required_argument, NULL, OPT_SHARDS, "N", "number of shard files (default 1)" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd data_cmd = {
	.name = "data",
	.usage = data_usage,
	.summary = "Convert an IDX image file and its label file (gzip or plain) to hpctrain shards.",
	.opts = data_opts,
};

int cmd_data(int argc, char **argv)
{
	const char *out = NULL, *split = "train";
	struct sbuf err = SBUF_INIT;
	struct dataset d = { 0 };
	long nshards = 1;
	char *end;
	int c, st;

	opt_reset();
	while ((c = opt_next(&data_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_SPLIT:
			split = optarg;
			if (strcmp(split, "train") && strcmp(split, "test"))
				return opt_error(&data_cmd, "--split: expected train or test, got \"%s\"",
						 SBUF_CLIP(split));
			break;
		case OPT_SHARDS:
			errno = 0;
			nshards = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || nshards < 1 || nshards > 100000)
				return opt_error(&data_cmd, "--shards: expected an integer 1..100000, got \"%s\"",
						 SBUF_CLIP(optarg));
			break;
		case 'h':
			opt_usage(stdout, &data_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind >= argc || strcmp(argv[optind], "convert"))
		return opt_error(&data_cmd, optind >= argc ? "no subcommand given" :
				 "unknown subcommand '%s'", argv[optind]);
	if (argc - optind != 3)
		return opt_error(&data_cmd, "convert takes an image file and a label file");
	if (opt_check_operands(&data_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	if (!out)
		return opt_error(&data_cmd, "convert needs --output <dir>");
	st = data_load_idx(&d, argv[optind + 1], argv[optind + 2], &err);
	if (!st && d.n < nshards) {
		sbuf_addf(&err, "%s: %lld samples cannot fill %ld shards", argv[optind + 1],
			  (long long)d.n, nshards);
		st = HPT_EXIT_USAGE;
	}
	if (!st)
		st = data_write_shards(&d, out, split, (int)nshards, &err);
	if (st)
		say("%s", err.buf);
	else
		printf("%s: %lld samples of %dx%dx%d in %ld %s shard%s\n", out, (long long)d.n, d.h,
		       d.w, d.c, nshards, split, nshards > 1 ? "s" : "");
	dataset_release(&d);
	sbuf_release(&err);
	return st;
}
