#!/usr/bin/env bash
# Generalisation study: the GGIK paper's Table 4 protocol at an equal CPU budget per model, then fine-tuning of the
# leave-one-robot-out model to its left-out robot. Run from the repository root.
#
#   bash benchmarks/generalisation_study/table4.sh          # everything (about 100 minutes on 2 CPU cores)
#   STAGES="train_loo eval_loo" bash benchmarks/generalisation_study/table4.sh
#   # the committed results: the v2 recipe at 30 CPU-minutes per model, one thread (README.md beside this script)
#   RUNS=runs/table4_v2 THREADS=1 CPU_MINUTES=30 RECIPE="--set model.residual_inputs=true --set model.gn_steps=2" \
#     STAGES="train_loo train_random train_loo_wide train_loo_named eval_loo eval_random eval_loo_wide eval_loo_named summary" \
#     bash benchmarks/generalisation_study/table4.sh
#
# Models (same architecture and seed, STEPS steps of 128 examples, cosine schedule over them, at most MINUTES
# of wall time each), written to $RUNS/<name>:
#   loo       configs/loo.yaml (the study's base recipe) with $LEFT_OUT at weight 0 (neither seen nor randomised)
#   random    configs/random.yaml: random DH robots only, no urdfs/ robot (the paper's protocol)
#   loo_wide  loo with wider random families: randomize_links at +-40 %, random DH robots of 5-8 DOF, more of them
#   loo_named loo without random robots: the 8 named robots only (do the random families help the left-out robot?)
# Evaluation: `ggik eval generalisation` of each (unseen named robots, random DH families, randomised
# training robots, distance to the training set) -> $OUT/<name>/.
# Fine-tuning: `ggik train --init loo` on $LEFT_OUT alone with FT_EXAMPLES examples each, then
# `ggik eval accuracy` on $LEFT_OUT -> $OUT/finetune_<examples>/; summarised by
# `python -m benchmarks.generalisation_study.generalisation_summary` into $OUT/README.md, distance.png and finetune.png
# ($OUT: benchmarks/generalisation_study/results by default).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-.venv/bin}
RUNS=${RUNS:-runs/table4}
OUT=${OUT:-benchmarks/generalisation_study/results}
CONFIGS=benchmarks/generalisation_study/configs
LEFT_OUT=${LEFT_OUT:-lbr_iiwa}
STEPS=${STEPS:-2000}
MINUTES=${MINUTES:-16}
N=${N:-200}
FT_EXAMPLES=${FT_EXAMPLES:-"0 1024 10240 102400"}  # 0 = the loo model itself
THREADS=${THREADS:-2}
RECIPE=${RECIPE:-}          # extra --set overrides of every model trained from scratch (e.g. the model recipe)
CPU_MINUTES=${CPU_MINUTES:-}  # if set, also stop each model at this CPU budget (all threads, --max-cpu-minutes)
BUDGET=(--max-minutes "$MINUTES")
if [[ -n $CPU_MINUTES ]]; then BUDGET=(--max-cpu-minutes "$CPU_MINUTES"); fi
read -r -a RECIPE_ARGS <<< "$RECIPE"
STAGES=${STAGES:-"train_loo train_random train_loo_wide train_loo_named eval_loo eval_random eval_loo_wide eval_loo_named finetune summary"}
COMMON=(--set "steps=$STEPS" --set val.every=$((STEPS / 2)) --set val.problems_per_robot=30 --set "threads=$THREADS"
        "${RECIPE_ARGS[@]}" "${BUDGET[@]}" --no-progress)

train() {  # name, then ggik train arguments
  local name=$1; shift
  if [[ -f "$RUNS/$name/last.pt" ]]; then
    "$BIN/ggik" train --resume "$RUNS/$name" "${BUDGET[@]}" --no-progress   # finishes an interrupted run
  else
    "$BIN/ggik" train "$@" "${COMMON[@]}" --out "$RUNS/$name"
  fi
}

evaluate() {  # name
  "$BIN/ggik" eval generalisation --ckpt "$RUNS/$1/last.pt" -n "$N" -s 32 --family-size 5 --figure --threads "$THREADS" \
    --no-progress --out-dir "$OUT/$1"
}

for stage in $STAGES; do
  echo "== $stage ($(date -u +%H:%M:%S))"
  case $stage in
    train_loo) train loo --config "$CONFIGS/loo.yaml" --set "data.robots.$LEFT_OUT=0" ;;
    train_random) train random --config "$CONFIGS/random.yaml" ;;
    train_loo_wide) train loo_wide --config "$CONFIGS/loo.yaml" --set "data.robots.$LEFT_OUT=0" \
                      --set data.randomize_fraction=0.4 --set data.random_weight=3.0 --set 'data.random_dofs=[5, 6, 7, 8]' ;;
    train_loo_named) train loo_named --config "$CONFIGS/loo.yaml" --set "data.robots.$LEFT_OUT=0" \
                       --set data.random_weight=0 --set data.randomized_weight=0 ;;
    eval_loo) evaluate loo ;;
    eval_random) evaluate random ;;
    eval_loo_wide) evaluate loo_wide ;;
    eval_loo_named) evaluate loo_named ;;
    finetune)
      for n in $FT_EXAMPLES; do
        steps=$(( (n + 127) / 128 ))
        warm=$(( steps / 10 > 0 ? steps / 10 : 1 ))
        run="$RUNS/finetune_$n"
        ckpt="$run/last.pt"
        if [[ $n == 0 ]]; then ckpt="$RUNS/loo/last.pt"; fi
        [[ -f "$ckpt" ]] || "$BIN/ggik" train --init "$RUNS/loo/last.pt" --config "$CONFIGS/finetune.yaml" --set "data.robots.$LEFT_OUT=1.0" \
          --set "steps=$steps" --set optim.lr=3e-4 --set "optim.warmup_steps=$warm" --set loss.beta_warmup_steps=0 \
          --set val.every=0 --set "threads=$THREADS" --set "checkpoint_every=$steps" --no-progress --out "$run"
        "$BIN/ggik" eval accuracy --ckpt "$ckpt" --robots "$LEFT_OUT" -n "$N" -s 32 --mmd-goals 50 --threads "$THREADS" \
          --no-progress --out-dir "$OUT/finetune_$n"
      done ;;
    summary) "$BIN/python" -m benchmarks.generalisation_study.generalisation_summary --runs "$RUNS" --results "$OUT" --left-out "$LEFT_OUT" ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
done
