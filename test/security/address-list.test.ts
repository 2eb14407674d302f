import { describe, expect, it } from 'vitest';
import { AddressList, addressEntryProblem } from '../../src/security/address-list.js';

describe('address lists (SIGNALGATE_TRUST_PROXY, source allowedIps)', () => {
  it.each([
    '203.0.113.7',
    '10.0.0.0/8',
    '0.0.0.0/0',
    '192.0.2.128/25',
    '2001:db8::/32',
    '::1',
    '2001:db8::1/128',
    '::/0',
    '::ffff:192.0.2.1',
  ])('takes %s', (entry) => expect(addressEntryProblem(entry)).toBeNull());

  it.each([
    ['203.0.113', 'is not an IPv4 or IPv6 address'],
    ['127.1', 'is not an IPv4 or IPv6 address'],
    ['010.0.0.1', 'is not an IPv4 or IPv6 address'],
    ['example.com', 'is not an IPv4 or IPv6 address'],
    ['fe80::1%eth0', 'is not an IPv4 or IPv6 address'],
    ['10.0.0.0/33', 'prefix length that is not a whole number from 0 to 32'],
    ['10.0.0.0/', 'prefix length'],
    ['10.0.0.0/255.0.0.0', 'prefix length'],
    ['2001:db8::/129', 'from 0 to 128'],
    ['10.0.0.1/8', 'write the network (10.0.0.0/8)'],
    ['2001:db8::1/32', 'write the network (2001:db8::/32)'],
  ])('refuses %s, saying why', (entry, why) => {
    expect(addressEntryProblem(entry)).toContain(why);
    expect(addressEntryProblem(entry)).toContain(`'${entry}'`);
  });

  it('matches addresses and ranges of both families, an IPv4-mapped address as its IPv4 one', () => {
    const list = new AddressList(['203.0.113.7', '10.0.0.0/8', '2001:db8::/32']);
    expect(list.includes('203.0.113.7')).toBe(true);
    expect(list.includes('203.0.113.8')).toBe(false);
    expect(list.includes('10.255.0.1')).toBe(true);
    expect(list.includes('11.0.0.1')).toBe(false);
    expect(list.includes('::ffff:10.1.2.3')).toBe(true);
    expect(list.includes('2001:db8:ffff::1')).toBe(true);
    expect(list.includes('2001:db9::1')).toBe(false);
    expect(list.includes('not an address')).toBe(false);
    expect(list.includes('')).toBe(false);
    expect(new AddressList([]).includes('203.0.113.7')).toBe(false);
  });
});
