/* tests/test_power.c: the power meter (evaluators/gpu/power.c) with the NVML observer against the stand-in
 * NVML (tests/fake_nvml.c: 250 W, 1980 MHz, 40 C without the stand-in driver), by index and by PCI bus id,
 * with and without an energy counter, and the observers' messages when their library is missing; and the
 * objectives (evaluators/objective.c): parsing against a problem's Metrics, a metric (GFLOP/s of the
 * convolution) computed through the sim evaluator from the times of the real Kernel Tuner cache and checked
 * against the GFLOP/s that cache records, energy and edp from an observation's energy, and an energy
 * objective refused where no power observer can be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "evaluators/evaluator.h"
#include "evaluators/objective.h"
#include "evaluators/gpu/power.h"
#include "tests/conv_fixture.h"

static char fake_nvml[1200];

static int setup(void **state) {
  snprintf(fake_nvml, sizeof fake_nvml, "%s/tests/libfake_nvml.so", getenv("MPT_BINARY_DIR"));
  unsetenv("MPT_CUDA_DRIVER_LIB");
  return conv_fixture_setup(state, "power");
}
static int teardown(void **state) { return conv_fixture_teardown(state); }

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* a window of about ms milliseconds over 10 launches of 2 ms of kernel time each */
static void measure(mpt_power_meter *m, long ms, mpt_obs *o) {
  mpt_obs_init(o, 0);
  mpt_power_begin(m);
  nap_ms(ms);
  int n = 0;
  assert_true(mpt_power_window_ms(m, &n) >= (double)ms);
  assert_true(n >= 5); /* sampled by the thread, at 1 kHz less what a loaded machine takes */
  mpt_power_end(m, 10, 20.0, o);
}

static void test_meter_nvml(void **state) {
  (void)state;
  setenv("MPT_NVML_LIB", fake_nvml, 1);
  unsetenv("FAKE_NVML_NO_ENERGY");
  char msg[256] = "";
  mpt_power_meter *m = mpt_power_open("NVIDIA", 0, NULL, msg, sizeof msg);
  assert_non_null(m);
  assert_string_equal(mpt_power_name(m), "nvml");
  mpt_obs o;
  measure(m, 150, &o);
  assert_true(o.n_power >= 5);
  assert_true(fabs(o.power_w - 250) < 250 * 0.02); /* the energy counter's mean (whole mJ) over >= 100 ms */
  assert_true(fabs(o.energy_j - o.power_w * 2e-3) < 1e-12); /* power x the mean kernel time */
  assert_true(fabs(o.clock_mhz - 1980) < 1e-9);
  assert_true(fabs(o.temp_c - 40) < 1e-9);
  mpt_power_close(m);
}

static void test_meter_nvml_without_counter(void **state) {
  (void)state;
  setenv("MPT_NVML_LIB", fake_nvml, 1);
  setenv("FAKE_NVML_NO_ENERGY", "1", 1);
  char msg[256] = "";
  mpt_power_meter *m = mpt_power_open("NVIDIA", -1, "00000000:01:00.0", msg, sizeof msg); /* by bus id */
  assert_non_null(m);
  mpt_obs o;
  measure(m, 150, &o);
  assert_true(fabs(o.power_w - 250) < 1e-9); /* the samples' mean */
  unsetenv("FAKE_NVML_NO_ENERGY");
  measure(m, 20, &o);
  assert_true(fabs(o.power_w - 250) < 1e-9); /* a window too short for the counter: the samples' mean */
  assert_true(fabs(o.energy_j - 0.5) < 1e-9);
  mpt_power_close(m);
  unsetenv("FAKE_NVML_NO_ENERGY");
}

