# readme.jq - the README's result table and the one-line headline, from a
# bench.sh JSON (docs/bench.json). scripts/gen-results.sh runs it with
# --arg what table|headline; the README's block, `make demo`'s reference line
# and tests/e2e/test_readme_results.sh all come from here, so they cannot
# disagree. Ratios are those of the figures shown (engine / nginx in the
# same row shape), rounded to one decimal.
def comma: tostring as $s | ($s | length) as $n |
	if $s | test("^[0-9]+$") then [range(0; $n) as $i | (if $i > 0 and ($n - $i) % 3 == 0 then "," else "" end) + $s[$i:$i + 1]] | join("")
	else $s end;
def num: if . == null then "-" else round | comma end;
def us: if . == null or . == 0 then "-" elif . >= 1000 then (. / 100 | round) as $t | "\($t / 10 | floor).\($t % 10) ms" else "\(round) µs" end;
def ratio: if . == null then "-" else (. * 10 | round) as $t | "\($t / 10 | floor).\($t % 10)×" end;
def mib: if . == null then "-" else "\(. / 1024 * 10 | round / 10) MiB" end;
# Memory: RSS plus BPF maps in newer runs; older runs recorded one of them.
def mem($kind): (.server_mem_kind // $kind[.engine]) as $k |
	if $k == "bpf_maps_memlock" then "\(.server_mem_kb | mib) (maps)"
	elif $k == "VmRSS" then "\(.server_mem_kb | mib) (RSS)"
	else (.server_mem_kb | mib) end;
def shape: "\(.client | sub("-pipe$"; "") | sub("-"; " ")) -c \(.conns)\(if .pipeline > 1 then " -P \(.pipeline)" else "" end)";
def engines: ["xdp", "afxdp", "dpdk", "epoll", "nginx"];

. as $b |
# Older runs recorded the kind of memory per run only.
([$b.results[] | {key: .engine, value: .server_mem_kind}] | from_entries) as $kind |
# Memory per engine is the largest a configuration read; the rows carry it.
($b.summary | map(select(.client != "blitz-bench-other-napi" and .rps > 0 and (.failed | not)))) as $rows |
def at($e; $c): $rows | map(select(.engine == $e and .conns == $c and .pipeline == 1)) |
	(map(select(.client == "blitz-bench")) | first) // (map(select(.client == "wrk")) | first);
def same_nginx($r): $rows | map(select(.engine == "nginx" and .client == $r.client and .conns == $r.conns and .pipeline == $r.pipeline)) | first;
def peak($e): ($b.headline | map(select(.engine == $e)) | first) as $h |
	if $h == null then null else ($rows | map(select(.engine == $e and .client == $h.client and .conns == $h.conns and .pipeline == $h.pipeline)) | first) end;
(peak("nginx")) as $np |
def row($lab; $r; $n):
	if $r == null then empty else
	"| \($r.engine) | \($lab) | `\($r | shape)` | \($r.rps | num) | \(if $n != null and $n.rps > 0 then $r.rps / $n.rps | ratio else "-" end) | \($r.lat_p50_us | us) | \($r.lat_p99_us | us) | \($r.cost_ns | num) | \(if $n != null and $r.cost_ns != null and $r.cost_ns > 0 and $n.cost_ns != null then $n.cost_ns / $r.cost_ns | ratio else "-" end) | \($r | mem($kind)) | \($r.bound_by) |" end;
def xdp_line: peak("xdp") as $x |
	if $x == null or $np == null then "no xdp or nginx peak in this run"
	else "xdp \($x.rps | num) req/s at \($x.cost_ns | num) ns of CPU per request, \($x.rps / $np.rps | ratio) nginx's peak in RPS and \($np.cost_ns / $x.cost_ns | ratio) in cost per request (nginx \($np.rps | num) req/s at \($np.cost_ns | num) ns), both `\($x | shape)`, one server CPU over veth (make bench \($b.timestamp))" end;
if $what == "headline" then xdp_line
else
"Run \($b.timestamp): `make bench`, \($b.runs) run\(if $b.runs == 1 then "" else "s" end) × \($b.duration_s) s per configuration, medians; Linux \($b.host.kernel), \($b.host.cpus) CPUs (\($b.host.cpu_model)), the server on CPU \($b.host.server_cpu) and the client on CPU \($b.host.client_cpu), two network namespaces joined by veth, load average \($b.host.loadavg_before) before the run. × nginx: this row against nginx's row of the same shape (the peak against nginx's peak).",
"",
"| engine | connections | client | req/s | × nginx | p50 | p99 | CPU ns / request | × nginx | memory | bound by |",
"|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|",
(engines[] as $e | peak($e) as $p | if $p == null then empty else row("**peak**"; $p; $np) end),
([10, 100, 300][] as $c | engines[] as $e |
	at($e; $c) as $r | if $r == null then empty else row("\($c)"; $r; same_nginx($r)) end),
"",
"Headline: \(xdp_line)."
end
