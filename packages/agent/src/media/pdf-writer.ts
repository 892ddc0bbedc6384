// Writes a PDF item page by page to the box's disk, with memory bounded by one page, computing
// the MD5 and size of the file as it goes (the item's check_sum and file_size, docs/api.md "Scan item").
//
// A small writer of our own, for JPEG pages only (ISO 32000-1: §7.5 file structure, §8.9.5
// image XObjects with /DCTDecode, §7.7.3 page tree). Each page's JPEG goes into the file as it
// is, straight from the scanner's buffer: no copy, no decode. Why not a library:
//  - pdf-lib (which the agent has) builds the whole document in memory and serialises it at the
//    end: a 200-page 600 dpi stack (600+ MB of JPEG) would be in memory at once;
//  - pdfkit streams and embeds JPEGs unchanged, but it pushes into its stream without
//    backpressure (a consumer must drain it after every page: 700 MB peak for 200 pages of
//    600 dpi without that, 120 MB with it), copies every JPEG twice on the way (its own buffer,
//    then the stream's), and loading it costs 14-24 MB of RSS (its font machinery). Measured
//    in the box-side bench (bench/scan), that put the 600 dpi stack above the box's 150 MB;
//    this writer keeps it under (docs/scanning.md, "On the box").
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { jpegInfo } from './jpeg-info.ts';

export interface PdfPageSpec {
  /** Pixels of the JPEG (checked against its frame header). */
  width: number;
  height: number;
  /** Scan resolution: the page is width/dpi × height/dpi inches. */
  dpi: number;
}

/** Encrypts the file as it is written (protocol e2e.ts FileSealer): the header goes first,
 *  every byte of the PDF through update(), final() last. */
export interface ItemSealer {
  readonly header: Buffer;
  update(chunk: Buffer): Buffer;
  final(): Buffer;
}

export interface PdfItemFile {
  path: string;
  /** Bytes of the file (of the encrypted file, when sealed). */
  size: number;
  /** MD5 of the file, lower-case hex. */
  md5: string;
  pages: number;
}

/** Bytes a page adds to the file besides its JPEG (three objects and their xref entries). */
export const PDF_PAGE_OVERHEAD = 1024;
/** Bytes of the header, catalogue, page tree (without its kids), info and trailer. */
export const PDF_FILE_OVERHEAD = 4096;

/** Bytes of plaintext per cipher call when sealing (see write()). */
const SEAL_SLICE = 64 * 1024;

const CATALOG = 1;
const PAGES = 2;

/** A number as PDF writes it: at most 4 decimals, no exponent. */
function num(n: number): string {
  return Number(n.toFixed(4)).toString();
}

function pdfDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `D:${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
}

export class PdfItemWriter {
  readonly path: string;
  private readonly fh: FileHandle;
  private readonly hash: Hash = createHash('md5');
  /** File offset of each object, by object number (0 unused). */
  private readonly offsets: number[] = [0, 0, 0];
  private readonly kids: number[] = [];
  /** Bytes of the PDF so far (its offsets); the file has the sealer's header and tag besides. */
  private written = 0;
  private fileBytes = 0;
  private readonly sealer: ItemSealer | undefined;
  private state: 'open' | 'finished' | 'failed' | 'aborted' = 'open';
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(path: string, fh: FileHandle, sealer: ItemSealer | undefined) {
    this.path = path;
    this.fh = fh;
    this.sealer = sealer;
  }

  /** Creates (or truncates) the file at `path` and writes the PDF header and catalogue; with a
   *  sealer the file is the PDF's encryption (docs/encryption.md) and never holds plaintext. */
  static async create(path: string, sealer?: ItemSealer): Promise<PdfItemWriter> {
    const fh = await open(path, 'w', 0o600);
    const w = new PdfItemWriter(path, fh, sealer);
    try {
      if (sealer) await w.writeRaw(sealer.header);
      // The second line's high bytes mark the file as binary (§7.5.2).
      const head = Buffer.concat([
        Buffer.from('%PDF-1.4\n%'),
        Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]),
        Buffer.from('\n'),
      ]);
      await w.write([head]);
      w.offsets[CATALOG] = w.written;
      await w.write([Buffer.from(`${CATALOG} 0 obj\n<< /Type /Catalog /Pages ${PAGES} 0 R >>\nendobj\n`)]);
    } catch (e) {
      await w.abort();
      throw e;
    }
    return w;
  }

  /** Pages added so far. */
  get pages(): number {
    return this.kids.length;
  }
  /** Bytes written to the file so far (all of every added page: nothing waits in memory). */
  get bytesWritten(): number {
    return this.written;
  }

  /**
   * Adds one page: the JPEG as it is, filling a page of width/dpi × height/dpi inches. Throws a
   * TypeError, and adds nothing, for bytes that are not a JPEG a PDF can hold (8-bit, greyscale
   * or colour). Calls are queued: the next page starts when the previous one is on disk.
   */
  add(jpeg: Buffer, page: PdfPageSpec): Promise<void> {
    return this.serial(async () => {
      this.assertOpen();
      const info = jpegInfo(jpeg);
      if (!info) throw new TypeError('page is not a JPEG (no frame header found)');
      if (info.precision !== 8 || (info.components !== 1 && info.components !== 3)) {
        throw new TypeError(
          `a PDF item page must be an 8-bit greyscale or colour JPEG, not ${info.precision}-bit with ${info.components} components`,
        );
      }
      if (info.width !== page.width || info.height !== page.height) {
        throw new TypeError(`page is ${page.width}×${page.height} but its JPEG is ${info.width}×${info.height}`);
      }
      if (!(page.dpi > 0)) throw new TypeError(`page dpi must be positive, not ${page.dpi}`);
      const w = num((page.width * 72) / page.dpi);
      const h = num((page.height * 72) / page.dpi);
      const image = this.offsets.length,
        content = image + 1,
        pageObj = image + 2;
      const imageHead = Buffer.from(
        `${image} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${info.width} /Height ${info.height} ` +
          `/ColorSpace /${info.components === 1 ? 'DeviceGray' : 'DeviceRGB'} /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
      );
      const draw = `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q\n`;
      const rest = `\nendstream\nendobj\n`;
      const contentObj = `${content} 0 obj\n<< /Length ${draw.length} >>\nstream\n${draw}endstream\nendobj\n`;
      const pageText = `${pageObj} 0 obj\n<< /Type /Page /Parent ${PAGES} 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 ${image} 0 R >> >> /Contents ${content} 0 R >>\nendobj\n`;
      const start = this.written;
      const tail = Buffer.from(rest + contentObj + pageText);
      try {
        await this.write([imageHead, jpeg, tail]);
      } catch (e) {
        this.state = 'failed';
        throw e;
      }
      const contentAt = start + imageHead.length + jpeg.length + rest.length;
      this.offsets.push(start, contentAt, contentAt + contentObj.length);
      this.kids.push(pageObj);
    });
  }

  /** Writes the page tree, the info dictionary and the trailer, flushes the file to the disk
   *  and closes it. */
  finish(): Promise<PdfItemFile> {
    return this.serial(async () => {
      this.assertOpen();
      if (this.kids.length === 0) throw new Error('a PDF item needs at least one page');
      try {
        const parts: string[] = [];
        let at = this.written;
        const obj = (n: number, body: string) => {
          this.offsets[n] = at;
          const s = `${n} 0 obj\n${body}\nendobj\n`;
          parts.push(s);
          at += s.length;
        };
        obj(
          PAGES,
          `<< /Type /Pages /Kids [${this.kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${this.kids.length} >>`,
        );
        const infoObj = this.offsets.length;
        obj(infoObj, `<< /Producer (boxhub agent) /CreationDate (${pdfDate(new Date())}) >>`);
        const id = randomBytes(16).toString('hex');
        // Cross-reference table: one 20-byte entry per object, in object number order (§7.5.4).
        let xref = `xref\n0 ${this.offsets.length}\n0000000000 65535 f \n`;
        for (let n = 1; n < this.offsets.length; n++) xref += `${String(this.offsets[n]).padStart(10, '0')} 00000 n \n`;
        parts.push(
          xref,
          `trailer\n<< /Size ${this.offsets.length} /Root ${CATALOG} 0 R /Info ${infoObj} 0 R /ID [<${id}> <${id}>] >>\nstartxref\n${at}\n%%EOF\n`,
        );
        await this.write([Buffer.from(parts.join(''))]);
        if (this.sealer) await this.writeRaw(this.sealer.final());
        await this.fh.datasync();
        await this.fh.close();
        this.state = 'finished';
        return { path: this.path, size: this.fileBytes, md5: this.hash.digest('hex'), pages: this.kids.length };
      } catch (e) {
        this.state = 'failed';
        throw e;
      }
    });
  }

  /** Stops and deletes the file. Safe at any time, also after a failure or twice; after
   *  finish() the file is the caller's and stays. */
  async abort(): Promise<void> {
    if (this.state === 'aborted' || this.state === 'finished') return;
    this.state = 'aborted';
    await this.tail.catch(() => undefined);
    await this.fh.close().catch(() => undefined);
    await unlink(this.path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const p = this.tail.then(work, work);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new Error(`PDF item ${this.path} is ${this.state}`);
  }

  private async write(chunks: Buffer[]): Promise<void> {
    if (!this.sealer) {
      for (const c of chunks) {
        await this.writeRaw(c);
        this.written += c.length;
      }
      return;
    }
    // Sealed: the page goes through the cipher in slices of SEAL_SLICE and reaches the disk in
    // one writev. Ciphertext the size of a whole page (~1 MB at 200 dpi colour) is memory the
    // allocator maps and unmaps page by page, and its page faults and unmapping cost as much
    // as AES itself; slices under glibc's 128 KiB mmap threshold come from and go back to the
    // heap (assembling 200 dpi colour pages of 922 KB: +0.8 ms a page for sealing before, +0.5 after).
    const out: Buffer[] = [];
    for (const c of chunks) {
      for (let at = 0; at < c.length; at += SEAL_SLICE)
        out.push(this.sealer.update(c.subarray(at, Math.min(c.length, at + SEAL_SLICE))));
      this.written += c.length;
    }
    await this.writeRawv(out);
  }

  /** writeRaw() for several buffers in as few system calls as the kernel allows. */
  private async writeRawv(bufs: Buffer[]): Promise<void> {
    let rest = bufs.filter((b) => b.length > 0);
    for (const b of rest) {
      this.hash.update(b);
      this.fileBytes += b.length;
    }
    while (rest.length > 0) {
      let { bytesWritten } = await this.fh.writev(rest);
      // A short write: drop what went out and go on with the rest.
      while (rest.length > 0 && bytesWritten >= rest[0]!.length) {
        bytesWritten -= rest[0]!.length;
        rest = rest.slice(1);
      }
      if (bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
    }
  }

  /** Bytes as they go into the file (encrypted when sealed): what the size and MD5 are of. */
  private async writeRaw(c: Buffer): Promise<void> {
    let off = 0;
    while (off < c.length) {
      const { bytesWritten } = await this.fh.write(c, off, c.length - off);
      off += bytesWritten;
    }
    this.hash.update(c);
    this.fileBytes += c.length;
  }
}
