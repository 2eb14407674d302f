import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Below this, ports are left to system services. */
const LOWEST = 10_000;

/**
 * A loopback port nobody listens on right now (for a counterparty or a server to take next).
 *
 * Picked at random below the kernel's ephemeral range, not by listening on port 0: a port from
 * that range is handed out again to the next outgoing connection or port-0 listener of any
 * process, so between this probe and the caller's listen (or a server's restart on the same
 * port) a busy neighbour could take it. Outside the range, only another explicit choice can.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  if (below === null || below - LOWEST < 1000) return probe(0);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    try {
      return await probe(port);
    } catch {
      // Taken: try another.
    }
  }
  return probe(0);
}

/** The first port of the kernel's ephemeral range, or null where it cannot be read. */
function ephemeralLow(): number | null {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : null;
  } catch {
    return null;
  }
}

/** Listens on `port` of every IPv4 address (so a listener on any of them makes it fail) and gives it back. */
function probe(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => {
      const { port: taken } = server.address() as net.AddressInfo;
      server.close(() => resolve(taken));
    });
  });
}
