#!/bin/bash
# scripts/lib_netns.sh - sourced by scripts/testbed.sh and the tests that
# build a topology of their own: a veth pair between two network
# namespaces. Owns no namespace: callers create them and delete them.

# veth_pair NS_A IF_A ADDR_A NS_B IF_B ADDR_B - a veth IF_A in NS_A joined
# to IF_B in NS_B, each with its address (with its prefix length), both up
# with lo up on both sides.
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
	ip -n "$1" link set lo up
	ip -n "$4" link set lo up
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}
