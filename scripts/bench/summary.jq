# summary.jq - bench.sh's results: every run's row (results), the median
# and spread over the runs of each configuration (summary), the server-bound
# peak of each engine (headline) and the open-loop rows (latency). Input:
# the rows, slurped; arguments from bench.sh (see its jq call).
def median: map(select(. != null)) | sort | if length == 0 then null else .[length / 2 | floor] end;
def spread: map(select(. != null)) as $v |
	if ($v | length) < 2 or ($v | median) == 0 then 0
	else ((($v | max) - ($v | min)) / ($v | median) * 1000 | round) / 10 end;
def r2: if . == null then null else (. * 100 | round) / 100 end;
# Which side limited a closed-loop row (placement.sh's bound_by, the same
# rule): a server CPU >= 90% busy is at its peak whatever the client did
# ("server", "both" when the client was >= 90% busy too: both count as
# server-bound), else the client when it was >= 90% busy, else "server"
# for a busy-polling server (by elimination), else "neither".
def bound($lim; $scpu; $bp):
	if $lim == null or $scpu == null then null
	elif ($bp | not) and $scpu >= 90 then (if $lim >= 90 then "both" else "server" end)
	elif $lim >= 90 then "client" elif $bp then "server" else "neither" end;
def server_bound: . == "server" or . == "both";

. as $rows |
($rows | map(.engine) | reduce .[] as $e ([]; if index([$e]) then . else . + [$e] end)) as $order |
($rows | map(select(.engine == "nginx" and .mode == "closed"))) as $ng |
[$rows[] | . as $x |
	($ng | map(select(.client == $x.client and .conns == $x.conns and .pipeline == $x.pipeline and .run == $x.run)) | first) as $n |
	$x + {ratio_nginx: (if $x.mode == "closed" and $n != null and $n.rps > 0 then $x.rps / $n.rps | r2 else null end),
	      cost_ratio_nginx: (if $x.mode == "closed" and $n != null and $n.cost_ns != null and $x.cost_ns != null and $x.cost_ns > 0
		then $n.cost_ns / $x.cost_ns | r2 else null end)}] as $r |
