import proxyaddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * A list of IPv4/IPv6 addresses and CIDR ranges (`203.0.113.7`, `10.0.0.0/8`, `2001:db8::/32`)
 * that answers whether an address is in it. The matching is @fastify/proxy-addr's (what
 * Fastify trusts proxies with): an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, what a
 * dual-stack socket reports) matches the IPv4 entries.
 */
export class AddressList {
  private readonly matches: (address: string) => boolean;

  /** `entries` must each be valid (`addressEntryProblem` answered null). */
  constructor(readonly entries: readonly string[]) {
    const trust = proxyaddr.compile([...entries]);
    this.matches = (address) => trust(address, 0);
  }

  includes(address: string): boolean {
    return this.matches(address);
  }
}

/**
 * Why `entry` is not an address or a CIDR range, or null when it is. Only the usual forms are
 * taken (dotted quads, RFC 4291 IPv6, a prefix length), not the shorthand some parsers allow
 * (`127.1`, netmasks, zone ids). A range with bits set past its prefix (`10.0.0.1/8`) is
 * refused rather than guessed at: it may be a typo for a single address.
 */
export function addressEntryProblem(entry: string): string | null {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = address.includes('%') ? 0 : isIP(address);
  if (family === 0)
    return `'${entry}' is not an IPv4 or IPv6 address or CIDR range (like 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)`;
  if (slash === -1) return null;
  const prefixText = entry.slice(slash + 1);
  const bits = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
    return `'${entry}' has a prefix length that is not a whole number from 0 to ${bits}`;
  }
  const network = (family === 4 ? ipaddr.IPv4 : ipaddr.IPv6).networkAddressFromCIDR(entry);
  if (network.toString() !== ipaddr.parse(address).toString()) {
    return `'${entry}' has bits set past its /${prefixText} prefix; write the network (${network.toString()}/${prefixText}) or a single address`;
  }
  return null;
}
