// SPDX-License-Identifier: GPL-2.0-or-later
/* ipc: writing, sending, receiving and reading the frames of ipc.h. The reader
 * trusts nothing: the size is checked against the type and count before a byte
 * of the body is read, an address's family and padding are checked, and
 * the unused bytes of an IPv4 address must be zero, so one frame has one
 * meaning. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/ipc.h"

static void put16(uint8_t *p, uint16_t v);
static void put32(uint8_t *p, uint32_t v);
static uint16_t get16(const uint8_t *p);
static uint32_t get32(const uint8_t *p);
static void put_hdr(uint8_t *buf, enum ipc_type type, uint16_t count,
		    uint32_t id);
static bool ttl_fits(enum ipc_type type, uint32_t ttl);
static bool socket_fits(int family, int socktype);
static bool link_count_fits(enum ipc_type type, uint16_t count);
static int read_addr(const uint8_t *p, enum ipc_type type, struct ipc_addr *out,
		     const char **why);
static int decode_addrs(const uint8_t *buf, size_t len, enum ipc_type type,
			uint16_t count, struct ipc_msg *out, const char **why);
static int decode_pairs(const uint8_t *buf, size_t len, uint16_t count,
			struct ipc_msg *out, const char **why);
static int decode_body(const uint8_t *buf, size_t len, uint16_t type,
		       struct ipc_msg *out, const char **why);

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put_hdr(uint8_t *buf, enum ipc_type type, uint16_t count,
		    uint32_t id)
{
	put16(buf, (uint16_t)type);
	put16(buf + 2, count);
	put32(buf + 4, id);
}

int ipc_encode_addrs(uint8_t *buf, size_t cap, enum ipc_type type, uint32_t id,
		     const struct ipc_addr *addrs, size_t n)
{
	size_t len = IPC_HDR_SIZE + n * IPC_ADDR_SIZE;

	if ((type != IPC_ADD && type != IPC_DEL && type != IPC_SHORTEN) ||
	    n == 0 || n > IPC_ADD_MAX)
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	put_hdr(buf, type, (uint16_t)n, id);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = buf + IPC_HDR_SIZE + i * IPC_ADDR_SIZE;
		int fam = addrs[i].addr.family;

		if ((fam != AF_INET && fam != AF_INET6) ||
		    !ttl_fits(type, addrs[i].ttl))
			return -EINVAL;
		memset(p, 0, IPC_ADDR_SIZE);
		p[0] = fam == AF_INET ? 4 : 6;
		put32(p + 4, addrs[i].ttl);
		memcpy(p + 8, addrs[i].addr.bytes, fam == AF_INET ? 4 : 16);
	}
	return (int)len;
}

int ipc_encode_pairs(uint8_t *buf, size_t cap, uint32_t id,
		     const struct ipc_pair *pairs, size_t n)
{
	size_t len = IPC_HDR_SIZE + n * IPC_PAIR_SIZE;

	if (n == 0 || n > IPC_PAIR_MAX)
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	put_hdr(buf, IPC_PAIR, (uint16_t)n, id);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = buf + IPC_HDR_SIZE + i * IPC_PAIR_SIZE;
		int fam = pairs[i].addr.family;
		size_t alen = fam == AF_INET ? 4 : 16;

		if ((fam != AF_INET && fam != AF_INET6) ||
		    pairs[i].client.family != fam || pairs[i].ttl == 0)
			return -EINVAL;
		memset(p, 0, IPC_PAIR_SIZE);
		p[0] = fam == AF_INET ? 4 : 6;
		put32(p + 4, pairs[i].ttl);
		memcpy(p + 8, pairs[i].client.bytes, alen);
		memcpy(p + 24, pairs[i].addr.bytes, alen);
	}
	return (int)len;
}

int ipc_encode_done(uint8_t *buf, size_t cap, enum ipc_type type, uint32_t id,
		    int32_t status)
{
	if (type != IPC_ADD_DONE && type != IPC_SOCKET_DONE)
		return -EINVAL;
	if (cap < IPC_HDR_SIZE + 4)
		return -ENOSPC;
	put_hdr(buf, type, 0, id);
	put32(buf + IPC_HDR_SIZE, (uint32_t)status);
	return IPC_HDR_SIZE + 4;
}

int ipc_encode_socket(uint8_t *buf, size_t cap, uint32_t id, int family,
		      int socktype)
{
	if (!socket_fits(family, socktype))
		return -EINVAL;
	if (cap < IPC_HDR_SIZE + 8)
		return -ENOSPC;
	put_hdr(buf, IPC_SOCKET, 0, id);
	put32(buf + IPC_HDR_SIZE, (uint32_t)family);
	put32(buf + IPC_HDR_SIZE + 4, (uint32_t)socktype);
	return IPC_HDR_SIZE + 8;
}

/* The count a header-only link frame may carry. */
static bool link_count_fits(enum ipc_type type, uint16_t count)
{
	switch (type) {
	case IPC_HELLO:
	case IPC_NFQ:
		return true;
	case IPC_RULES:
		return count <= IPC_RULES_DRAINED;
	case IPC_GATE:
	case IPC_FORGET:
		return count == 0;
	default:
		return false;
	}
}

