/* tests/test_campaign.c: the campaign file reader (jobs/campaign/) with the real T1 problems of the shared data:
 * a campaign read into its jobs' options (paths resolved against the file's folder, seeds, logs, options,
 * budgets per class, classes; a class's tune options with its budget and replayed file), its classes checked against those present, its plan (spaces built, the
 * problem's Search and Budget blocks where the file is silent), and bad input refused with one message at the
 * file, line, column and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "jobs/campaign/campaign_file.h"
#include "jobs/campaign/campaign_plan.h"

typedef struct env {
  char data[1024];   /* $MPT_SHARED_DATA */
  char dir[256];     /* scratch folder, the campaign files' */
  char path[400];    /* the campaign file */
} env;

static int setup(void **state) {
  env *e = calloc(1, sizeof *e);
  const char *d = getenv("MPT_SHARED_DATA");
  if (!e || !d) return -1;
  snprintf(e->data, sizeof e->data, "%s", d);
  snprintf(e->dir, sizeof e->dir, "/tmp/mpt_test_campaign_XXXXXX");
  if (!mkdtemp(e->dir)) return -1;
  char link[400], target[1200];
  snprintf(link, sizeof link, "%s/conv.json", e->dir); /* a problem beside the campaign file */
  snprintf(target, sizeof target, "%s/t1/convolution_milo.json", d);
  if (symlink(target, link) != 0) return -1;
  snprintf(e->path, sizeof e->path, "%s/campaign.json", e->dir);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env *e = *state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", e->dir);
  free(e);
  return 0;
}

/* text with every "@DATA@" replaced by the shared data folder */
static void expand(const env *e, const char *text, char *out, size_t cap) {
  size_t n = 0;
  for (const char *t = text; *t && n + 1 < cap;) {
    if (strncmp(t, "@DATA@", 6) == 0) {
      n += (size_t)snprintf(out + n, cap - n, "%s", e->data);
      t += 6;
    } else {
      out[n++] = *t++;
    }
  }
  out[n] = '\0';
}

static int parse(const env *e, const char *text, mpt_campaign **c, mpt_error *err) {
  char buf[8192];
  expand(e, text, buf, sizeof buf);
  mpt_error_clear(err);
  return mpt_campaign_parse(buf, e->path, c, err);
}

static const char good[] =
    "{\"schema_version\": \"1.0\", \"name\": \"conv-six\", \"log_dir\": \"logs\", \"seed\": 7, \"time\": 900,\n"
    " \"jobs\": [\n"
    "  {\"name\": \"conv\", \"problem\": \"conv.json\", \"strategy\": \"bayes_opt\", \"budget\": {\"A100\": 300, \"*\": 220}},\n"
    "  {\"name\": \"conv-ga\", \"problem\": \"@DATA@/t1/convolution_milo.json\", \"strategy\": \"ga\",\n"
    "   \"options\": {\"popsize\": 20, \"method\": \"uniform\", \"pressure\": 0.1}, \"budget\": 100, \"classes\": [\"MI250X\"], \"seed\": 99,\n"
    "   \"log\": \"/tmp/elsewhere.h5\"},\n"
    "  {\"name\": \"gemm\", \"problem\": \"@DATA@/t1/gemm_milo.json\", \"time\": 600}\n"
    " ]}\n";

