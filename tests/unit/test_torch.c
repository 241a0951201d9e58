/* test_torch.c - the trainer against PyTorch: forward, backward and five
 * optimizer steps of the cnn, batch norm, a strided convolution, pooling
 * and the losses, compared with the fixtures that
 * tests/torch/make_fixtures.py wrote with python3-torch (fp32). */
#include "tests/unit/trainlib.h"
#include "trainer/cpu/backend.h"
#include "trainer/kernels/kernels.h"
#include "trainer/model/layer.h"
#include "trainer/model/model.h"
#include "trainer/model/optim.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"

static int setup_backend(void **state)
{
	struct sbuf err = SBUF_INIT;
	int rc = backend_init(1, &err);

	(void)state;
	sbuf_release(&err);
	return rc;
}

/* The parameterised layers of a sequential model, in forward order. */
static size_t param_layers(struct model *m, struct layer **out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->net.n; i++)
		if (m->net.v[i].nw)
			out[n++] = &m->net.v[i];
	return n;
}

static const char *const cnn_names[] = { "conv1", "conv2", "fc1", "fc2" };

static void load_cnn(struct model *m, const struct fixture_file *ff, const char *prefix)
{
	struct layer *pl[8];
	char name[64];

	assert_int_equal(param_layers(m, pl), 4);
	for (int i = 0; i < 4; i++) {
		const struct fixture *w, *b;

		snprintf(name, sizeof(name), "%s.%s.weight", prefix, cnn_names[i]);
		w = fixture_get(ff, name);
		snprintf(name, sizeof(name), "%s.%s.bias", prefix, cnn_names[i]);
		b = fixture_get(ff, name);
		assert_int_equal(w->n, pl[i]->nw);
		assert_int_equal(b->n, pl[i]->nb);
		memcpy(pl[i]->w, w->data, w->n * 4);
		memcpy(pl[i]->b, b->data, b->n * 4);
	}
}

static void check_cnn_params(struct model *m, const struct fixture_file *ff, const char *prefix,
			     int grads, double atol, double rtol)
{
	struct layer *pl[8];
	char name[64];

	param_layers(m, pl);
	for (int i = 0; i < 4; i++) {
		const struct fixture *w, *b;

		snprintf(name, sizeof(name), "%s.%s.weight", prefix, cnn_names[i]);
		w = fixture_get(ff, name);
		snprintf(name, sizeof(name), "%s.%s.bias", prefix, cnn_names[i]);
		b = fixture_get(ff, name);
		assert_close(grads ? pl[i]->dw : pl[i]->w, w->data, w->n, atol, rtol);
		assert_close(grads ? pl[i]->db : pl[i]->b, b->data, b->n, atol, rtol);
	}
}

static void build_cnn(struct model *m, const struct fixture_file *ff, int32_t *labels)
{
	const struct fixture *x = fixture_get(ff, "x_nhwc"), *y = fixture_get(ff, "labels");
	struct sbuf err = SBUF_INIT;
	struct shape in = { (int)x->dims[0], (int)x->dims[1], (int)x->dims[2], (int)x->dims[3] };

	if (model_build(m, MODEL_CNN, in, 10, LOSS_XENT, BE_FP32, &err))
		fail_msg("model_build: %s", err.buf);
	sbuf_release(&err);
	for (int i = 0; i < in.n; i++)
		labels[i] = (int32_t)y->data[i];
}

static void torch__cnn_forward_and_backward_match_pytorch(void **state)
{
	struct fixture_file ff;
	struct model m;
	struct sbuf err = SBUF_INIT;
	int32_t labels[64];
	int64_t right;
	float loss;

	(void)state;
	fixture_load(&ff, "cnn.bin");
	build_cnn(&m, &ff, labels);
	load_cnn(&m, &ff, "init");
	assert_int_equal(model_forward(&m, fixture_get(&ff, "x_nhwc")->data, true, 0, &err), 0);
	assert_close(model_logits(&m), fixture_get(&ff, "logits")->data, 80, 1e-5, 1e-4);
	loss = (float)model_loss(&m, labels, NULL, &right);
	assert_close(&loss, fixture_get(&ff, "loss")->data, 1, 1e-6, 1e-5);
	assert_int_equal(model_backward(&m, NULL, &err), 0);
	check_cnn_params(&m, &ff, "grad", 1, 1e-6, 1e-3);
	model_release(&m);
	fixture_release(&ff);
	sbuf_release(&err);
}