int ipc_encode_link(uint8_t *buf, size_t cap, enum ipc_type type,
		    uint16_t count, uint32_t id)
{
	if (!link_count_fits(type, count))
		return -EINVAL;
	if (cap < IPC_HDR_SIZE)
		return -ENOSPC;
	put_hdr(buf, type, count, id);
	return IPC_HDR_SIZE;
}

int ipc_encode_verdict(uint8_t *buf, size_t cap, uint16_t queue, uint32_t id,
		       uint32_t verdict, uint32_t mark)
{
	if (cap < IPC_HDR_SIZE + 8)
		return -ENOSPC;
	put_hdr(buf, IPC_VERDICT, queue, id);
	put32(buf + IPC_HDR_SIZE, verdict);
	put32(buf + IPC_HDR_SIZE + 4, mark);
	return IPC_HDR_SIZE + 8;
}

/* The only sockets the parent makes: UDP and TCP to the upstreams. */
static bool socket_fits(int family, int socktype)
{
	return (family == AF_INET || family == AF_INET6) &&
	       (socktype == SOCK_DGRAM || socktype == SOCK_STREAM);
}

/* A del carries no timeout, a shorten a positive one, an add any. */
static bool ttl_fits(enum ipc_type type, uint32_t ttl)
{
	if (type == IPC_DEL)
		return ttl == 0;
	if (type == IPC_SHORTEN)
		return ttl != 0;
	return true;
}

