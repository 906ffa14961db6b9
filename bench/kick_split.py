#!/usr/bin/env python3
"""kick_split.py - split a server's perf samples (perf record -a -g) into
what its af_xdp tx kick is made of.

    perf script -i perf.data -F cpu,pid,ip,sym,dso | kick_split.py PID [CPU] [lstack|kernel]
"""
import os
import re
import sys

# Reads `perf script` output with call chains (leaf first), keeps the samples
# of process PID (on CPU if given) and puts each into one bucket: the
# leaf-most frame found in a bucket's marker set decides (so a copy under
# the skb build is the build's, a wake-up under the client's TCP receive is
# the wake-up's). Buckets inside the kick (a sample whose chain holds
# __x64_sys_sendto): af_xdp's own transmit (the descriptor, the skb, the
# copy), veth's xmit, softirq entry (bottom halves enabled again), the
# client namespace's IP and TCP receive, the wake-up of the reader
# (ep_poll_callback, try_to_wake_up, the IPI), the system call's entry and
# exit. Outside the kick: recvfrom (the af_xdp rx wake-up), other kernel,
# and user space by object. Prints % of the process's samples and, with
# REQUESTS given (env; HZ: the sampling rate, default 2000), microseconds
# per request at the sampling rate.
#
# "kernel": the same split of a kernel redis-server, whose sends are its
# write() calls (TCP send, IP output, veth, and then the same client
# receive at bottom-half enable): what the kernel server pays for the
# client on its core, in the same buckets.

MARKERS = [
    # (bucket, frames) - checked leaf first; the first frame that is in a set wins
    ("kick: IPI to the client's CPU (RPS hand-off, remote wake-up; a VM exit here)",
     {"native_write_msr", "x2apic_send_IPI", "x2apic_send_IPI_mask", "net_rps_send_ipi",
      "smp_call_function_single_async", "generic_exec_single", "native_send_call_func_single_ipi",
      "send_call_function_single_ipi", "kvm_send_ipi_mask", "__send_ipi_mask", "native_smp_send_reschedule"}),
    ("kick: wake-up of the client (ep_poll_callback, ttwu; its IPI above)",
     {"try_to_wake_up", "ep_poll_callback", "__wake_up_common", "__wake_up_sync_key", "sock_def_readable",
      "__wake_up", "__wake_up_common_lock", "ttwu_queue_wakelist", "default_wake_function"}),
    ("kick: client TCP receive (tcp_v4_rcv and below)", {"tcp_v4_rcv", "tcp_rcv_established", "tcp_v4_do_rcv"}),
    ("kick: client IP receive (netif_receive, ip_rcv)",
     {"ip_rcv", "ip_local_deliver", "ip_local_deliver_finish", "ip_rcv_finish", "ip_protocol_deliver_rcu",
      "__netif_receive_skb_core", "__netif_receive_skb_one_core", "__netif_receive_skb", "process_backlog",
      "net_rx_action", "__napi_poll", "netif_receive_skb", "ip_sublist_rcv", "ip_list_rcv"}),
    ("kick: softirq entry/exit (bh enable)",
     {"handle_softirqs", "__do_softirq", "do_softirq", "__local_bh_enable_ip", "do_softirq.part.0"}),
    ("kick: veth xmit (to the client's backlog)",
     {"veth_xmit", "__netif_rx", "netif_rx", "netif_rx_internal", "enqueue_to_backlog", "veth_forward_skb",
      "dev_forward_skb", "__dev_forward_skb", "__dev_forward_skb2", "eth_type_trans"}),
    ("kick: skb build and copy (af_xdp transmit; the kernel's: TCP's skb)",
     {"xsk_generic_xmit", "__xsk_generic_xmit", "xsk_build_skb", "xsk_build_skb_zerocopy", "sock_alloc_send_pskb",
      "sock_alloc_send_skb", "__dev_direct_xmit", "xsk_sendmsg", "__xsk_sendmsg", "xsk_destruct_skb",
      "xsk_cq_submit_addr_locked", "xsk_tx_peek_desc", "alloc_skb_with_frags", "__alloc_skb", "skb_put"}),
    ("kick: preempted (another task ran)", {"finish_task_switch.isra.0", "finish_task_switch", "__schedule"}),
]
KICK = {"__x64_sys_sendto", "__sys_sendto", "__send", "__libc_send", "send", "__libc_sendto", "sendto"}
KICK_KERNEL = {"__x64_sys_write", "ksys_write", "__x64_sys_writev", "do_writev", "__libc_write", "write"}
RECV = {"__x64_sys_recvfrom", "__sys_recvfrom", "__libc_recvfrom", "recvfrom"}


def main(argv):
    pid = argv[1]
    cpu = argv[2] if len(argv) > 2 and argv[2] != "-" else None
    kick_set = KICK_KERNEL if len(argv) > 3 and argv[3] == "kernel" else KICK
    reqs = float(os.environ.get("REQUESTS", "0") or 0)
    hz = float(os.environ.get("HZ", "2000"))
    counts = {}
    total = 0
    in_kick = 0
    chain = []
    head = None

    def flush():
        nonlocal total, in_kick
        if head is None:
            return
        hcpu, hpid = head
        if hpid != pid or (cpu is not None and hcpu != cpu):
            return
        total += 1
        syms = [s for s, _ in chain]
        kick = any(x in kick_set for x in syms)
        recv = not kick and any(x in RECV for x in syms)
        if kick:
            in_kick += 1
        bucket = None
        for s in syms:
            for name, frames in MARKERS:
                if s in frames and (kick or not name.startswith("kick")):
                    bucket = name
                    break
            if bucket:
                break
        if recv:
            bucket = "recvfrom (af_xdp rx wake-up: empty rounds)"
        if bucket is None:
            leaf_dso = chain[0][1] if chain else "?"
            if kick:
                bucket = "kick: system call entry/exit, other kernel (the kernel's: TCP/IP output)"
            elif "kernel" in leaf_dso:
                bucket = "other kernel"
            else:
                bucket = "user: " + os.path.basename(leaf_dso)
        counts[bucket] = counts.get(bucket, 0) + 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            head = None
            chain = []
            continue
        if not line.startswith("\t"):
            m = re.match(r"^\s*\S*?\s*(\d+)/?\d*\s+\[(\d+)\]", line)
            m2 = re.match(r"^\s*(\d+)\s+\[(\d+)\]", line)
            mm = m2 or m
            head = (str(int(mm.group(2))), mm.group(1)) if mm else None
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        m = re.match(r"^(.*?)\s+\((.*)\)$", rest)
        sym, dso = (m.group(1), m.group(2)) if m else (rest, "?")
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        chain.append((sym, dso))
    flush()
    what = "write() (the kernel server's sends)" if kick_set is KICK_KERNEL else "sendto (the af_xdp kick)"
    print(f"samples of pid {pid}{' on cpu ' + cpu if cpu else ''}: {total}; inside {what}: {in_kick}"
          f" ({100.0 * in_kick / total if total else 0:.1f}%)")
    for name, c in sorted(counts.items(), key=lambda kv: -kv[1]):
        us = f"  {c / hz * 1e6 / reqs:6.2f} us/request" if reqs else ""
        print(f"  {100.0 * c / total:5.1f}%  {c:7d}{us}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
