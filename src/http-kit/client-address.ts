import proxyaddr from '@fastify/proxy-addr';
import type { IncomingMessage } from 'node:http';
import { AddressList } from '../security/address-list.js';

/** The address a request came from, as logged and as source allowlists judge it. */
export type ClientAddressOf = (req: IncomingMessage) => string;

/**
 * How the client's address is found (SIGNALGATE_TRUST_PROXY). With no trusted proxies it is
 * the socket's peer: an X-Forwarded-For header is anyone's to write. With some, the header is
 * read from the right, hop by hop, for as long as the hop it came from is a trusted proxy; the
 * first address that is not one is the client's (@fastify/proxy-addr's rule, what Fastify
 * and Express do). A client cannot pass itself off as another by sending the header itself:
 * its own entries are left of the address the proxy appended.
 */
export function clientAddressResolver(trustedProxies: readonly string[]): ClientAddressOf {
  if (trustedProxies.length === 0) return (req) => unmapped(req.socket.remoteAddress ?? '');
  const trusted = new AddressList(trustedProxies);
  const trust = (address: string) => trusted.includes(address);
  // A socket closed before its address was first read has none left to give.
  return (req) => (req.socket.remoteAddress === undefined ? '' : unmapped(proxyaddr(req, trust)));
}

/** `::ffff:203.0.113.7`, what a dual-stack socket reports for an IPv4 peer, as `203.0.113.7`. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
