#!/usr/bin/env bash
# Writes tests/samples/data/model_reference_means.json: the posterior means
# and their MCSE of the synthetic example models (samples/models:
# hierarchical, ar2, mixture, poisson_regression) from long runs, 16 chains x
# 10 000 draws each, which tests/samples/models_statistical_test.cc compares
# its short runs with (|difference| <= z sqrt(mcse^2 + mcse_ref^2)). Their
# posterior means are not known in closed form; these runs are the reference.
# Usage: tools/make_model_references.sh [build dir (default build)]
# A few minutes on 2 cores. Rerun it when a model or its data file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cli=$build/tools/autobatch
[[ -x $cli ]] || { echo "make_model_references: no $cli; run tools/build.sh first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=tests/samples/data/model_reference_means.json
chains=16 warmup=1000 samples=10000 seed=20261130
for model in hierarchical ar2 mixture poisson_regression; do
  delta=0.8
  [[ $model == hierarchical ]] && delta=0.9
  echo "make_model_references: $model ($chains chains x $samples draws, delta $delta)" >&2
  "$cli" sample --model "$model" --data "samples/models/$model.data.json" --chains "$chains" \
    --warmup "$warmup" --samples "$samples" --seed "$seed" --delta "$delta" --no-progress \
    --output-dir "$work/$model" --summary-json "$work/$model.json" > /dev/null
done
python3 - "$work" "$out" "$chains" "$warmup" "$samples" "$seed" <<'PY'
import json, sys
work, out, chains, warmup, samples, seed = sys.argv[1:]
models = {}
for name in ["hierarchical", "ar2", "mixture", "poisson_regression"]:
    summary = json.load(open(f"{work}/{name}.json"))
    columns = summary["columns"][7:]  # after the sampler statistics
    for c in columns:
        if c["rhat"] >= 1.01:
            sys.exit(f"make_model_references: {name} {c['name']}: R-hat {c['rhat']}; not a reference")
    models[name] = {c["name"]: {"mean": c["mean"], "mcse": c["mcse"]} for c in columns}
json.dump({
    "generated_by": "tools/make_model_references.sh",
    "runs": {"chains": int(chains), "warmup": int(warmup), "samples": int(samples),
             "seed": int(seed), "sampler": "nuts"},
    "models": models,
}, open(out, "w"), indent=1, sort_keys=True)
open(out, "a").write("\n")
print(f"make_model_references: wrote {out}", file=sys.stderr)
PY