static void run_steps(const char *name, struct job_optimizer spec)
{
	struct fixture_file ff;
	struct model m;
	struct optim o;
	struct sbuf err = SBUF_INIT;
	int32_t labels[64];
	int64_t right;
	float losses[5];
	char prefix[32];

	fixture_load(&ff, "cnn.bin");
	build_cnn(&m, &ff, labels);
	load_cnn(&m, &ff, "init");
	assert_int_equal(optim_init(&o, &spec, m.narena, 1, 100, 1), 0);
	for (int s = 0; s < 5; s++) {
		assert_int_equal(model_forward(&m, fixture_get(&ff, "x_nhwc")->data, true, 0, &err), 0);
		losses[s] = (float)model_loss(&m, labels, NULL, &right);
		assert_int_equal(model_backward(&m, NULL, &err), 0);
		optim_update(&o, m.params, m.grads, 0, m.narena, optim_lr(&o, s));
		optim_tick(&o);
	}
	snprintf(prefix, sizeof(prefix), "%s.losses", name);
	assert_close(losses, fixture_get(&ff, prefix)->data, 5, 1e-5, 1e-4);
	check_cnn_params(&m, &ff, name, 0, 2e-5, 1e-4);
	optim_release(&o);
	model_release(&m);
	fixture_release(&ff);
	sbuf_release(&err);
}

static void torch__five_sgd_momentum_steps_match_pytorch(void **state)
{
	struct job_optimizer spec = { .name = OPTIMIZER_SGD, .lr = 0.05, .momentum = 0.9,
				      .weight_decay = 1e-4 };

	(void)state;
	run_steps("sgd", spec);
}

static void torch__five_nesterov_steps_match_pytorch(void **state)
{
	struct job_optimizer spec = { .name = OPTIMIZER_SGD, .lr = 0.05, .momentum = 0.9,
				      .nesterov = true };

	(void)state;
	run_steps("nesterov", spec);
}

static void torch__five_adamw_steps_match_pytorch(void **state)
{
	struct job_optimizer spec = { .name = OPTIMIZER_ADAMW, .lr = 1e-3, .weight_decay = 0.01,
				      .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 };

	(void)state;
	run_steps("adamw", spec);
}

static void torch__batchnorm_matches_pytorch_in_train_and_eval(void **state)
{
	struct fixture_file ff;
	const struct fixture *x;
	struct seq s = { 0 };
	struct layer *l;
	struct sbuf err = SBUF_INIT;
	float params[2 * ARENA_ALIGN], grads[2 * ARENA_ALIGN], running[6], dx[300];
	size_t off = 0, soff = 0;

	(void)state;
	fixture_load(&ff, "batchnorm.bin");
	x = fixture_get(&ff, "x_nhwc");
	l = seq_push(&s, LAYER_BATCHNORM, (struct shape){ 4, 5, 5, 3 });
	l->eps = 1e-5;
	l->momentum = 0.1;
	layer_assign(l, params, grads, &off, running, &soff);
	memcpy(l->w, fixture_get(&ff, "gamma")->data, 12);
	memcpy(l->b, fixture_get(&ff, "beta")->data, 12);
	for (int c = 0; c < 3; c++)
		running[c] = 0, running[3 + c] = 1;
	assert_int_equal(seq_setup(&s, &err), 0);
	assert_int_equal(seq_forward(&s, x->data, true, 0, &err), 0);
	assert_close(seq_output(&s), fixture_get(&ff, "y_nhwc")->data, 300, 1e-5, 1e-4);
	assert_int_equal(seq_backward(&s, fixture_get(&ff, "dy_nhwc")->data, dx, NULL, &err), 0);
	assert_close(dx, fixture_get(&ff, "dx_nhwc")->data, 300, 1e-5, 1e-4);
	assert_close(l->dw, fixture_get(&ff, "dgamma")->data, 3, 1e-5, 1e-4);
	assert_close(l->db, fixture_get(&ff, "dbeta")->data, 3, 1e-5, 1e-4);
	assert_close(running, fixture_get(&ff, "running_mean")->data, 3, 1e-6, 1e-5);
	assert_close(running + 3, fixture_get(&ff, "running_var")->data, 3, 1e-6, 1e-5);
	assert_int_equal(seq_forward(&s, x->data, false, 0, &err), 0);
	assert_close(seq_output(&s), fixture_get(&ff, "y_eval_nhwc")->data, 300, 1e-5, 1e-4);
	seq_release(&s);
	fixture_release(&ff);
	sbuf_release(&err);
}