static void test_meter_unavailable(void **state) {
  (void)state;
  char msg[256] = "";
  setenv("MPT_NVML_LIB", fake_nvml, 1);
  assert_null(mpt_power_open("NVIDIA", 1, NULL, msg, sizeof msg)); /* the stand-in has one device */
  assert_non_null(strstr(msg, "unknown to NVML"));
  setenv("MPT_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
  assert_null(mpt_power_open("NVIDIA", 0, NULL, msg, sizeof msg));
  assert_non_null(strstr(msg, "nvml: libnvidia-ml.so.1 not found"));
  setenv("MPT_RSMI_LIB", "/nonexistent/librocm_smi64.so", 1);
  assert_null(mpt_power_open("AMD", 0, "0000:c1:00.0", msg, sizeof msg));
  assert_non_null(strstr(msg, "rocm_smi"));
  assert_null(mpt_power_open("CPU", 0, NULL, msg, sizeof msg));
  assert_non_null(strstr(msg, "no power observer for CPU devices"));
}

/* the convolution problem with a Metrics list, written to the scratch directory and loaded */
static mpt_problem *metric_problem(fixture *f, const char *metrics_json) {
  char path[1400];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", f->dir);
  cJSON *doc = NULL;
  FILE *fp = fopen(path, "r");
  assert_non_null(fp);
  char *text = calloc(1, 1 << 20);
  size_t n = fread(text, 1, (1 << 20) - 1, fp);
  fclose(fp);
  text[n] = 0;
  doc = cJSON_Parse(text);
  free(text);
  cJSON_AddItemToObject(doc, "Metrics", cJSON_Parse(metrics_json));
  char *out = cJSON_Print(doc);
  cJSON_Delete(doc);
  snprintf(path, sizeof path, "%s/conv_metrics.json", f->tmpdir);
  fp = fopen(path, "w");
  fputs(out, fp);
  fclose(fp);
  free(out);
  mpt_problem *p = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  return p;
}

#define GFLOPS "[{\"Name\": \"gflops\", \"Unit\": \"GFLOP/s\", \"Goal\": \"max\", \"Expression\": " \
               "\"4096 * 4096 * filter_height * filter_width * 2 / 1e9 / (time / 1e3)\"}]"

static void test_objective_parse(void **state) {
  fixture *f = *state;
  mpt_problem *p = metric_problem(f, GFLOPS);
  mpt_objective o;
  mpt_error err;
  mpt_error_clear(&err);
  char d[256];
  assert_int_equal(mpt_objective_parse(NULL, p, &o, &err), 0);
  assert_int_equal(o.n, 1);
  assert_int_equal(o.t[0].kind, MPT_OBJ_TIME);
  assert_string_equal(o.t[0].unit, "ms");
  assert_false(o.needs_energy);
  mpt_objective_free(&o);
  assert_int_equal(mpt_objective_parse("time,energy,gflops", p, &o, &err), 0);
  assert_int_equal(o.n, 3);
  assert_true(o.needs_energy);
  assert_true(o.t[2].maximize); /* the metric's Goal */
  assert_string_equal(o.t[2].unit, "GFLOP/s");
  mpt_objective_describe(&o, d, sizeof d);
  assert_string_equal(d, "time,energy,gflops:max");
  mpt_objective_free(&o);
  assert_int_equal(mpt_objective_parse("gflops:min", p, &o, &err), 0);
  assert_false(o.t[0].maximize);
  assert_false(o.needs_energy);
  mpt_objective_free(&o);
  assert_true(mpt_objective_parse("watts", p, &o, &err) < 0);
  assert_non_null(strstr(err.msg, "unknown objective 'watts'"));
  assert_true(mpt_objective_parse("energy:most", p, &o, &err) < 0);
  assert_non_null(strstr(err.msg, "':min' or ':max'"));
  mpt_problem_free(p);
  p = metric_problem(f, "[{\"Name\": \"bad\", \"Expression\": \"time * / 2\"}, {\"Name\": \"g\", \"Goal\": \"up\", "
                        "\"Expression\": \"time\"}]");
  assert_true(mpt_objective_parse("bad", p, &o, &err) < 0);
  assert_non_null(strstr(err.msg, "Metrics[0].Expression"));
  assert_true(mpt_objective_parse("g", p, &o, &err) < 0);
  assert_non_null(strstr(err.msg, "Metrics[1].Goal"));
  mpt_problem_free(p);
}

/* the metric through the sim evaluator on the real Kernel Tuner cache: the GFLOP/s it records */
static void test_metric_on_replay(void **state) {
  fixture *f = *state;
  mpt_problem *p = metric_problem(f, GFLOPS);
  mpt_space *s = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  char path[1400];
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A100_kerneltuner.json.gz", f->dir);
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.simulate_path = path;
  set.objective = "gflops";
  mpt_evaluator *ev = NULL;
  assert_int_equal(mpt_evaluator_open("sim", p, s, &set, &ev, &err), 0);
  /* the cache's record "16,1,1,1,0,0,0,1,15,15": 3.8753279224038124 ms, 1948.1569950129526 GFLOP/s */
  const int vals[] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15}; /* block_size_x, block_size_y, ..., filter_width */
  int64_t id = conv_fixture_id(f, vals);
  assert_true(id >= 0);
  mpt_obs o;
  assert_int_equal(mpt_evaluator_evaluate(ev, id, &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  assert_true(fabs(-o.objective - 1948.1569950129526) < 1e-6); /* maximized: minimized as its negation */
  assert_true(fabs(mpt_objective_time_ms(&o) - 3.8753279224038124) < 1e-9);
  mpt_evaluator_close(ev);
  mpt_space_free(s);
  mpt_problem_free(p);
}

static void test_energy_and_edp(void **state) {
  fixture *f = *state;
  mpt_objective o;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_objective_parse("energy,edp", f->p, &o, &err), 0);
  mpt_obs ob;
  mpt_obs_init(&ob, 0);
  ob.n_times = 2;
  ob.times[0] = 3;
  ob.times[1] = 5; /* mean 4 ms */
  ob.objective = 4;
  ob.energy_j = 0.5;
  char why[256];
  assert_true(fabs(mpt_objective_value(&o, 0, f->s, &ob, why, sizeof why) - 0.5) < 1e-12);
  assert_true(fabs(mpt_objective_value(&o, 1, f->s, &ob, why, sizeof why) - 0.002) < 1e-12);
  mpt_objective_apply(&o, f->s, &ob);
  assert_true(fabs(ob.objective - 0.5) < 1e-12);
  mpt_obs_init(&ob, 0); /* no energy measured: a failure saying why */
  ob.objective = 4;
  mpt_objective_apply(&o, f->s, &ob);
  assert_int_equal(ob.status, MPT_STATUS_RUNTIME_ERROR);
  assert_non_null(strstr(ob.reason, "no energy measured"));
  mpt_objective_free(&o);
  /* where no power observer can be, the evaluator refuses at once */
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  char path[1400];
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A100_T4.json.gz", f->dir);
  set.simulate_path = path;
  set.objective = "edp";
  mpt_evaluator *ev = NULL;
  assert_true(mpt_evaluator_open("sim", f->p, f->s, &set, &ev, &err) < 0);
  assert_non_null(strstr(err.msg, "--objective edp needs the energy of each launch: the sim evaluator has no power observer"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_meter_nvml, setup, teardown),
    cmocka_unit_test_setup_teardown(test_meter_nvml_without_counter, setup, teardown),
    cmocka_unit_test_setup_teardown(test_meter_unavailable, setup, teardown),
    cmocka_unit_test_setup_teardown(test_objective_parse, setup, teardown),
    cmocka_unit_test_setup_teardown(test_metric_on_replay, setup, teardown),
    cmocka_unit_test_setup_teardown(test_energy_and_edp, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
