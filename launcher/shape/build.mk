# launcher/shape/build.mk - hpctrain plan's library: a step's time
# against the number of ranks fitted from past runs (shape_model, pure),
# each candidate shape's predicted run and the pick (shape_pick, pure), a
# planned run's prediction against what happened (shape_check, pure),
# and the past runs of the same program as the fit's points
# (shape_history, shell: runs' resolved.yaml and metrics.jsonl, read with
# report's parser).

UNIT_TESTS += test_shape
