-- wrk-report.lua: after the run, print one line "BENCHJSON {...}" with
-- the totals and latency percentiles (microseconds) that bench.sh parses.
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format(
		'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
		'"err_connect":%d,"err_read":%d,"err_write":%d,' ..
		'"err_status":%d,"err_timeout":%d,"lat_mean_us":%.1f,' ..
		'"lat_stdev_us":%.1f,"lat_p50_us":%d,"lat_p90_us":%d,' ..
		'"lat_p95_us":%d,"lat_p99_us":%d,"lat_p999_us":%d,' ..
		'"lat_max_us":%d}\n',
		summary.requests, summary.duration, summary.bytes,
		e.connect, e.read, e.write, e.status, e.timeout,
		latency.mean, latency.stdev, latency:percentile(50),
		latency:percentile(90), latency:percentile(95),
		latency:percentile(99), latency:percentile(99.9), latency.max))
end
