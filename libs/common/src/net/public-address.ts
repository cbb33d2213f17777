import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses an outbound call made on a user's behalf must not reach unless the operator allows it:
 * loopback, private networks (RFC 1918, unique local), link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, "this network", multicast and reserved ranges.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP address, v4 or v6) is a public one. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1] : address;
  const family = isIP(ip);
  if (family === 0) {
    return false;
  }
  return !NON_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export class NonPublicAddressError extends Error {
  constructor(host: string) {
    super(`${host} resolves to a private, loopback or reserved address, which outbound calls may not reach`);
    this.name = 'NonPublicAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for sockets that refuses hosts resolving to a non-public address. Given to the
 * connection itself (undici's `connect.lookup`), so the address checked is the address connected
 * to: a name that resolves to a public address when registered and to a private one later (DNS
 * rebinding) is refused too.
 */
export function publicOnlyLookup(
  hostname: string,
  options: LookupOptions | LookupAllOptions,
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, []);
      return;
    }
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused || addresses.length === 0) {
      callback(Object.assign(new NonPublicAddressError(hostname), { code: 'ENONPUBLIC' }), []);
      return;
    }
    if ((options as LookupAllOptions).all) {
      callback(null, addresses);
    } else {
      callback(null, addresses[0].address, addresses[0].family);
    }
  });
}
