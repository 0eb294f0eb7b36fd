# table-md.jq - bench.sh's Markdown table (the README's), from its JSON.
"Server-bound peak of each engine (median of \(.runs) runs; placement: \(.placement)):",
"",
"| engine | peak RPS | spread | ns / request | × nginx RPS | × nginx cost | measured with | bound by |",
"|---|--:|--:|--:|--:|--:|---|---|",
(.headline[] | "| \(.engine) | \(.rps) | \(.rps_spread_pct)% | \(.cost_ns // "-")\(if .work_ns then " (work \(.work_ns))" else "" end) | \(.ratio_nginx // "-") | \(.cost_ratio_nginx // "-") | \(.client) -c \(.conns)\(if .pipeline > 1 then " -P \(.pipeline)" else "" end) | \(.bound_by) |"),
"",
"Every configuration (medians; spread = (max - min) / median over the runs):",
"",
"| engine | client | conns | P | RPS | spread | ns / req | p99 | CPU \(.host.client_cpu)/\(.host.server_cpu) busy | bound by | × nginx | ratio spread | cost × nginx | errors |",
"|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|",
(.summary[] | "| \(.engine) | \(.client) | \(.conns)\(if .established != null and .established < .conns then " (\(.established) at once)" else "" end) | \(.pipeline) | \(.rps) | \(.rps_spread_pct)% | \(.cost_ns // "-") | \(if .lat_p99_us then "\(.lat_p99_us) µs" else "-" end) | \(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)% | \(.bound_by) | \(.ratio_nginx // "-") | \(if .ratio_spread_pct then "\(.ratio_spread_pct)%" else "-" end) | \(.cost_ratio_nginx // "-") | \(if .failed then "FAILED" else .errors end) |"),
"",
(if (.latency | length) > 0 then
"Open loop (blitz bench -R at fractions of each server's closed-loop peak; latency from when each request was due):",
"",
"| engine | rate | of peak | RPS | p50 | p90 | p99 | p99.9 | max | retransmits |",
"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
(.latency[] | "| \(.engine) | \(.rate) | \(.fraction // "-") | \(.rps) | \(.lat_p50_us) µs | \(.lat_p90_us) µs | \(.lat_p99_us) µs | \(.lat_p999_us) µs | \(.lat_max_us) µs | \(.retransmits) |"), ""
else empty end),
(.headroom[] | "Generator headroom: `blitz bench -P \(.pipeline) -R \(.rate)` (\(.of_xdp_peak)x the xdp engine's blitz-bench peak of \(.xdp_peak) req/s) against \(.engine) on one client CPU: \(.rps) req/s, busy \(.self_busy_pct)% (CPU \(.client_cpu_busy_pct)%), \(if .client_limited then "the generator was the limit: \(.client_limit_why)" else "not the limit" end).", ""),
(.skipped[] | "Skipped \(.engine): \(.reason)"),
"",
"\(.timestamp), \(.duration_s) s per run, \(.runs) runs, Linux \(.host.kernel), \(.host.cpus) CPUs (\(.host.cpu_model)), load average \(.host.loadavg_before) before the run."