static int read_addr(const uint8_t *p, enum ipc_type type, struct ipc_addr *out,
		     const char **why)
{
	static const uint8_t zero[12];

	if (p[0] != 4 && p[0] != 6) {
		*why = "address family neither 4 nor 6";
		return -EINVAL;
	}
	if (p[1] || p[2] || p[3] || (p[0] == 4 && memcmp(p + 12, zero, 12))) {
		*why = "padding not zero";
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->addr.family = p[0] == 4 ? AF_INET : AF_INET6;
	out->ttl = get32(p + 4);
	if (!ttl_fits(type, out->ttl)) {
		*why = type == IPC_DEL ? "a del with a timeout"
				       : "a shorten to no timeout";
		return -EINVAL;
	}
	memcpy(out->addr.bytes, p + 8, p[0] == 4 ? 4 : 16);
	return 0;
}

/* The addresses of an add, del or shorten frame: count of them, each
 * IPC_ADDR_SIZE bytes, filling the frame exactly. */
static int decode_addrs(const uint8_t *buf, size_t len, enum ipc_type type,
			uint16_t count, struct ipc_msg *out, const char **why)
{
	if (count == 0 || count > IPC_ADD_MAX) {
		*why = "address count out of range";
		return -EINVAL;
	}
	if (len != IPC_HDR_SIZE + (size_t)count * IPC_ADDR_SIZE) {
		*why = "frame size does not match its count";
		return -EINVAL;
	}
	for (size_t i = 0; i < count; i++) {
		if (read_addr(buf + IPC_HDR_SIZE + i * IPC_ADDR_SIZE, type,
			      &out->addrs[i], why) != 0)
			return -EINVAL;
	}
	return 0;
}

/* The records of a pair frame: count of them, each IPC_PAIR_SIZE bytes,
 * filling the frame exactly; an IPv4 record's unused bytes are zero. */
static int decode_pairs(const uint8_t *buf, size_t len, uint16_t count,
			struct ipc_msg *out, const char **why)
{
	static const uint8_t zero[12];

	if (count == 0 || count > IPC_PAIR_MAX ||
	    len != IPC_HDR_SIZE + (size_t)count * IPC_PAIR_SIZE) {
		*why = "pair count out of range, or the frame's size not its "
		       "count's";
		return -EINVAL;
	}
	for (size_t i = 0; i < count; i++) {
		const uint8_t *p = buf + IPC_HDR_SIZE + i * IPC_PAIR_SIZE;
		struct ipc_pair *o = &out->pairs[i];
		size_t alen = p[0] == 4 ? 4 : 16;

		if ((p[0] != 4 && p[0] != 6) || p[1] || p[2] || p[3] ||
		    (p[0] == 4 &&
		     (memcmp(p + 12, zero, 12) || memcmp(p + 28, zero, 12)))) {
			*why = "a pair's family or padding";
			return -EINVAL;
		}
		memset(o, 0, sizeof(*o));
		o->client.family = o->addr.family =
		    p[0] == 4 ? AF_INET : AF_INET6;
		o->ttl = get32(p + 4);
		if (o->ttl == 0) {
			*why = "a pair without a timeout";
			return -EINVAL;
		}
		memcpy(o->client.bytes, p + 8, alen);
		memcpy(o->addr.bytes, p + 24, alen);
	}
	return 0;
}

int ipc_decode(const uint8_t *buf, size_t len, struct ipc_msg *out,
	       const char **why)
{
	uint16_t type;

	if (len > IPC_FRAME_MAX) {
		*why = "oversized frame";
		return -EINVAL;
	}
	if (len < IPC_HDR_SIZE) {
		*why = "frame shorter than its header";
		return -EINVAL;
	}
	type = get16(buf);
	out->count = get16(buf + 2);
	out->id = get32(buf + 4);
	out->status = 0;
	if (decode_body(buf, len, type, out, why) != 0)
		return -EINVAL;
	out->type = (enum ipc_type)type;
	return 0;
}

/* What follows the header of a frame of this type, checked against the
 * type's size and count. */
static int decode_body(const uint8_t *buf, size_t len, uint16_t type,
		       struct ipc_msg *out, const char **why)
{
	uint16_t count = out->count;

	switch (type) {
	case IPC_ADD:
	case IPC_DEL:
	case IPC_SHORTEN:
		if (decode_addrs(buf, len, (enum ipc_type)type, count, out,
				 why) != 0)
			return -EINVAL;
		break;
	case IPC_PAIR:
		if (decode_pairs(buf, len, count, out, why) != 0)
			return -EINVAL;
		break;
	case IPC_ADD_DONE:
	case IPC_SOCKET_DONE:
		if (count != 0 || len != IPC_HDR_SIZE + 4) {
			*why = "frame size does not match its type";
			return -EINVAL;
		}
		out->status = (int32_t)get32(buf + IPC_HDR_SIZE);
		break;
	case IPC_SOCKET:
		if (count != 0 || len != IPC_HDR_SIZE + 8) {
			*why = "frame size does not match its type";
			return -EINVAL;
		}
		out->family = (int)get32(buf + IPC_HDR_SIZE);
		out->socktype = (int)get32(buf + IPC_HDR_SIZE + 4);
		if (!socket_fits(out->family, out->socktype)) {
			*why = "a socket neither UDP nor TCP over IPv4 or IPv6";
			return -EINVAL;
		}
		break;
	case IPC_HELLO:
	case IPC_RULES:
	case IPC_GATE:
	case IPC_FORGET:
	case IPC_NFQ:
		if (len != IPC_HDR_SIZE ||
		    !link_count_fits((enum ipc_type)type, count)) {
			*why = "frame size or count does not match its type";
			return -EINVAL;
		}
		break;
	case IPC_VERDICT:
		if (len != IPC_HDR_SIZE + 8) {
			*why = "frame size does not match its type";
			return -EINVAL;
		}
		out->verdict = get32(buf + IPC_HDR_SIZE);
		out->mark = get32(buf + IPC_HDR_SIZE + 4);
		break;
	default:
		*why = "unknown frame type";
		return -EINVAL;
	}
	return 0;
}

int ipc_send(int chan, const uint8_t *frame, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)frame, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	ssize_t n;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(chan, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

/* The control space a received frame may fill: one descriptor is
 * allowed, a few more are room to see (and close) what a broken peer
 * sent. */
union ipc_ctl {
	char buf[CMSG_SPACE(sizeof(int) * 4)];
	struct cmsghdr align;
};

/* The descriptors a received message carried: 0 and its one descriptor
 * (or none) in *fd; -EBADMSG, every one closed, for more than one, a
 * control message of another kind or cut control data. */
static int take_fds(struct msghdr *mh, int *fd)
{
	struct cmsghdr *c;
	size_t nfd = 0;
	bool bad = false;

	*fd = -1;
	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = true;
			continue;
		}
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
			if (nfd++ == 0)
				*fd = got;
			else
				close(got);
		}
	}
	if (bad || nfd > 1 || (mh->msg_flags & MSG_CTRUNC)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	return 0;
}