static void torch__strided_convolution_matches_pytorch(void **state)
{
	struct fixture_file ff;
	struct conv_geom g = { 3, 9, 9, 5, 7, 3, 3, 2, 1, 0, 0 };
	struct be_conv *cv;
	struct sbuf err = SBUF_INIT;
	float y[3 * 5 * 5 * 7], dx[3 * 9 * 9 * 5], dw[7 * 5 * 9], db[7], dy[3 * 5 * 5 * 7];

	(void)state;
	fixture_load(&ff, "conv_s2.bin");
	conv_geom_finish(&g);
	cv = be_conv_create(&g, BE_NEED_DX, BE_FP32, &err);
	assert_non_null(cv);
	assert_int_equal(be_conv_forward(cv, fixture_get(&ff, "x_nhwc")->data, fixture_get(&ff, "w")->data,
					 fixture_get(&ff, "b")->data, y, &err), 0);
	assert_close(y, fixture_get(&ff, "y_nhwc")->data, sizeof(y) / 4, 1e-5, 1e-4);
	memcpy(dy, fixture_get(&ff, "dy_nhwc")->data, sizeof(dy));
	assert_int_equal(be_conv_backward(cv, fixture_get(&ff, "x_nhwc")->data, dy, dx, dw, db, &err), 0);
	assert_close(dx, fixture_get(&ff, "dx_nhwc")->data, sizeof(dx) / 4, 1e-5, 1e-4);
	assert_close(dw, fixture_get(&ff, "dw")->data, sizeof(dw) / 4, 1e-5, 1e-4);
	assert_close(db, fixture_get(&ff, "db")->data, 7, 1e-5, 1e-4);
	be_conv_free(cv);
	fixture_release(&ff);
	sbuf_release(&err);
}

static void torch__max_then_global_average_pooling_match_pytorch(void **state)
{
	struct fixture_file ff;
	struct seq s = { 0 };
	struct layer *l;
	struct sbuf err = SBUF_INIT;
	float dx[2 * 8 * 8 * 4], dy[8];

	(void)state;
	fixture_load(&ff, "pool.bin");
	l = seq_push(&s, LAYER_MAXPOOL, (struct shape){ 2, 8, 8, 4 });
	l->k = l->stride = 2;
	l->out = (struct shape){ 2, 4, 4, 4 };
	l = seq_push(&s, LAYER_AVGPOOL, (struct shape){ 2, 4, 4, 4 });
	l->k = 4;
	l->stride = 1;
	l->out = (struct shape){ 2, 1, 1, 4 };
	assert_int_equal(seq_setup(&s, &err), 0);
	assert_int_equal(seq_forward(&s, fixture_get(&ff, "x_nhwc")->data, true, 0, &err), 0);
	assert_close(seq_output(&s), fixture_get(&ff, "y_nhwc")->data, 8, 1e-6, 1e-5);
	memcpy(dy, fixture_get(&ff, "dy_nhwc")->data, sizeof(dy));
	assert_int_equal(seq_backward(&s, dy, dx, NULL, &err), 0);
	assert_close(dx, fixture_get(&ff, "dx_nhwc")->data, sizeof(dx) / 4, 1e-6, 1e-5);
	seq_release(&s);
	fixture_release(&ff);
	sbuf_release(&err);
}

static void torch__losses_match_pytorch(void **state)
{
	struct fixture_file ff;
	float dz[64], loss;
	int32_t labels[8];
	int64_t right;

	(void)state;
	fixture_load(&ff, "loss.bin");
	loss = (float)sigmoid_bce_f32(16, 1, fixture_get(&ff, "bce.z")->data,
				      fixture_get(&ff, "bce.t")->data, dz, &right);
	assert_close(&loss, fixture_get(&ff, "bce.loss")->data, 1, 1e-6, 1e-5);
	assert_close(dz, fixture_get(&ff, "bce.dz")->data, 16, 1e-7, 1e-5);
	loss = (float)sigmoid_bce_f32(8, 5, fixture_get(&ff, "multi.z")->data,
				      fixture_get(&ff, "multi.t")->data, dz, &right);
	assert_close(&loss, fixture_get(&ff, "multi.loss")->data, 1, 1e-6, 1e-5);
	assert_close(dz, fixture_get(&ff, "multi.dz")->data, 40, 1e-7, 1e-5);
	for (int i = 0; i < 8; i++)
		labels[i] = (int32_t)fixture_get(&ff, "xent.labels")->data[i];
	loss = (float)softmax_xent_f32(8, 6, fixture_get(&ff, "xent.z")->data, labels, dz, &right);
	assert_close(&loss, fixture_get(&ff, "xent.loss")->data, 1, 1e-6, 1e-5);
	assert_close(dz, fixture_get(&ff, "xent.dz")->data, 48, 1e-7, 1e-5);
	fixture_release(&ff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch__cnn_forward_and_backward_match_pytorch),
		cmocka_unit_test(torch__five_sgd_momentum_steps_match_pytorch),
		cmocka_unit_test(torch__five_nesterov_steps_match_pytorch),
		cmocka_unit_test(torch__five_adamw_steps_match_pytorch),
		cmocka_unit_test(torch__batchnorm_matches_pytorch_in_train_and_eval),
		cmocka_unit_test(torch__strided_convolution_matches_pytorch),
		cmocka_unit_test(torch__max_then_global_average_pooling_match_pytorch),
		cmocka_unit_test(torch__losses_match_pytorch),
	};

	return cmocka_run_group_tests(tests, setup_backend, NULL);
}
