/** Client IP helpers: which address a request came from, and whether it is worth a GeoIP lookup. */
import { BlockList, isIP } from 'node:net';

/**
 * Strips what proxies and dual-stack sockets add around an address: an IPv4-mapped `::ffff:`
 * prefix, `[v6]:port` brackets, and a `:port` suffix when there is exactly one colon (so bare
 * IPv6 addresses are left alone). Returns null when what is left is not an IP address.
 */
export function normalizeIp(raw: string | undefined | null): string | null {
  if (!raw) return null;
  let ip = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  if (bracketed) ip = bracketed[1];
  else if (ip.split(':').length === 2) ip = ip.slice(0, ip.indexOf(':'));
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip)) ip = ip.slice(7);
  return isIP(ip) ? ip : null;
}

/**
 * The client's address. With `trustProxy` the first `X-Forwarded-For` entry (the original
 * client, as the nearest proxy saw it) wins; otherwise only the socket is believed, since any
 * client can forge the header.
 */
export function clientIp(
  socketAddress: string | undefined,
  xForwardedFor: string | undefined,
  trustProxy: boolean,
): string | null {
  if (trustProxy && xForwardedFor) {
    const forwarded = normalizeIp(xForwardedFor.split(',')[0]);
    if (forwarded) return forwarded;
  }
  return normalizeIp(socketAddress);
}

// Ranges that never locate a real client: private, loopback, link-local, CGNAT, documentation,
// multicast and other reserved blocks (RFC 6890 and friends). IPv4 as [network, prefix length].
const NON_PUBLIC_V4: [number, number][] = (
  [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 3],
  ] as const
).map(([net, prefix]) => [ipv4ToInt(net), prefix]);

const NON_PUBLIC_V6 = new BlockList();
for (const [net, prefix] of [
  ['::', 127],
  // IPv4-mapped in hex form; the dotted form is checked as IPv4 below.
  ['::ffff:0:0', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC_V6.addSubnet(net, prefix, 'ipv6');
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function isPublicV4(ip: string): boolean {
  const value = ipv4ToInt(ip);
  // Plain arithmetic on the 32-bit value: several times faster than BlockList for the hot path.
  return !NON_PUBLIC_V4.some(([net, prefix]) => Math.floor(value / 2 ** (32 - prefix)) === Math.floor(net / 2 ** (32 - prefix)));
}

/** True for addresses that can be located (public unicast); false for private/reserved/invalid. */
export function isPublicIp(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return isPublicV4(ip);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return isPublicV4(mapped[1]);
  return !NON_PUBLIC_V6.check(ip, 'ipv6');
}

/** The bytes of a valid IP address (as `isIP` accepts it): 4 for IPv4, 16 for IPv6. */
export function ipBytes(ip: string): Uint8Array {
  if (isIP(ip) === 4) return Uint8Array.from(ip.split('.'), Number);
  const bytes = new Uint8Array(16);
  let text = ip.replace(/%.*$/, ''); // a zone index names an interface, not part of the address
  // A dotted IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = groups(head);
  const back = tail === null ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}