static void test_good_campaign(void **state) {
  env *e = *state;
  mpt_campaign *c;
  mpt_error err;
  int rc = parse(e, good, &c, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_string_equal(c->name, "conv-six");
  assert_int_equal(c->n_jobs, 3);
  char want[600];
  const mpt_campaign_job *j = &c->jobs[0];
  snprintf(want, sizeof want, "%s/conv.json", e->dir); /* relative to the campaign file */
  assert_string_equal(j->opts.problem, want);
  assert_string_equal(j->opts.strategy, "bo"); /* Kernel Tuner's name, ours kept */
  snprintf(want, sizeof want, "%s/logs/conv.h5", e->dir);
  assert_string_equal(j->opts.log, want);
  assert_int_equal(j->opts.seed, 7);
  assert_true(j->opts.time_budget == 900);
  assert_true(j->all_classes);
  assert_int_equal(mpt_campaign_job_budget(j, "A100"), 300);
  assert_int_equal(mpt_campaign_job_budget(j, "W6600"), 220);
  j = &c->jobs[1];
  assert_int_equal(j->opts.seed, 99);
  assert_string_equal(j->opts.log, "/tmp/elsewhere.h5");
  assert_int_equal(j->opts.n_opts, 3);
  assert_string_equal(j->opts.opts[0], "popsize=20");
  assert_string_equal(j->opts.opts[1], "method=uniform");
  assert_string_equal(j->opts.opts[2], "pressure=0.1");
  assert_int_equal(mpt_campaign_job_budget(j, "MI250X"), 100);
  assert_int_equal(mpt_campaign_job_budget(j, "A100"), -1); /* not its class */
  j = &c->jobs[2];
  assert_int_equal(j->opts.seed, 9); /* the campaign's seed + its index */
  assert_null(j->opts.strategy);     /* the problem's Search block, else random */
  assert_int_equal(mpt_campaign_job_budget(j, "A100"), 0); /* its time alone */
  assert_true(j->opts.time_budget == 600);
  const char *present[] = {"A100", "MI250X"};
  assert_int_equal(mpt_campaign_check_classes(c, present, 2, &err), 0);
  mpt_campaign_free(c);
}

/* a simulated campaign: each class's tune options carry its budget and its replayed file */
static void test_job_options_per_class(void **state) {
  env *e = *state;
  mpt_campaign *c;
  mpt_error err;
  int rc = parse(e, "{\"schema_version\": \"1.0\", \"simulate_delay\": 0.5, \"simulate\": {"
                    "\"A100\": \"@DATA@/brute-forced/convolution_A100_T4.json.gz\", "
                    "\"MI250X\": \"@DATA@/brute-forced/convolution_MI250X_T4.json.gz\"},\n"
                    "\"jobs\": [{\"name\": \"conv\", \"problem\": \"conv.json\", \"budget\": {\"A100\": 30}, "
                    "\"classes\": [\"A100\", \"MI250X\"]}]}", &c, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_job_options o;
  assert_int_equal(mpt_campaign_job_options(c, &c->jobs[0], "A100", &o), 0);
  assert_int_equal(o.budget, 30);
  assert_non_null(strstr(o.simulate, "convolution_A100_T4.json.gz"));
  assert_string_equal(o.evaluator, "sim");
  assert_true(o.simulate_delay == 0.5);
  assert_int_equal(mpt_campaign_job_options(c, &c->jobs[0], "MI250X", &o), 0);
  assert_int_equal(o.budget, -1); /* none for this class: the problem's Budget block or the time */
  assert_non_null(strstr(o.simulate, "convolution_MI250X_T4.json.gz"));
  assert_int_equal(mpt_campaign_job_options(c, &c->jobs[0], "W6600", &o), -1);
  const char *names[4];
  assert_int_equal(mpt_campaign_sim_classes(c, names, 4), 2);
  assert_string_equal(names[1], "MI250X");
  mpt_campaign_free(c);
}

static void test_unknown_class(void **state) {
  env *e = *state;
  mpt_campaign *c;
  mpt_error err;
  assert_int_equal(parse(e, good, &c, &err), 0);
  const char *present[] = {"A100", "W6600"};
  assert_int_equal(mpt_campaign_check_classes(c, present, 2, &err), MPT_ERR_NAME);
  char want[600];
  snprintf(want, sizeof want, "%s:5:97: jobs[1].classes[0]: unknown device class 'MI250X' (present: 'A100', 'W6600')",
           e->path);
  assert_string_equal(err.msg, want);
  const char *other[] = {"MI250X"};
  assert_int_equal(mpt_campaign_check_classes(c, other, 1, &err), MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, ":3:88: jobs[0].budget.A100: unknown device class 'A100'"));
  mpt_campaign_free(c);
}

/* one bad campaign: its message is exactly PATH + tail */
static void expect_bad(const env *e, const char *text, const char *tail) {
  mpt_campaign *c = NULL;
  mpt_error err;
  int rc = parse(e, text, &c, &err);
  assert_true(rc < 0);
  assert_null(c);
  char want[1200];
  snprintf(want, sizeof want, "%s%s", e->path, tail);
  if (strncmp(err.msg, want, strlen(want)) != 0) fprintf(stderr, "got:  %s\nwant: %s...\n", err.msg, want);
  assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);
}

#define HEAD "{\"schema_version\": \"1.0\",\n \"jobs\": [\n"
#define CONV "\"problem\": \"conv.json\""

