// Naming a queue of the box's CUPS (docs/printers-and-scanners.md, "CUPS queues"): `cups:NAME`
// is the queue NAME of the local scheduler, `ipp://localhost:631/printers/NAME` (or
// /classes/NAME) the same queue spelt out. Pure.

/** Where the local scheduler listens: $CUPS_SERVER when it names host:port (as every CUPS
 *  client reads it), else localhost:631. A socket path in CUPS_SERVER is not IPP over TCP. */
export function cupsServer(env: NodeJS.ProcessEnv = process.env): string {
  const s = env.CUPS_SERVER?.trim();
  if (s && !s.startsWith('/')) return s.includes(':') ? s : `${s}:631`;
  return 'localhost:631';
}

/** `cups:NAME` → ipp://SERVER/printers/NAME. Throws for an empty or unsafe name. */
export function cupsQueueUri(spec: string, env: NodeJS.ProcessEnv = process.env): string {
  const name = spec.slice('cups:'.length);
  // CUPS queue names: printable, no space, '/', '#' or '?' (lpadmin(8)).
  if (!name || !/^[^\s/#?\\'"]+$/.test(name) || name.length > 127)
    throw new TypeError(`not a CUPS queue name: '${name}' (use cups:NAME, NAME as lpstat -p lists it)`);
  return `ipp://${cupsServer(env)}/printers/${encodeURIComponent(name)}`;
}

/** A CUPS queue's URI: ipp(s)://host[:port]/printers/NAME or /classes/NAME. */
export function isCupsQueueUri(uri: string): boolean {
  try {
    const u = new URL(uri);
    return (u.protocol === 'ipp:' || u.protocol === 'ipps:') && /^\/(?:printers|classes)\/[^/]+$/.test(u.pathname);
  } catch {
    return false;
  }
}

/** The queue's name from its URI. */
export function queueName(uri: string): string {
  return decodeURIComponent(new URL(uri).pathname.split('/')[2] ?? '');
}

/**
 * CUPS names a driverless queue's model after its PPD: "<make-and-model> - IPP Everywhere"
 * (lpadmin -m everywhere), or ", driverless, cups-filters x.y" / ", IPP Everywhere" (the
 * driverless helper of cups-filters). Those tails say how CUPS drives it, not what it is.
 */
export function cleanMakeAndModel(mm: string): string {
  return mm
    .replace(/\s*-\s*IPP Everywhere\s*$/i, '')
    .replace(/,\s*(?:driverless|IPP Everywhere)(?:,\s*cups-filters\s*[\d.]+)?\s*$/i, '')
    .trim();
}
