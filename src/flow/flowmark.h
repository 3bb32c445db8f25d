/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowmark: what the name check's rules (fwrules.c) and its queue reader
 * (daemon/flowcheck.c) agree on. An undecided flow's packets go to queue
 * FLOW_QUEUE_NUM; the verdict sends a packet back through the chain
 * (NF_REPEAT) carrying the packet mark FLOW_MARK_ACCEPT or
 * FLOW_MARK_REJECT, and the chain's first rules copy that into the
 * flow's connmark, so every later packet of the flow is decided in the
 * kernel. The bits keep clear of the default socket `mark` (0x64000000)
 * and of the bits kube-proxy, Cilium, Istio and the AWS CNI use; a
 * packet mark is matched whole, so a program's own mark never counts.
 * A refused TCP flow is reset, a refused UDP (QUIC) flow dropped. */
#ifndef DNSFENCE_FLOWMARK_H
#define DNSFENCE_FLOWMARK_H

#define FLOW_QUEUE_NUM 4453
/* QUIC: a long-header packet of a flow already accepted (a new Initial
 * on the same four-tuple may open a second connection to another name)
 * goes to this queue, so the reader knows the flow's verdict is in. */
#define FLOW_QUEUE_RECHECK 4454
#define FLOW_MARK_ACCEPT   0x100000u
#define FLOW_MARK_REJECT   0x200000u
#define FLOW_MARK_MASK	   0x300000u
/* A TCP flow accepted whose judged bytes the server has not yet
 * acknowledged: the verdict bits read accept, and the guard bit sends the
 * flow's packets to FLOW_QUEUE_RECHECK, where every byte of the judged
 * range sent again must equal the copy judged (a sender can rewrite a
 * queued page: MSG_ZEROCOPY, sendfile). The accept mark, repeated, clears
 * the bit once the client's socket reports the range acknowledged. */
#define FLOW_MARK_GUARD_BIT 0x400000u
#define FLOW_MARK_GUARD	    (FLOW_MARK_ACCEPT | FLOW_MARK_GUARD_BIT)
#define FLOW_MARK_ALL	    (FLOW_MARK_MASK | FLOW_MARK_GUARD_BIT)
/* A TCP flow to a set member on a checked port, from its SYN on, until
 * its verdict: its packets go to the queue whatever the set holds later
 * (an entry may time out before the flow sends its first bytes). */
#define FLOW_MARK_PENDING 0x300000u

#endif
