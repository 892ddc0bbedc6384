// The upload receiver of the scan benches, in its own process so its CPU is not the box's:
// PUT /<name> streams the body through MD5 and answers {md5,size}, as a storage endpoint that
// checks what it stored would. Protocol of bench/support/child.ts (ready, then {id, op}).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

if (!process.send) throw new Error('receiver-process.ts must be forked with an IPC channel');
let bytes = 0,
  files = 0;
const server = createServer((req, res) => {
  if (req.method !== 'PUT') {
    res.writeHead(405).end();
    return;
  }
  const h = createHash('md5');
  let size = 0;
  req.on('data', (c: Buffer) => {
    h.update(c);
    size += c.length;
  });
  req.on('end', () => {
    bytes += size;
    files++;
    const body = JSON.stringify({ md5: h.digest('hex'), size });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  process.send!({ ready: true, url: `http://127.0.0.1:${port}` });
});
process.on('message', (m: { id: number; op: string }) => {
  if (m.op === 'stats') process.send!({ id: m.id, result: { bytes, files, cpu: process.cpuUsage() } });
  else if (m.op === 'close') {
    process.send!({ id: m.id, result: true });
    server.close(() => process.exit(0));
  }
});