static void test_bad_campaigns(void **state) {
  env *e = *state;
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"budgett\": 3}]}", ":3:50: jobs[0].budgett: unknown key; did you mean 'budget'?");
  expect_bad(e, HEAD "{\"name\": \"a\", \"problem\": \"nope.json\"}]}", ":3:26: jobs[0].problem: the problem ");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV "},\n{\"name\": \"a\", " CONV "}]}",
             ":4:10: jobs[1].name: duplicate job name 'a' (also jobs[0])");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"budget\": 2.5}]}", ":3:49: jobs[0].budget: expected an integer >= 1");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"strategy\": \"nope\"}]}", ":3:51: jobs[0].strategy: unknown strategy 'nope'");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"strategy\": \"ga\", \"options\": {\"nope\": 1}}]}",
             ":3:77: jobs[0].options.nope: strategy 'ga': unknown option 'nope'");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"options\": {\"popsize\": 4, \"popsize\": 5}}]}",
             ":3:62: jobs[0].options.popsize: key given twice in one object");
  expect_bad(e, HEAD "{\"name\": \"a/b\", " CONV "}]}", ":3:10: jobs[0].name: 'a/b': a job's name is its log's name");
  expect_bad(e, HEAD "{" CONV "}]}", ":3:1: jobs[0]: a job needs a \"name\"");
  expect_bad(e, HEAD "{\"name\": \"a\"}]}", ":3:1: jobs[0]: job 'a' needs a \"problem\"");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"classes\": [\"X\", \"X\"]}]}", ":3:56: jobs[0].classes[1]: class 'X' named twice");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"classes\": [\"X\"], \"budget\": {\"Y\": 3}}]}",
             ":3:73: jobs[0].budget.Y: a budget for class 'Y', which is not among the job's \"classes\"");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV "},\n{\"name\": \"b\", " CONV ", \"log\": \"a.h5\"}]}",
             ":4:46: jobs[1].log: jobs 'a' and 'b' would both write the log ");
  expect_bad(e, "{\"schema_version\": \"1.0\", \"sed\": 3, \"jobs\": []}", ":1:34: sed: unknown key; did you mean 'seed'?");
  expect_bad(e, "{\"schema_version\": \"1.0\", \"jobs\": []}", ":1:35: jobs: expected a non-empty list of jobs");
  expect_bad(e, "{\"schema_version\": \"2.0\", \"jobs\": []}", ":1:20: schema_version: '2.0': this mptune reads");
  expect_bad(e, "{\"jobs\": []}", ":1:1: (the document): missing \"schema_version\"");
  expect_bad(e, "{\"schema_version\": \"1.0\", \"simulate\": {\"A\": \"nope.gz\"}, \"jobs\": []}",
             ":1:45: simulate.A: the replayed file ");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ",}]}", ":3:39: malformed JSON near ']}'");
  expect_bad(e, HEAD "{\"name\": \"a\", " CONV ", \"time\": 012}]}", ":3:47: malformed JSON: a number with a leading zero");
  expect_bad(e, "{\"schema_version\": \"1.0\", \"jobs\": [], \"jobs\": []}", ":1:35: jobs: key given twice in one object");
}

static void test_plan(void **state) {
  env *e = *state;
  mpt_campaign *c;
  mpt_error err;
  assert_int_equal(parse(e, good, &c, &err), 0);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  const char *present[] = {"A100", "MI250X", "W6600"};
  int rc = mpt_campaign_plan(c, present, 3, f, &err);
  fclose(f);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(text, "job conv: "));
  assert_non_null(strstr(text, "(convolution_milo), 4362 valid configurations"));
  assert_non_null(strstr(text, "budget: A100: 300, MI250X: 220, W6600: 220 (740 evaluations in all); time 900 s per class"));
  assert_non_null(strstr(text, "strategy ga (options popsize=20,method=uniform,pressure=0.1), seed 99, log /tmp/elsewhere.h5"));
  assert_non_null(strstr(text, "budget: MI250X: 100 (100 evaluations in all)"));
  assert_non_null(strstr(text, "job gemm: "));
  assert_non_null(strstr(text, "(gemm), 116928 valid configurations"));
  free(text);
  mpt_campaign_free(c);
  /* a job without any budget: none in the file, no time, no Budget block in convolution_milo.json */
  assert_int_equal(parse(e, HEAD "{\"name\": \"a\", " CONV "}]}", &c, &err), 0);
  f = open_memstream(&text, &len);
  assert_true(mpt_campaign_plan(c, NULL, 0, f, &err) < 0);
  fclose(f);
  free(text);
  assert_non_null(strstr(err.msg, ":3:1: jobs[0]: job 'a' has no budget"));
  mpt_campaign_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_campaign),
      cmocka_unit_test(test_job_options_per_class),
      cmocka_unit_test(test_unknown_class),
      cmocka_unit_test(test_bad_campaigns),
      cmocka_unit_test(test_plan),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
