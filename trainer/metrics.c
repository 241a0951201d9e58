/* metrics.c - JSON-lines metrics and the progress line.  Shell. */
#include "trainer/metrics.h" // defines: struct metrics, metrics_*
#include "trainer/model/model.h"   // defines: struct layer_time
#include "common/fileio.h"      // defines: fileio_open_append
#include "common/jsonb.h"       // defines: jsonb_append
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/straggler.h"   // defines: struct straggler_hit, straggler_cause_names

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int metrics_open(struct metrics *mt, const char *path, bool quiet, int64_t total_steps,
		 struct sbuf *err)
{
	/* Never through a link, never another user's file: 0600 when made. */
	int fd = fileio_open_append(path, err);

	memset(mt, 0, sizeof(*mt));
	if (fd < 0)
		return -1;
	mt->fp = fdopen(fd, "a");
	if (!mt->fp) {
		sbuf_addf(err, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	mt->tty = isatty(STDERR_FILENO);
	mt->quiet = quiet;
	mt->total_steps = total_steps;
	return 0;
}

static int flushed(struct metrics *mt)
{
	return fflush(mt->fp) || ferror(mt->fp) ? -1 : 0;
}

int metrics_step(struct metrics *mt, int64_t step, int64_t epoch, double loss, double acc,
		 double lr, double samples_per_s, double step_ms, bool show)
{
	if (!mt->fp)
		return 0;
	fprintf(mt->fp,
		"{\"event\":\"step\",\"step\":%lld,\"total_steps\":%lld,\"epoch\":%lld,"
		"\"loss\":%.9g,\"accuracy\":%.6g,\"lr\":%.9g,\"samples_per_s\":%.1f,"
		"\"step_ms\":%.3f",
		(long long)step, (long long)mt->total_steps, (long long)epoch, loss, acc, lr,
		samples_per_s, step_ms);
	if (mt->ranks) {
		if (mt->comm_ms > step_ms)
			mt->comm_ms = step_ms;
		fprintf(mt->fp, ",\"compute_ms\":%.3f,\"comm_ms\":%.3f", step_ms - mt->comm_ms,
			mt->comm_ms);
		mt->sum_comm_ms += mt->comm_ms;
		mt->sum_step_ms += step_ms;
	}
	if (mt->gpu)
		fprintf(mt->fp, ",\"copy_ms\":%.3f,\"sync_ms\":%.3f", mt->copy_ms, mt->sync_ms);
	fprintf(mt->fp, ",\"batch_hash\":\"%016llx\"", (unsigned long long)mt->batch_hash);
	if (mt->nrank_rates > 1) {
		fputs(",\"rank_samples_per_s\":[", mt->fp);
		for (int i = 0; i < mt->nrank_rates; i++)
			fprintf(mt->fp, "%s%.1f", i ? "," : "", mt->rank_rates[i]);
		fputc(']', mt->fp);
	}
	fputs("}\n", mt->fp);
	if (show && !mt->quiet) {
		if (mt->tty)
			fprintf(stderr, "\rstep %lld/%lld  epoch %lld  loss %.4f  acc %.3f  lr %.4g  %.0f samples/s\033[K",
				(long long)step, (long long)mt->total_steps, (long long)epoch + 1,
				loss, acc, lr, samples_per_s);
		else
			fprintf(stderr, "step %lld/%lld epoch %lld loss %.4f acc %.3f lr %.4g %.0f samples/s\n",
				(long long)step, (long long)mt->total_steps, (long long)epoch + 1,
				loss, acc, lr, samples_per_s);
	}
	return flushed(mt);
}

int metrics_epoch(struct metrics *mt, int64_t epoch, int64_t steps, double train_loss,
		  double train_acc, double test_loss, double test_acc, double samples_per_s)
{
	if (!mt->fp)
		return 0;
	fprintf(mt->fp,
		"{\"event\":\"epoch\",\"epoch\":%lld,\"steps\":%lld,\"train_loss\":%.9g,"
		"\"train_accuracy\":%.6g,\"test_loss\":%.9g,\"test_accuracy\":%.6g,"
		"\"samples_per_s\":%.1f}\n",
		(long long)epoch, (long long)steps, train_loss, train_acc, test_loss, test_acc,
		samples_per_s);
	if (!mt->quiet)
		fprintf(stderr, "%sepoch %lld: train loss %.4f acc %.4f, test loss %.4f acc %.4f, %.0f samples/s\n",
			mt->tty ? "\r\033[K" : "", (long long)epoch, train_loss, train_acc,
			test_loss, test_acc, samples_per_s);
	return flushed(mt);
}

int metrics_data(struct metrics *mt, const char *dataset, const char *path, bool staged,
		 uint64_t bytes, double seconds)
{
	/* the path and the data set's name may hold anything a file name
	 * may: carried escaped when not UTF-8 (a null path said nothing, and
	 * a name not UTF-8 lost the whole line) */
	json_t *o = json_pack("{s:s, s:o, s:o, s:b, s:I, s:f, s:o}", "event", "data", "dataset",
			      jsonb_text(dataset), "path", jsonb_text(path), "staged", staged, "bytes",
			      (json_int_t)bytes, "seconds", seconds, "bytes_per_s",
			      seconds > 0 ? json_real((double)bytes / seconds) : json_null());
	int rc = 0;

	if (mt->fp && (!o || json_dumpf(o, mt->fp, JSON_COMPACT | JSON_REAL_PRECISION(9)) ||
		       fputc('\n', mt->fp) == EOF))
		rc = -1;
	json_decref(o);
	return mt->fp && !rc ? flushed(mt) : rc;
}

int metrics_resume(struct metrics *mt, int64_t step, double load_s)
{
	if (!mt->fp)
		return 0;
	fprintf(mt->fp, "{\"event\":\"resume\",\"checkpoint_step\":%lld,\"load_s\":%.6f}\n",
		(long long)step, load_s);
	return flushed(mt);
}

int metrics_summary(struct metrics *mt, int64_t steps, int64_t epochs, double test_loss,
		    double test_acc, double samples_per_s, double gflops)
{
	if (!mt->fp)
		return 0;
	fprintf(mt->fp,
		"{\"event\":\"summary\",\"steps\":%lld,\"epochs\":%lld,\"test_loss\":%.9g,"
		"\"test_accuracy\":%.6g,\"mean_samples_per_s\":%.1f,\"gflops\":%.2f",
		(long long)steps, (long long)epochs, test_loss, test_acc, samples_per_s, gflops);
	if (mt->ranks) {
		double share = mt->sum_step_ms > 0 ? mt->sum_comm_ms / mt->sum_step_ms : 0;

		fprintf(mt->fp,
			",\"ranks\":%d,\"global_samples_per_s\":%.1f,\"exposed_comm_share\":%.4f,"
			"\"scaling_efficiency\":%.4f",
			mt->ranks, samples_per_s * mt->ranks, share, 1 - share);
	}
	fputs("}\n", mt->fp);
	return flushed(mt);
}

int metrics_profile(struct metrics *mt, const struct step_profile *p,
		    const struct layer_time *layers, size_t n, double samples_per_step)
{
	double per = p->steps ? 1e3 / (double)p->steps : 0, rest = p->step_s;
	json_t *a = json_array(), *o;
	int rc = 0;

	if (!mt->fp)
		return json_decref(a), 0;
	for (size_t i = 0; i < n; i++) {
		double s = layers[i].fwd_s + layers[i].bwd_s;

		rest -= s;
		jsonb_append(&a, json_pack("{s:s, s:f, s:f, s:f}", "layer", layers[i].name,
					   "forward_ms", layers[i].fwd_s * per, "backward_ms",
					   layers[i].bwd_s * per, "gflops",
					   s > 0 ? layers[i].flops * samples_per_step *
						   (double)p->steps / s * 1e-9 : 0.0));
	}
	rest -= p->data_s + p->loss_s + p->wait_s + p->update_s;
	o = json_pack("{s:s, s:I, s:f, s:o, s:f, s:f, s:f, s:f, s:f}", "event", "profile", "steps",
		      (json_int_t)p->steps, "step_ms", p->step_s * per, "layers", a, "data_ms",
		      p->data_s * per, "loss_ms", p->loss_s * per, "comm_wait_ms", p->wait_s * per,
		      "update_ms", p->update_s * per, "other_ms", rest > 0 ? rest * per : 0.0);
	if (!o || json_dumpf(o, mt->fp, JSON_COMPACT | JSON_REAL_PRECISION(6)) ||
	    fputc('\n', mt->fp) == EOF)
		rc = -1;
	json_decref(o);
	return rc ? rc : flushed(mt);
}

int metrics_straggler(struct metrics *mt, const struct straggler_hit *h, const char *node,
		      double threshold, int64_t steps, const char *action)
{
	json_t *o, *n;
	int rc = 0;

	if (!mt->fp)
		return 0;
	/* a node's name is the environment's: jansson escapes it, and one
	 * that is not UTF-8 is written as null */
	n = node && *node ? json_string(node) : NULL;
	o = json_pack("{s:s, s:I, s:i, s:o?, s:I, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:s}",
		      "event", "straggler", "step", (json_int_t)h->to, "rank", h->rank, "node",
		      n, "from_step", (json_int_t)h->from, "slower",
		      h->slower, "cause", straggler_cause_names[h->cause], "compute_ms",
		      h->compute_ms, "median_compute_ms", h->median_compute_ms, "comm_ms",
		      h->comm_ms, "median_comm_ms", h->median_comm_ms, "threshold", threshold,
		      "steps", (json_int_t)steps, "action", action);
	if (!o || json_dumpf(o, mt->fp, JSON_COMPACT | JSON_REAL_PRECISION(6)) ||
	    fputc('\n', mt->fp) == EOF)
		rc = -1;
	json_decref(o);
	return rc ? rc : flushed(mt);
}

int metrics_close(struct metrics *mt)
{
	int rc = 0;

	if (mt->fp && fclose(mt->fp))
		rc = -1;
	mt->fp = NULL;
	free(mt->rank_rates);
	mt->rank_rates = NULL;
	mt->nrank_rates = 0;
	return rc;
}
