# Sourced by the device scripts (bench/h200_shapes.sh, bench/h200_attention.sh):
# run_models RUNS REPS runs `bench run` (greedy, 64 tokens) for each line
# "preset type prompt-tokens" of RUNS, REPS rounds, with blockq and then
# blockq_old (where carried) in turn, and prints each run's generation and
# whole-token lines, then its families. Needs B (the binaries' folder) and OUT.
run_models() {
  local bins=blockq
  [ -x "$B/blockq_old" ] && bins="blockq blockq_old"
  echo "$1" | while read -r preset type p; do
    [ -z "$preset" ] && continue
    for rep in $(seq "$2"); do
      for bin in $bins; do
        timeout 150 "$B/$bin" bench run --preset "$preset" --type "$type" -p "$p" -n 64 --crossover 16 --samples 3 \
          > "$OUT/run.txt" 2>&1
        echo "== $preset $type p=$p $bin: $(grep -E '^(generation|  total)' "$OUT/run.txt" | tr -s ' ' | tr '\n' '|')"
        grep -E '^  (qkv|attention|attn-out|ffn|lm-head)' "$OUT/run.txt" | tr -s ' ' | tr '\n' '|'; echo
      done
    done
  done
}
