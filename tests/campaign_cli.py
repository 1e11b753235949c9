#!/usr/bin/python3
"""tests/campaign_cli.py: `mptune campaign FILE --check` end to end with the shared data's T1 problems, and the
campaign schema (docs/campaign-1.0.json): a good campaign validates against the schema and its plan is printed
(spaces' sizes, budgets per class, seeds, logs), nothing written; bad campaigns are refused by mptune with one
message "FILE:LINE:COL: FIELD: why" (LINE:COL that of the offending value) and a non-zero exit, and the schema
refuses those it can express; --classes checks the classes the jobs name; --check is required.
Env (from ctest): MPTUNE, MPT_SHARED_DATA, MPT_SOURCE_DIR."""
import json, os, subprocess, sys, tempfile
import jsonschema

MPTUNE, DATA, SRC = os.environ["MPTUNE"], os.environ["MPT_SHARED_DATA"], os.environ["MPT_SOURCE_DIR"]
SCHEMA = json.load(open(os.path.join(SRC, "docs", "campaign-1.0.json")))
jsonschema.Draft202012Validator.check_schema(SCHEMA)
T = tempfile.mkdtemp(prefix="mpt_campaign_cli_")
PATH = os.path.join(T, "campaign.json")
os.symlink(os.path.join(DATA, "t1", "convolution_milo.json"), os.path.join(T, "conv.json"))
A100 = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")
MI250X = os.path.join(DATA, "brute-forced", "convolution_MI250X_T4.json.gz")


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check(text, *args):
    with open(PATH, "w") as f:
        f.write(text)
    p = subprocess.run([MPTUNE, "campaign", PATH, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def schema_ok(text):
    try:
        jsonschema.validate(json.loads(text), SCHEMA)
        return True
    except jsonschema.ValidationError:
        return False


def line_col(text, marker):
    i = text.index(marker)
    return text[:i].count("\n") + 1, i - (text.rfind("\n", 0, i) + 1) + 1


good = json.dumps({
    "schema_version": "1.0", "name": "two-gpus", "log_dir": "logs", "seed": 3,
    "simulate": {"A100": A100, "MI250X": MI250X}, "simulate_delay": 0.01,
    "jobs": [
        {"name": "conv", "problem": "conv.json", "strategy": "bo", "budget": {"A100": 300, "*": 220}},
        {"name": "conv-ga", "problem": "conv.json", "strategy": "genetic_algorithm",
         "options": {"popsize": 30, "elitism": False}, "budget": 100, "classes": ["MI250X"]},
        {"name": "hotspot", "problem": os.path.join(DATA, "t1", "paper_hotspot.json"), "time": 600},
    ]}, indent=2)
if not schema_ok(good):
    fail("the schema refuses the good campaign")
rc, out, err = check(good, "--check")
if rc != 0:
    fail(f"good campaign refused: {err}")
for want in ["campaign two-gpus (%s): 3 jobs, logs in %s/logs, seed 3" % (PATH, T), "classes: A100, MI250X",
             "(convolution_milo), 4362 valid configurations", "budget: A100: 300, MI250X: 220 (520 evaluations in all)",
             "strategy ga (options popsize=30,elitism=false), seed 4, log %s/logs/conv-ga.h5" % T,
             "budget: MI250X: 100 (100 evaluations in all)", "(hotspot), 349853 valid configurations",
             "budget: A100: the time budget, MI250X: the time budget; time 600 s per class",
             "ok: %s is a valid campaign of 3 jobs" % PATH]:
    if want not in out:
        fail(f"plan lacks {want!r}:\n{out}")
if os.path.exists(os.path.join(T, "logs")):
    fail("--check wrote something")
rc, out, err = check(good, "--check", "--classes", "A100,W6600")
if rc == 0 or "jobs[1].classes[0]: unknown device class 'MI250X' (present: 'A100', 'W6600')" not in err:
    fail(f"--classes: {err}")
rc, out, err = check(good)  # a run needs workers: one rank is refused before anything is opened or written
if rc == 0 or "a campaign runs on several ranks" not in err or os.path.exists(os.path.join(T, "logs")):
    fail(f"without --check on one rank: {err}")

HEAD = '{"schema_version": "1.0",\n "jobs": [\n'
CONV = '"problem": "conv.json"'
# (text, marker of the offending value, field and why, whether the schema can tell)
bad = [
    (HEAD + '{"name": "a", %s, "budgett": 3}]}' % CONV, "3}", "jobs[0].budgett: unknown key; did you mean 'budget'?", True),
    (HEAD + '{"name": "a", "problem": "nope.json"}]}', '"nope.json"', "jobs[0].problem: the problem ", False),
    (HEAD + '{"name": "a", %s, "budget": 5},\n{"name": "a", %s, "budget": 5}]}' % (CONV, CONV), '"a", "problem": "conv.json", "budget": 5}]',
     "jobs[1].name: duplicate job name 'a' (also jobs[0])", False),
    (HEAD + '{"name": "a", %s, "budget": 2.5}]}' % CONV, "2.5", "jobs[0].budget: expected an integer >= 1", True),
    (HEAD + '{"name": "a", %s, "budget": {"A": 0}}]}' % CONV, "0}", "jobs[0].budget.A: expected an integer >= 1", True),
    (HEAD + '{"name": "a/b", %s}]}' % CONV, '"a/b"', "jobs[0].name: 'a/b': a job's name is its log's name", True),
    (HEAD + '{"name": "a", %s, "classes": ["X", "X"]}]}' % CONV, '"X"]', "jobs[0].classes[1]: class 'X' named twice", True),
    (HEAD + '{"name": "a", %s, "options": {"popsize": [1]}, "strategy": "ga"}]}' % CONV, "[1]",
     "jobs[0].options.popsize: an option's value is a string, a number or a bool", True),
    (HEAD + '{"name": "a", %s, "budget": 5, "strategy": "ga", "options": {"popsize": 1}}]}' % CONV, "1}}",
     "jobs[0].options.popsize: strategy 'ga': ", False),
    (HEAD + '{"name": "a", %s}]}' % CONV, '{"name"', "jobs[0]: job 'a' has no budget", False),
    ('{"schema_version": "1.0", "sed": 3, "jobs": []}', "3,", "sed: unknown key; did you mean 'seed'?", True),
    ('{"schema_version": "1.1", "jobs": []}', '"1.1"', "schema_version: '1.1': this mptune reads", True),
    ('{"schema_version": "1.0", "jobs": {}}', "{}", "jobs: expected a non-empty list of jobs", True),
    ('{"schema_version": "1.0", "simulate": {"A": "nope.gz"}, "jobs": []}', '"nope.gz"', "simulate.A: the replayed file ", False),
]
for text, marker, why, schema_can in bad:
    rc, out, err = check(text, "--check")
    line, col = line_col(text, marker)
    want = f"mptune campaign: {PATH}:{line}:{col}: {why}"
    if rc == 0 or not err.startswith(want):
        fail(f"for {text!r}:\n got  {err!r}\n want {want!r}...")
    if schema_can and schema_ok(text):
        fail(f"the schema accepts {text!r}")
p = subprocess.run([MPTUNE, "campaign", "--help"], capture_output=True, text=True)
if p.returncode != 0 or "--check" not in p.stdout:
    fail("campaign --help")
p = subprocess.run([MPTUNE, "--help"], capture_output=True, text=True)
if "campaign" not in p.stdout:
    fail("mptune --help does not list campaign")
subprocess.run(["rm", "-rf", T])
print("campaign_cli: ok")