[$r | map(select(.mode == "closed")) | group_by([.engine, .client, .conns, .pipeline])[] |
	{engine: .[0].engine, client: .[0].client, conns: .[0].conns, pipeline: .[0].pipeline,
	 mode: "closed", runs: length,
	 rps: (map(.rps) | median), rps_spread_pct: (map(.rps) | spread),
	 cost_ns: (map(.cost_ns) | median), cost_spread_pct: (map(.cost_ns) | spread),
	 ratio_nginx: (map(.ratio_nginx) | median), ratio_spread_pct: (map(.ratio_nginx) | spread),
	 cost_ratio_nginx: (map(.cost_ratio_nginx) | median),
	 cost_ratio_spread_pct: (map(.cost_ratio_nginx) | spread),
	 client_cpu_busy_pct: (map(.client_cpu_busy_pct) | median),
	 server_cpu_busy_pct: (map(.server_cpu_busy_pct) | median),
	 client_limit_pct: (map(.client_limit_pct) | median),
	 # From the medians of the runs' CPU figures (the ones the row shows).
	 bound_by: bound(map(.client_limit_pct) | median; map(.server_cpu_busy_pct) | median; .[0].busy_poll),
	 busy_poll: .[0].busy_poll,
	 errors: (map(.errors // 0) | add), retransmits: (map(.retransmits) | median),
	 established: (map(.peak_established) | median),
	 lat_mean_us: (map(.lat_mean_us) | median), lat_p50_us: (map(.lat_p50_us) | median),
	 lat_p90_us: (map(.lat_p90_us) | median), lat_p99_us: (map(.lat_p99_us) | median),
	 lat_p999_us: (map(.lat_p999_us) | median), lat_max_us: (map(.lat_max_us) | max),
	 server_cpu_pct: (map(.server_cpu_pct) | median), server_mem_kb: (map(.server_mem_kb) | max),
	 server_rss_kb: (map(.server_rss_kb) | max), server_bpf_maps_kb: (map(.server_bpf_maps_kb) | max),
	 server_mem_kind: .[0].server_mem_kind,
	 failed: (map(.failed // false) | any)}] |
	sort_by(.engine as $e | $order | index($e)) as $summary |
# Each engine's headline: its best closed-loop row bound by the server
# (any client, connections or pipeline depth); when none was, or a row
# where neither side was saturated went faster (a server saturated by
# 100,000 connections is not at the peak it answered at 100), its best row
# where neither side was saturated, marked as a lower bound, unless a row
# bound by the client went faster (a lower bound far below what the server
# was seen to answer says nothing); never a row with errors (a row that lost requests measured a failure, not a peak:
# the 100,000-connection rows past a server's own limit), never a row
# bound by the client (such an engine goes to no_headline, with its best
# row). Ratios to nginx's row in the same configuration, per run (the two
# rows of the same run) and then median and spread.
# The rows with the other NAPI policy (blitz-bench-other-napi) are shown
# beside the headline (other_napi), never as one: the headline is the
# default placement's.
def default_policy: .client != "blitz-bench-other-napi";
def headline_of($e): $summary | map(select(.engine == $e and .rps > 0 and (.failed | not) and (.errors // 0) == 0 and default_policy)) |
	(map(select(.bound_by | server_bound)) | max_by(.rps)) as $s |
	((map(select(.bound_by == "client")) | max_by(.rps) | .rps // 0) as $cl |
	 map(select(.bound_by == "neither" and .rps >= $cl and .rps > ($s.rps // 0))) | max_by(.rps)) as $n |
	if $n then $n + {kind: "lower bound"} elif $s then $s + {kind: "server"} else null end;
def other_napi_of($e): $summary | map(select(.engine == $e and .client == "blitz-bench-other-napi" and .rps > 0)) | first |
	if . then {client, conns, rps, rps_spread_pct, cost_ns, bound_by, ratio_nginx, ratio_spread_pct,
		cost_ratio_nginx, cost_ratio_spread_pct} else null end;
def runs_of($h): [$r[] | select(.mode == "closed" and .engine == $h.engine and .client == $h.client and .conns == $h.conns and .pipeline == $h.pipeline)];
([$order[] as $e | headline_of($e) | select(. != null)]) as $peaks |
([$sk[] | .engine]) as $skipped_engines |
{timestamp: $ts, duration_s: $d, runs: $runs,
 conns: ($conns | split(" ") | map(select(. != "") | tonumber)),
 placement: $pl, placement_why: $why, napi_rt_prio: $napi_rt, srv_napi_rt_prio: $srv_napi_rt, bench_rt: $bench_rt,
 host: {kernel: $kernel, cpus: $cpus, cpu_model: $cpu_model,
	loadavg_before: ($load_before | tonumber), loadavg_after: ($load_after | tonumber),
	client_cpu: $ccpu, server_cpu: $scpu},
 method: "cost_ns: busy time of the server CPU from /proc/stat (user+nice+system+irq+softirq+steal, so NAPI threads and softirqs count) over the run / requests the client saw answered. bound_by: server when the server CPU was >= 90% busy (a saturated server is at its peak whatever the client did; both when the client was >= 90% busy too, counted as server-bound), else client when the client was >= 90% busy (blitz bench: its own busy loop time, it spins), else server when the server busy-polls (dpdk: by elimination, the client had headroom), else neither; a configuration's from the medians of its runs. work_ns: a busy-polling engine's own cost per request (polls that did work), over all its runs. Ratios to nginx per run (same client, connections and pipeline), then median and spread ((max - min) / median) over the runs.",
 skipped: $sk,
 headline: [$peaks[] | . as $p | runs_of($p) as $pr |
	# nginx in the same configuration (client, connections, pipeline
	# depth): pipelining changes both RPS and cost, so a ratio across
	# shapes would say nothing. None when nginx's row there was bound by
	# the client (its figure is not its peak).
	($summary | map(select(.engine == "nginx" and .client == $p.client and .conns == $p.conns and .pipeline == $p.pipeline and .rps > 0)) | first) as $ns |
	(if $ns != null and $ns.bound_by != "client" then $ns else null end) as $np |
	(if $np then runs_of($np) else [] end) as $nruns |
	[$pr[] | . as $x | ($nruns | map(select(.run == $x.run)) | first) as $n |
	 {rps: (if $n != null and $n.rps > 0 then $x.rps / $n.rps else null end),
	  cost: (if $n != null and $n.cost_ns != null and $x.cost_ns != null and $x.cost_ns > 0 then $n.cost_ns / $x.cost_ns else null end)}] as $rat |
	{engine, client, conns, pipeline, rps, cost_ns, bound_by, kind, runs, rps_spread_pct, cost_spread_pct,
	 server_cpu_busy_pct, client_limit_pct,
	ratio_nginx: (if $np != null and $np.rps > 0 then $p.rps / $np.rps | r2 else null end),
	ratio_spread_pct: (if $np != null then $rat | map(.rps) | spread else null end),
	cost_ratio_nginx: (if $np != null and $np.cost_ns != null and $p.cost_ns != null and $p.cost_ns > 0 then $np.cost_ns / $p.cost_ns | r2 else null end),
	cost_ratio_spread_pct: (if $np != null then $rat | map(.cost) | spread else null end),
	ratio_note: (if $p.engine == "nginx" then null elif $ns == null then "no nginx row in this configuration"
		elif $np == null then "nginx's row in this configuration was bound by the client" else null end),
	work_ns: ([$en[] | select(.engine == $p.engine) | .work_ns] | median),
	other_napi: other_napi_of($p.engine)} |
	# Without a ratio in the headline's configuration: the engine's best
	# row where neither it nor nginx was bound by the client gives it.
	if .ratio_nginx == null and $p.engine != "nginx" then
		([$summary[] | . as $x | select($x.engine == $p.engine and ($x | default_policy) and $x.bound_by != "client" and $x.ratio_nginx != null and $x.rps > 0 and
		  ([$summary[] | select(.engine == "nginx" and .client == $x.client and .conns == $x.conns and .pipeline == $x.pipeline and .bound_by != "client")] | length > 0))] | max_by(.rps)) as $alt |
		if $alt then . + {ratio_nginx: $alt.ratio_nginx, ratio_spread_pct: $alt.ratio_spread_pct,
			cost_ratio_nginx: $alt.cost_ratio_nginx, cost_ratio_spread_pct: $alt.cost_ratio_spread_pct,
			ratio_note: "\(.ratio_note); the ratios are from \($alt.client) -c \($alt.conns) -P \($alt.pipeline) (\($alt.rps) req/s)"}
		else . end
	else . end],
 no_headline: [$order[] as $e | select(([$peaks[] | .engine] | index($e)) == null) |
	($summary | map(select(.engine == $e and .rps > 0 and default_policy)) | max_by(.rps)) | select(. != null) |
	{engine, client, conns, pipeline, rps, cost_ns, bound_by, client_limit_pct, other_napi: other_napi_of($e),
	 why: "no row saturated the server CPU, and its fastest was bound by the client (blitz bench busy >= 90%, or wrk / h2load CPU): the server's peak is above what these clients drove"}],
 summary: $summary,
 headroom: [$r[] | select(.client == "blitz-bench-headroom") | . as $h |
	($summary | map(select(.engine == "xdp" and (.client | IN("blitz-bench", "blitz-bench-pipe")) and .conns == $h.conns)) | max_by(.rps)) as $x |
	{engine, pipeline, rate, rps, errors, self_busy_pct: .client_limit_pct, client_cpu_busy_pct,
	 client_limited: (.client_limited // false), client_limit_why: (.client_limit_why // ""),
	 xdp_peak: ($x.rps // null), of_xdp_peak: (if $x != null and $x.rps > 0 then .rate / $x.rps | r2 else null end)}],
 latency: [$r[] | select(.mode == "open" and .client != "blitz-bench-headroom") | . as $o |
	($summary | map(select(.engine == $o.engine and .client == "blitz-bench")) | first) as $pk |
	{engine, rate, fraction: (if $pk != null and $pk.rps > 0 then $o.rate / $pk.rps | r2 else null end),
	 rps, lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us, lat_p9999_us, lat_max_us, retransmits, errors}],
 results: $r}
