import * as os from 'node:os';
import { libcFunction } from '../libc';

/*
 * The other end of a Unix socket, which /proc does not show: Linux's socket diagnostics
 * (sock_diag(7), the netlink family `ss -x` reads) answer one socket's query with the inode of
 * its peer. Bound through koffi as tcgetattr.ts is; one netlink socket per query, closed at once.
 */

const AF_NETLINK = 16;
const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 1;
const MSG_DONTWAIT = 0x40;
/** unix_diag_req.udiag_show: the peer's inode (UNIX_DIAG_PEER in the answer). */
const UDIAG_SHOW_PEER = 0x4;
const UNIX_DIAG_PEER = 2;
/** Any cookie: the socket is named by its inode alone (INET_DIAG_NOCOOKIE). */
const NO_COOKIE = 0xffffffff;
/** nlmsghdr, then unix_diag_req (family, protocol, pad, states, ino, show, cookie[2]). */
const HEADER_BYTES = 16;
const REQUEST_BYTES = HEADER_BYTES + 24;
/** nlmsghdr, then unix_diag_msg (family, type, state, pad, ino, cookie[2]), then attributes. */
const ANSWER_ATTRIBUTES_AT = HEADER_BYTES + 16;
const ANSWER_BYTES = 4096;

interface Calls {
  socket(domain: number, type: number, protocol: number): number;
  send(fd: number, buf: Buffer, len: number, flags: number): number;
  recv(fd: number, buf: Buffer, len: number, flags: number): number;
  close(fd: number): number;
}

/** The bound calls; null once binding failed (not Linux, no prebuilt koffi): no peer is ever known. */
let bound: Calls | null | undefined;

function bind(): Calls | null {
  if (bound !== undefined) return bound;
  bound = libcFunction((libc) => ({
    socket: libc.func('int socket(int domain, int type, int protocol)') as Calls['socket'],
    send: libc.func('long send(int fd, const uint8_t *buf, size_t len, int flags)') as Calls['send'],
    recv: libc.func('long recv(int fd, _Out_ uint8_t *buf, size_t len, int flags)') as Calls['recv'],
    close: libc.func('int close(int fd)') as Calls['close'],
  }));
  return bound;
}

const little = os.endianness() === 'LE';
const answer = Buffer.alloc(ANSWER_BYTES);
/** The query, the same for every socket but its inode (at INODE_AT). */
const request = Buffer.alloc(REQUEST_BYTES);
const INODE_AT = 24;
{
  const q = new DataView(request.buffer, request.byteOffset, REQUEST_BYTES);
  q.setUint32(0, REQUEST_BYTES, little);
  q.setUint16(4, SOCK_DIAG_BY_FAMILY, little);
  q.setUint16(6, NLM_F_REQUEST, little);
  q.setUint32(8, 1, little); // sequence; the port (12) is 0: to the kernel
  q.setUint8(16, AF_UNIX); // protocol and padding (17-19) are 0
  q.setUint32(20, 0xffffffff, little); // any state
  q.setUint32(28, UDIAG_SHOW_PEER, little);
  q.setUint32(32, NO_COOKIE, little);
  q.setUint32(36, NO_COOKIE, little);
}

/**
 * The inode of the socket connected to Unix socket `ino`, or null: not connected (a listener, an
 * unconnected datagram socket), gone, in another network namespace, or no way to ask here.
 */
export function unixPeerOf(ino: number): number | null {
  const calls = bind();
  if (!calls || !Number.isInteger(ino) || ino <= 0 || ino > 0xffffffff) return null;
  const fd = calls.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return null;
  try {
    if (little) request.writeUInt32LE(ino, INODE_AT);
    else request.writeUInt32BE(ino, INODE_AT);
    if (calls.send(fd, request, REQUEST_BYTES, 0) !== REQUEST_BYTES) return null;
    // The kernel answers while sending: the answer is queued when send returns.
    const n = calls.recv(fd, answer, ANSWER_BYTES, MSG_DONTWAIT);
    return n > 0 ? peerIn(new DataView(answer.buffer, answer.byteOffset, Number(n))) : null;
  } finally {
    calls.close(fd);
  }
}

/** The UNIX_DIAG_PEER attribute of an answer, if it has one. */
function peerIn(a: DataView): number | null {
  if (a.byteLength < ANSWER_ATTRIBUTES_AT) return null;
  const length = Math.min(a.getUint32(0, little), a.byteLength);
  if (a.getUint16(4, little) !== SOCK_DIAG_BY_FAMILY) return null; // NLMSG_ERROR: no such socket
  for (let at = ANSWER_ATTRIBUTES_AT; at + 4 <= length;) {
    const size = a.getUint16(at, little);
    if (size < 4) return null;
    if (a.getUint16(at + 2, little) === UNIX_DIAG_PEER && size >= 8) return a.getUint32(at + 4, little);
    at += (size + 3) & ~3;
  }
  return null;
}
