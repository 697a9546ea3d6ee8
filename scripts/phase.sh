# Sourced by the scripts: each phase says what it is about to do and roughly how long it takes on
# 2 cores, then how long it took, on one clock for the whole command (the outermost script's start):
#   -- [1:02] build: the library and 3 commands, 86 steps (about 5 min cold on 2 cores)
#   -- [5:40] build: done in 278 s
# bench/dev/run_cold_build.py reads these lines.
export ATTN_SCRIPT_START=${ATTN_SCRIPT_START:-$(date +%s)}

_phase_clock() {
  local s=$(($(date +%s) - ATTN_SCRIPT_START))
  printf '%d:%02d' $((s / 60)) $((s % 60))
}

# phase NAME "what it does (how long)": announces the phase; the next phase_done closes it.
phase() {
  _phase_name=$1
  _phase_start=$(date +%s)
  echo "-- [$(_phase_clock)] $1: $2"
}

phase_done() {
  echo "-- [$(_phase_clock)] $_phase_name: done in $(($(date +%s) - _phase_start)) s"
}
