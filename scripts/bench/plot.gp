# plot.gp - the `make bench` figure: RPS (top) and p95 latency (bottom) for
# each engine, clustered by connection count. Called by bench.sh with
# -e "rps='FILE'; p95='FILE'; out='PNG'; title='...'"; each data file has a
# header row "conns <engine>..." and one row per connection count ("-" for
# a missing value).
set terminal pngcairo size 1100,900 font ",10"
set output out
set datafile missing "-"
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top vertical
set grid ytics
set xlabel "connections (wrk -t1)"
set multiplot layout 2,1 title title
set ylabel "requests / s"
set yrange [0:*]
set format y "%.0s%c"
plot for [i=2:*] rps using i:xtic(1) title columnheader(i)
set ylabel "p95 latency (us)"
set format y "%g"
set yrange [*:*]
set logscale y
plot for [i=2:*] p95 using i:xtic(1) title columnheader(i)
unset multiplot
