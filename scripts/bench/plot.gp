# plot.gp - the `make bench` figure: RPS by connections (wrk, medians), cost
# per request of each engine's server-bound peak, and blitz bench's latency
# percentiles. Called by bench.sh with -e "rps='F'; cost='F'; lat='F';
# out='PNG'; title='...'"; each data file is tab-separated with a header
# row ("-" for a missing value).
set terminal pngcairo size 1100,1300 font ",10"
set output out
set datafile missing "-"
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top vertical
set grid ytics
set multiplot layout 3,1 title title
set xlabel "connections (wrk -t1)"
set ylabel "requests / s"
set yrange [0:*]
set format y "%.0s%c"
plot for [i=2:*] rps using i:xtic(1) title columnheader(i)
set xlabel "engine (its server-bound peak)"
set ylabel "server CPU ns / request"
set format y "%g"
plot cost using 2:xtic(1) title "ns / request"
set xlabel "engine (blitz bench, closed loop)"
set ylabel "latency (us)"
set logscale y
set yrange [*:*]
plot for [i=2:*] lat using i:xtic(1) title columnheader(i)
unset multiplot
