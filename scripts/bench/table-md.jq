# table-md.jq - bench.sh's Markdown tables (docs/bench.md), from its JSON.
# Every × nginx is the ratio of the medians shown (as in the headline and
# the README's table), whatever ratio an older JSON stored per row.
. as $b |
def r2: (. * 100 | round) / 100;
def nginx_of($r): $b.summary | map(select(.engine == "nginx" and .client == $r.client and .conns == $r.conns and .pipeline == $r.pipeline and .rps > 0)) | first;
def x_rps: nginx_of(.) as $n | if .mode != "closed" or $n == null or .rps == 0 then "-" else .rps / $n.rps | r2 end;
def x_cost: nginx_of(.) as $n | if $n == null or $n.cost_ns == null or .cost_ns == null or .cost_ns == 0 then "-" else $n.cost_ns / .cost_ns | r2 end;
"Peak of each engine: its best server-bound row, else its best row with neither side saturated (a lower bound) unless a client-bound row went faster, never a client-bound one (median of \(.runs) runs; placement: \(.placement)\(if .napi_rt_prio then ", NAPI SCHED_FIFO \(.napi_rt_prio)" else "" end)):",
"",
"| engine | peak RPS | spread | ns / request | × nginx RPS | spread | × nginx cost | spread | measured with | bound by | other NAPI policy: req/s at ns/req (× nginx RPS, cost) |",
"|---|--:|--:|--:|--:|--:|--:|--:|---|---|---|",
(.headline[] | "| \(.engine) | \(.rps) | \(.rps_spread_pct)% | \(.cost_ns // "-")\(if .work_ns then " (work \(.work_ns))" else "" end) | \(.ratio_nginx // "-") | \(if .ratio_spread_pct != null then "\(.ratio_spread_pct)%" else "-" end) | \(.cost_ratio_nginx // "-") | \(if .cost_ratio_spread_pct != null then "\(.cost_ratio_spread_pct)%" else "-" end) | \(.client) -c \(.conns)\(if .pipeline > 1 then " -P \(.pipeline)" else "" end)\(if .ratio_note then " (ratios: \(.ratio_note))" else "" end) | \(if .kind == "server" then .bound_by else "neither (lower bound)" end) | \(if .other_napi then "\(.other_napi.rps) at \(.other_napi.cost_ns // "-") (\(.other_napi.ratio_nginx // "-")×, \(.other_napi.cost_ratio_nginx // "-")×), \(.other_napi.bound_by)" else "-" end) |"),
(.no_headline // [] | .[] | "| \(.engine) | (≥ \(.rps)) | - | - | - | - | - | - | \(.client) -c \(.conns)\(if .pipeline > 1 then " -P \(.pipeline)" else "" end) | client: no peak | - |"),
"",
"Every configuration (medians; spread = (max - min) / median over the runs):",
"",
"| engine | client | conns | P | RPS | spread | ns / req | p99 | CPU \(.host.client_cpu)/\(.host.server_cpu) busy | bound by | × nginx | ratio spread | cost × nginx | errors |",
"|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|",
(.summary[] | "| \(.engine) | \(.client) | \(.conns)\(if .established != null and .established < .conns then " (\(.established) at once)" else "" end) | \(.pipeline) | \(.rps) | \(.rps_spread_pct)% | \(.cost_ns // "-") | \(if .lat_p99_us then "\(.lat_p99_us) µs" else "-" end) | \(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)% | \(.bound_by) | \(x_rps) | \(if .ratio_spread_pct then "\(.ratio_spread_pct)%" else "-" end) | \(x_cost) | \(if .failed then "FAILED" else .errors end) |"),
"",
(if (.latency | length) > 0 then
"Open loop (blitz bench -R at fractions of each server's closed-loop peak; latency from when each request was due):",
"",
"| engine | rate | of peak | RPS | p50 | p90 | p99 | p99.9 | max | retransmits |",
"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
(.latency[] | "| \(.engine) | \(.rate) | \(.fraction // "-") | \(.rps) | \(.lat_p50_us) µs | \(.lat_p90_us) µs | \(.lat_p99_us) µs | \(.lat_p999_us) µs | \(.lat_max_us) µs | \(.retransmits) |"), ""
else empty end),
(.headroom[] | "Generator headroom: `blitz bench -P \(.pipeline) -R \(.rate)` (\(.of_xdp_peak)x the xdp engine's best blitz bench figure of \(.xdp_peak) req/s) against \(.engine) on one client CPU: \(.rps) req/s, busy \(.self_busy_pct)% (CPU \(.client_cpu_busy_pct)%), \(if .client_limited and .self_busy_pct < 90 then "\(.engine) could not keep up (\(.client_limit_why)): no verdict on the generator" elif .client_limited then "the generator was the limit: \(.client_limit_why)" else "not the limit" end).", ""),
(.skipped[] | "Skipped \(.engine): \(.reason)"),
"",
"\(.timestamp), \(.duration_s) s per run, \(.runs) runs, Linux \(.host.kernel), \(.host.cpus) CPUs (\(.host.cpu_model)), load average \(.host.loadavg_before) before the run."