ssize_t ipc_recv(int chan, uint8_t *buf, size_t cap, int flags, int *fd)
{
	union ipc_ctl ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(chan, &mh, flags | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (take_fds(&mh, fd) != 0)
		return -EBADMSG;
	return n;
}

int ipc_send_many(int chan, uint8_t *const *frames, const size_t *lens,
		  size_t n)
{
	struct mmsghdr msgs[IPC_INBOX_FRAMES];
	struct iovec iov[IPC_INBOX_FRAMES];
	int sent, whole = 0;

	if (n > IPC_INBOX_FRAMES)
		n = IPC_INBOX_FRAMES;
	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = frames[i];
		iov[i].iov_len = lens[i];
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	do
		sent = sendmmsg(chan, msgs, (unsigned)n, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	while (whole < sent && msgs[whole].msg_len == lens[whole])
		whole++;
	return whole > 0 || sent == 0 ? whole : -EMSGSIZE;
}

struct ipc_inbox {
	size_t cap;
	int n;
	struct mmsghdr msgs[IPC_INBOX_FRAMES];
	struct iovec iov[IPC_INBOX_FRAMES];
	union ipc_ctl ctl[IPC_INBOX_FRAMES];
	bool fds_taken[IPC_INBOX_FRAMES];
	uint8_t bytes[];
};

struct ipc_inbox *ipc_inbox_new(size_t cap)
{
	struct ipc_inbox *in;

	if (cap == 0 || cap > SIZE_MAX / IPC_INBOX_FRAMES - sizeof(*in))
		return NULL;
	in = calloc(1, sizeof(*in) + cap * IPC_INBOX_FRAMES);
	if (in == NULL)
		return NULL;
	in->cap = cap;
	for (size_t i = 0; i < IPC_INBOX_FRAMES; i++) {
		in->iov[i].iov_base = in->bytes + i * cap;
		in->iov[i].iov_len = cap;
		in->msgs[i].msg_hdr.msg_iov = &in->iov[i];
		in->msgs[i].msg_hdr.msg_iovlen = 1;
		in->msgs[i].msg_hdr.msg_control = in->ctl[i].buf;
	}
	return in;
}

/* Descriptors of frames the caller never took are closed. */
void ipc_inbox_free(struct ipc_inbox *in)
{
	int fd;

	if (in == NULL)
		return;
	for (int i = 0; i < in->n; i++)
		if (!in->fds_taken[i] &&
		    take_fds(&in->msgs[i].msg_hdr, &fd) == 0 && fd >= 0)
			close(fd);
	free(in);
}

int ipc_inbox_recv(struct ipc_inbox *in, int chan, int flags)
{
	int fd, n;

	/* what the last batch's caller left (a stop) is closed */
	for (int i = 0; i < in->n; i++)
		if (!in->fds_taken[i] &&
		    take_fds(&in->msgs[i].msg_hdr, &fd) == 0 && fd >= 0)
			close(fd);
	in->n = 0;
	/* recvmmsg writes back each length, flags and control length */
	for (size_t i = 0; i < IPC_INBOX_FRAMES; i++) {
		in->msgs[i].msg_hdr.msg_controllen = sizeof(in->ctl[i].buf);
		in->fds_taken[i] = false;
	}
	do
		n = recvmmsg(chan, in->msgs, IPC_INBOX_FRAMES,
			     flags | MSG_TRUNC | MSG_CMSG_CLOEXEC, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	in->n = n;
	return n;
}

ssize_t ipc_inbox_frame(struct ipc_inbox *in, size_t i, const uint8_t **data,
			int *fd)
{
	*fd = -1;
	*data = in->bytes + i * in->cap;
	if (i >= (size_t)in->n || in->fds_taken[i])
		return -EINVAL;
	in->fds_taken[i] = true;
	if (take_fds(&in->msgs[i].msg_hdr, fd) != 0)
		return -EBADMSG;
	return (ssize_t)in->msgs[i].msg_len;
}

int ipc_request_socket(int chan, uint32_t id, int family, int socktype)
{
	uint8_t buf[IPC_FRAME_MAX + 1];
	struct ipc_msg *m = NULL;
	const char *why = "";
	int len = ipc_encode_socket(buf, sizeof(buf), id, family, socktype);
	int rc, fd = -1;
	ssize_t n;

	if (len < 0)
		return len;
	rc = ipc_send(chan, buf, (size_t)len, -1);
	if (rc != 0)
		return rc;
	n = ipc_recv(chan, buf, sizeof(buf), 0, &fd);
	if (n == 0)
		return -EPIPE;
	if (n < 0)
		return (int)n;
	rc = -ENOMEM;
	m = malloc(sizeof(*m));
	if (m == NULL)
		goto out;
	rc = -EPROTO;
	if ((size_t)n > sizeof(buf) - 1 ||
	    ipc_decode(buf, (size_t)n, m, &why) != 0 ||
	    m->type != IPC_SOCKET_DONE || m->id != id)
		goto out;
	if (m->status != 0) {
		rc = m->status < 0 ? m->status : -EPROTO;
		goto out;
	}
	if (fd >= 0) {
		rc = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(m);
	return rc;
}
