import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

/**
 * The baseline of the benchmark: a bare node:http server (node:https with BENCH_TLS_CERT and
 * BENCH_TLS_KEY) that reads the body and answers 202, with none of signalgate's work. Prints
 * its URL as one JSON line.
 */
const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end(`{"status":"queued","bytes":${body.length}}`);
  });
};
const certFile = process.env.BENCH_TLS_CERT;
const keyFile = process.env.BENCH_TLS_KEY;
const tls = certFile !== undefined && keyFile !== undefined;
const server = tls
  ? https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, handler)
  : http.createServer(handler);
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
