# Loop figures shared by the load benchmarks (deploy/web-load.sh, deploy/recording-cost.sh).
# Source it; the functions read files the benchmarks write.

field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# Loop figures of one run as "key value" lines: from the recording, the samples while the
# task ran (overruns as the counter's rise over them, compute time in us), and the remote's
# line at exit ("control loop: C cycles, O overruns, period jitter p99 J us").
loop_figures() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["state"] == "running" { o = $col["overruns"]; if (n++ == 0) first = o; last = o }
    END { printf "samples %d\noverruns %d\n", n, last - first }' "$1.csv"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["state"] == "running" { print $col["compute_s"] * 1e6 }' "$1.csv" | sort -g |
    awk '{ c[++n] = $1 }
      END { if (n == 0) exit
        p99 = int(n * 0.99); if (p99 < n * 0.99) p99++
        printf "compute_p50_us %.1f\ncompute_p99_us %.1f\ncompute_max_us %.1f\n",
          c[int((n + 1) / 2)], c[p99], c[n] }'
  sed -n 's/.*control loop: \([0-9]*\) cycles, \([0-9]*\) overruns, period jitter p99 \([0-9.]*\) us.*/life_cycles \1\nlife_overruns \2\njitter_p99_us \3/p' \
    "$1.remote"
}
# The median over the runs of kind KIND (files $work/KIND.*.all, $runs of them) of figure KEY:
# the alternating load benchmarks compare kinds by it. Reads $work and $runs.
median() {
  for f in "$work/$1".*.all; do field "$f" "$2"; done | sort -g |
    awk -v m=$(( (runs + 1) / 2 )) 'NR == m { print }'
}
