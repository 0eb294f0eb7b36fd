// SPDX-License-Identifier: GPL-2.0
/*
 * port.c - bring up the service port and the TAP of the exception path.
 *
 * Owns: ethdev configuration, in the DPDK examples' order: configure,
 * adjust descriptors, queue setup, start. RSS spreads flows over the
 * queues when the PMD can hash; the af_packet PMD cannot, but its
 * `qpairs=N` sockets join a PACKET_FANOUT_HASH group, so the kernel
 * spreads flows over its N queues the same way.
 * Must never: run on an lcore's packet path (setup and teardown only).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>

#include <rte_dev.h>
#include <rte_ethdev.h>

#include "dpdk_engine.h"
#include "log.h"
#include "nic_info.h"

bool port_kernel_ifname(uint16_t port, char *buf, size_t len, bool *xdp)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	char name[RTE_ETH_NAME_MAX_LEN] = "";
	const char *a;
	size_t n;

	rte_eth_dev_get_name_by_port(port, name);
	*xdp = !strncmp(name, "net_af_xdp", 10);
	if (strncmp(name, "net_af_packet", 13) && !*xdp)
		return false;
	if (rte_eth_dev_info_get(port, &info) || !info.device)
		return false;
	da = rte_dev_devargs(info.device);
	a = da && da->args ? strstr(da->args, "iface=") : NULL;
	if (!a)
		return false;
	a += 6;
	n = strcspn(a, ",");
	if (!n || n >= len)
		return false;
	memcpy(buf, a, n);
	buf[n] = '\0';
	return true;
}

bool port_csum_partial(uint16_t port)
{
	char ifname[IF_NAMESIZE];
	bool xdp;

	return port_kernel_ifname(port, ifname, sizeof(ifname), &xdp) &&
	       nic_csum_partial(ifname);
}

int port_init(struct engine *eng, uint16_t port, uint16_t nb_queues,
	      bool rss_wanted)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	uint16_t q;
	int ret;

	if (!rte_eth_dev_is_valid_port(port))
		return -EINVAL;
	rte_eth_dev_get_name_by_port(port, name);
	ret = rte_eth_dev_info_get(port, &info);
	if (ret) {
		pr_warn("rte_eth_dev_info_get(%s): %s\n", name, strerror(-ret));
		return ret;
	}
	if (nb_queues > info.max_rx_queues || nb_queues > info.max_tx_queues) {
		pr_warn("%s has %u rx / %u tx queues, %u lcores asked for %u: "
			"give fewer lcores (-l), or for af_packet add "
			"qpairs=%u to its --vdev\n",
			name, info.max_rx_queues, info.max_tx_queues, nb_queues,
			nb_queues, nb_queues);
		return -EINVAL;
	}
	if (rss_wanted && nb_queues > 1 && info.flow_type_rss_offloads) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP) &
			info.flow_type_rss_offloads;
		pr_info("%s: RSS over %u queues\n", name, nb_queues);
	} else if (rss_wanted && nb_queues > 1) {
		pr_info("%s: no RSS in this PMD; %u queues spread by the "
			"driver (af_packet: kernel fanout hash)\n",
			name, nb_queues);
	}
	/* No TCP LRO and no RX scatter, so an mbuf is one wire frame
	 * (lcore.c drops a chained one). The checksum verdicts of the
	 * service port's NIC where it offers them: the core then skips its
	 * own sum of a frame marked good (dpdk/rx_csum.h). */
	if (port == eng->port_id) {
		conf.rxmode.offloads =
			info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
						RTE_ETH_RX_OFFLOAD_TCP_CKSUM);
		pr_info("%s: checksums verified by %s\n", name,
			conf.rxmode.offloads == (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
						 RTE_ETH_RX_OFFLOAD_TCP_CKSUM)
				? "the NIC (unknown ones in software)"
			: conf.rxmode.offloads
				? "the NIC in part, the rest in software"
				: "software (the PMD offers no RX checksum "
				  "offload)");
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;

	ret = rte_eth_dev_configure(port, nb_queues, nb_queues, &conf);
	if (ret) {
		pr_warn("rte_eth_dev_configure(%s, %u queues): %s\n", name,
			nb_queues, strerror(-ret));
		return ret;
	}
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret) {
		pr_warn("rte_eth_dev_adjust_nb_rx_tx_desc(%s): %s\n", name,
			strerror(-ret));
		return ret;
	}
	for (q = 0; q < nb_queues; q++) {
		struct rte_eth_txconf txconf = info.default_txconf;

		ret = rte_eth_rx_queue_setup(port, q, nb_rxd,
					     rte_eth_dev_socket_id(port), NULL,
					     eng->pool);
		if (ret) {
			pr_warn("rte_eth_rx_queue_setup(%s, %u): %s\n", name, q,
				strerror(-ret));
			return ret;
		}
		txconf.offloads = conf.txmode.offloads;
		ret = rte_eth_tx_queue_setup(
			port, q, nb_txd, rte_eth_dev_socket_id(port), &txconf);
		if (ret) {
			pr_warn("rte_eth_tx_queue_setup(%s, %u): %s\n", name, q,
				strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_dev_start(port);
	if (ret) {
		pr_warn("rte_eth_dev_start(%s): %s\n", name, strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * The exception path's TAP: a net_tap vdev created at run time, so the
 * user names an interface, not a vdev string. It gets the port's MAC so
 * the kernel's frames leave with the right source address and frames
 * addressed to the port are accepted by the kernel unchanged.
 */
int tap_create(struct engine *eng, const char *ifname, uint16_t nb_queues)
{
	static const char vdev[] = "net_tap_blitz";
	char args[128];
	uint16_t port;
	int ret;

	/* net_tap would attach to an existing TAP as one more queue, and
	 * two processes would share the kernel's frames: refuse. */
	if (if_nametoindex(ifname)) {
		pr_warn("interface '%s' already exists: another blitz-dpdk "
			"running? pick another --tap name\n",
			ifname);
		return -EEXIST;
	}
	snprintf(args, sizeof(args), "iface=%s,mac=" RTE_ETHER_ADDR_PRT_FMT,
		 ifname, RTE_ETHER_ADDR_BYTES(&eng->mac));
	/* Hotplug through EAL: rte_vdev_init's library is not linked. */
	ret = rte_eal_hotplug_add("vdev", vdev, args);
	if (ret) {
		pr_warn("cannot create TAP '%s' (hotplug vdev %s,%s: %s): "
			"is /dev/net/tun there, and the name free?\n",
			ifname, vdev, args, strerror(-ret));
		return ret < 0 ? ret : -EIO;
	}
	ret = rte_eth_dev_get_port_by_name(vdev, &port);
	if (ret) {
		pr_warn("TAP port %s not found after creation\n", vdev);
		return ret;
	}
	ret = port_init(eng, port, nb_queues, false);
	if (ret)
		return ret;
	eng->tap_port_id = port;
	eng->have_tap = true;
	eng->tap_ifname = ifname;
	return 0;
}

void ports_stop(struct engine *eng)
{
	int ret;

	ret = rte_eth_dev_stop(eng->port_id);
	if (ret)
		pr_warn("rte_eth_dev_stop(port %u): %s\n", eng->port_id,
			strerror(-ret));
	rte_eth_dev_close(eng->port_id);
	if (eng->have_tap) {
		rte_eth_dev_stop(eng->tap_port_id);
		rte_eth_dev_close(eng->tap_port_id);
	}
}
